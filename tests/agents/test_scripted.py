import io

import gymnasium as gym
import pytest

import sweetrl_gym  # noqa: F401
from agents import ImmediateAnswerAgent, OracleAgent, collect


def play(env, agent, index):
    """Play task ``index`` once; return the final reward and the episode's trajectory."""
    (trajectory,) = collect(env, agent, task_indices=[index], progress=False)
    return trajectory.reward, trajectory


def test_protocols(small_tasks):
    # Each acts on a real step as its protocol says (isinstance on a runtime-checkable
    # protocol would pass for any object with an ``act``). The plain agent: from the
    # conversation alone, and the rollout hands it no reference (it reads ``privileged``).
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks)
    _, info = env.reset(options={"task_index": 0})
    immediate = ImmediateAnswerAgent()
    assert not getattr(immediate, "privileged", False)
    (reply,) = immediate.act([info["messages"]])
    assert env.action_space.contains(reply)
    _, reward, terminated, _, _ = env.step(reply)
    assert terminated and reward < 1.0  # answered at once, with a stub
    # The privileged one: from the reference too (with one turn, the reference's code).
    oracle = OracleAgent(max_turns=1)
    assert oracle.privileged is True
    _, info = env.reset(options={"task_index": 1})
    (answer,) = oracle.act([info["messages"]], [info["reference"]])
    assert env.action_space.contains(answer)
    _, reward, terminated, _, _ = env.step(answer)
    assert terminated and reward == 1.0
    with pytest.raises(TypeError):  # it cannot act without the reference
        oracle.act([info["messages"]])


def test_oracle_reaches_every_fact_and_succeeds(small_tasks):
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks)
    for index, task in enumerate(small_tasks):
        reward, episode = play(env, OracleAgent(), index)
        assert reward == 1.0 and episode.success
        told = " ".join(m["content"] for m in episode.messages if m["role"] == "user")
        assert all(fact.answer in told for fact in task.facts)
        assert episode.num_turns == len(task.facts) + 1


def test_oracle_packs_questions_into_short_turn_limits(small_tasks):
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=3)
    reward, episode = play(env, OracleAgent(max_turns=3), 0)
    assert episode.num_turns == 3 and not episode.metadata["turn_limit_reached"] and reward == 1.0


def test_immediate_answer_uses_a_stated_signature_and_fails():
    agent = ImmediateAnswerAgent()
    reply = agent.act([[{"role": "user", "content": "Help. The function should be `f(a, b)`."}]])[0]
    assert reply.startswith("I WANT TO ANSWER:") and "def f(a, b):" in reply
    assert "def solution(*args):" in agent.act([[{"role": "user", "content": "Help me."}]])[0]


def test_random_agent_is_seeded_and_answers_by_the_last_turn(small_tasks):
    from agents import RandomAgent, collect

    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=4)
    runs = [
        collect(env, RandomAgent(0.3, max_turns=4, seed=s), 6, progress=False) for s in (1, 1, 2)
    ]
    assert runs[0] == runs[1] and runs[0] != runs[2]
    for trajectory in runs[0]:
        assert trajectory.turns[-1].action.startswith("I WANT TO ANSWER:")
        assert not trajectory.metadata["turn_limit_reached"]
        assert all(t.action.endswith("?") for t in trajectory.turns[:-1])
    assert (
        RandomAgent(answer_probability=1.0)
        .act([[{"role": "user", "content": "x"}]])[0]
        .startswith("I WANT TO ANSWER:")
    )
    with pytest.raises(ValueError, match="answer_probability"):
        RandomAgent(answer_probability=1.5)


def test_human_agent_plays_from_a_terminal(small_tasks):
    from agents import HumanAgent

    code = ["I WANT TO ANSWER:", "def f():", "    x = 1", "", "    return x", "", ""]
    typed = iter(["What about the", "name?", "", "", *code])
    screen = io.StringIO()
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks)
    _, episode = play(env, HumanAgent(input_fn=lambda prompt: next(typed), output=screen), 0)
    shown = screen.getvalue()
    assert small_tasks[0].problem_description in shown
    assert episode.messages[1]["content"] == "What about the\nname?"
    assert episode.messages[2]["content"] in shown  # the human's reply was shown
    assert shown.count(small_tasks[0].problem_description) == 1  # nothing shown twice
    # The code's blank line stays in it; two empty lines in a row end it.
    assert episode.answer.strip() == "def f():\n    x = 1\n\n    return x"
    assert episode.num_turns == 2


def test_human_agent_closed_terminal_is_a_clear_error():
    from agents import HumanAgent

    def closed(prompt):
        raise EOFError

    with pytest.raises(EOFError, match="terminal closed"):
        HumanAgent(input_fn=closed, output=io.StringIO()).act([[{"role": "user", "content": "x"}]])
