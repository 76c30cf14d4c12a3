import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import sweetrl_gym  # noqa: F401
from sweetrl_gym.simulators import SimulatorError


@pytest.fixture
def env(small_tasks):
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, render_mode="ansi")
    yield env
    env.close()


def answer(code: str) -> str:
    return f"Thanks!\nI WANT TO ANSWER:\n```python\n{code}```"


def test_registered_ids_pass_check_env(small_tasks):
    for env_id in ("ColBench-Backend-v0",):
        check_env(gym.make(env_id, tasks=small_tasks).unwrapped)


def test_reset_gives_the_request_and_training_time_information(env, small_tasks):
    obs, info = env.reset(options={"task_index": 3})
    task = small_tasks[3]
    assert obs == task.problem_description
    assert info["messages"] == [{"role": "user", "content": obs}]
    assert info["turn"] == 0 and info["task_id"] == task.task_id
    ref = info["reference"]
    assert ref["ground_truth"] == task.ground_truth and ref["test_cases"] == task.test_cases
    assert [f["answer"] for f in ref["facts"]] == [f.answer for f in task.facts]


def test_task_drawn_from_np_random_is_reproducible(env):
    ids = [env.reset(seed=s)[1]["task_id"] for s in (5, 6, 5)]
    assert ids[0] == ids[2]
    _, info = env.reset(options={"task_id": "t7"})
    assert info["task_id"] == "t7"


def test_dialogue_then_correct_answer(env, small_tasks):
    obs, info = env.reset(options={"task_index": 0})
    reply, reward, terminated, truncated, info = env.step("What should the function be called?")
    assert "function should be called" in reply and reward == 0.0
    assert not terminated and not truncated and info["turn"] == 1
    assert info["messages"][-2:] == [
        {"role": "assistant", "content": "What should the function be called?"},
        {"role": "user", "content": reply},
    ]
    obs, reward, terminated, truncated, info = env.step(answer(small_tasks[0].ground_truth))
    assert terminated and not truncated and obs == ""
    assert reward == 1.0 and info["success"] is True
    assert info["tests_passed"] == info["tests_total"] == len(small_tasks[0].test_cases)
    assert info["answer"].startswith("```python") and info["turn_limit_reached"] is False


def test_wrong_answer_scores_fraction(env, small_tasks):
    env.reset(options={"task_index": 1})
    _, reward, terminated, _, info = env.step("I WANT TO ANSWER: def nothing(): pass")
    assert terminated and reward == 0.0 and not info["success"]
    assert info["test_report"]["results"][0]["status"] in ("raised", "wrong_output")


def test_output_marker_semantics(small_tasks):
    seen = []

    class Recorder:
        name = "recorder"

        def reply(self, task, messages):
            seen.append(messages[-1]["content"])
            return "ok"

    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, simulator=Recorder())
    env.reset(options={"task_index": 0})
    _, _, terminated, _, info = env.step("THOUGHT: I WANT TO ANSWER: not yet\nOUTPUT: Is it big?")
    assert not terminated and seen == ["Is it big?"]
    assert info["messages"][1]["content"].startswith("THOUGHT:")  # the action as sent
    code = small_tasks[0].ground_truth
    _, reward, terminated, _, _ = env.step(f"thinking... OUTPUT: I WANT TO ANSWER:\n{code}")
    assert terminated and reward == 1.0


def test_turn_limit_takes_last_message_as_answer(small_tasks):
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=3)
    env.reset(options={"task_index": 2})
    for _ in range(2):
        _, _, terminated, _, _ = env.step("Any rounding?")
        assert not terminated
    _, reward, terminated, truncated, info = env.step(small_tasks[2].ground_truth)
    assert terminated and not truncated and info["turn_limit_reached"]
    assert reward == 1.0 and info["turn"] == 3


def test_turn_notice_tells_the_agent_how_many_messages_are_left(small_tasks):
    quiet = gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=3)
    told = gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=3, turn_notice=True)
    for env in (quiet, told):
        env.reset(options={"task_index": 2})
    plain = quiet.step("Any rounding?")[0]
    first = told.step("Any rounding?")[0]
    assert first == plain + " (2 messages left.)"  # the human's reply, then the notice
    second, _, _, _, info = told.step("Anything else?")
    assert second.endswith("(One message left: your next message is your final answer.)")
    assert info["messages"][-1]["content"] == second  # the agent's context holds it too
    _, reward, terminated, _, info = told.step(small_tasks[2].ground_truth)
    assert terminated and info["turn_limit_reached"] and reward == 1.0


def test_default_limit_is_ten_turns(env):
    env.reset(options={"task_index": 0})
    for turn in range(1, 11):
        _, _, terminated, _, info = env.step("hello?")
        assert terminated == (turn == 10)
    assert info["turn_limit_reached"] and info["tests_passed"] == 0


def test_replies_are_cut_to_400_characters(small_tasks):
    class Chatty:
        name = "chatty"

        def reply(self, task, messages):
            return "x" * 1000

    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, simulator=Chatty())
    env.reset(options={"task_index": 0})
    assert len(env.step("hi?")[0]) == 400


def test_bad_input_gets_clear_errors(small_tasks):
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks).unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step("hello")
    env.reset(options={"task_index": 0})
    with pytest.raises(TypeError, match="action must be a str"):
        env.step(42)
    with pytest.raises(KeyError, match="unknown task_id"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(IndexError, match="out of range"):
        env.reset(options={"task_index": 999})
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"task": 1})
    with pytest.raises(ValueError, match="not both"):
        env.reset(options={"task_index": 0, "task_id": "t0"})
    env.reset(options={"task_index": 0})
    env.step("I WANT TO ANSWER: pass")
    with pytest.raises(RuntimeError, match="episode has ended"):
        env.step("more?")
    with pytest.raises(ValueError, match="split"):
        gym.make("ColBench-Backend-v0", split="validation")
    with pytest.raises(ValueError, match="max_turns"):
        gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=0)
    with pytest.raises(TypeError, match="simulator"):
        gym.make("ColBench-Backend-v0", tasks=small_tasks, simulator=object())


def test_simulator_returning_non_text_is_an_error(small_tasks):
    class Broken:
        name = "broken"

        def reply(self, task, messages):
            return None

    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, simulator=Broken())
    env.reset(options={"task_index": 0})
    with pytest.raises(SimulatorError, match="returned NoneType"):
        env.step("hi?")


def test_render_ansi_shows_the_dialogue(env):
    env.reset(options={"task_index": 0})
    env.step("What should it be called?")
    text = env.render()
    assert text.startswith("[HUMAN] ") and "[AGENT] What should it be called?" in text


def test_official_jsonl_end_to_end(tmp_path):
    record = {
        "problem_description": "I want a function that greets people.",
        "ground_truth": "def greet(name, excited=False):\n    return f'Hi {name}' + ('!' if excited else '.')\n",
        "test_cases": {"a": "greet('Ann')", "b": "greet('Bo', True)"},
    }
    path = tmp_path / "official.jsonl"
    path.write_text(json.dumps(record) + "\n")
    env = gym.make("ColBench-Backend-v0", tasks=str(path), split="test")
    obs, info = env.reset(seed=0)
    assert obs == record["problem_description"] and info["reference"]["facts"] == []
    reply, *_ = env.step("What should the function be called and what parameters does it take?")
    assert "`greet`" in reply and "excited=False" in reply
    _, reward, _, _, info = env.step("I WANT TO ANSWER:\n" + record["ground_truth"])
    assert reward == 1.0 and info["success"]


def test_scoring_reaches_the_sandbox(tmp_path):
    record = {
        "problem_description": "Return nothing.",
        "ground_truth": "def f():\n    return None\n",
        "test_cases": {"a": "f()"},
    }
    path = tmp_path / "none.jsonl"
    path.write_text(json.dumps(record) + "\n")
    for scoring, expected in (("ours", 1.0), ("official", 0.0)):
        env = gym.make("ColBench-Backend-v0", tasks=str(path), scoring=scoring)
        env.reset(seed=0)
        _, reward, _, _, info = env.step("I WANT TO ANSWER:\ndef f(): return None")
        assert reward == expected and info["scoring"] == scoring
