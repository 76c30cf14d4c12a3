import subprocess
import sys

import gymnasium as gym
import pytest

import sweetrl_gym  # noqa: F401
from sweetrl_gym.simulators import SimulatorError
from sweetrl_gym.simulators.prompts import HUMAN_SIMULATOR_PROMPT
from sweetrl_gym.simulators.transformers_simulator import TransformersSimulator
from tests.tiny_lm import make_tiny_lm


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_lm(seed=0)


def dialogue(question):
    return [
        {"role": "user", "content": "I need a function for my shop."},
        {"role": "assistant", "content": question},
    ]


def test_replies_are_deterministic_strings(tiny, small_tasks):
    simulator = TransformersSimulator(*tiny, max_new_tokens=10)
    assert simulator.name.startswith("transformers:") and "max_new_tokens=10" in simulator.name
    first = simulator.reply(small_tasks[0], dialogue("What is the function called?"))
    assert isinstance(first, str) and first
    assert simulator.reply(small_tasks[0], dialogue("What is the function called?")) == first
    again = TransformersSimulator(*make_tiny_lm(seed=0), max_new_tokens=10)
    assert again.reply(small_tasks[0], dialogue("What is the function called?")) == first
    others = {simulator.reply(task, dialogue(q)) for task in small_tasks[:3] for q in ("Hi?", "x")}
    assert len(others) > 1  # the reply depends on the task and the question


def test_the_model_sees_the_hidden_information_and_the_dialogue(tiny, small_tasks, monkeypatch):
    model, tokenizer = tiny
    simulator = TransformersSimulator(model, tokenizer, max_new_tokens=2)
    prompts = []
    original = model.generate

    def spy(**kwargs):
        prompts.append(tokenizer.decode(kwargs["input_ids"][0]))
        assert kwargs["do_sample"] is False
        return original(**kwargs)

    monkeypatch.setattr(model, "generate", spy)
    simulator.reply(small_tasks[0], dialogue("Which rounding?"))
    (prompt,) = prompts
    assert small_tasks[0].ground_truth in prompt
    assert "<|im_start|>user\nWhich rounding?<|im_end|>" in prompt  # roles swapped
    assert prompt.endswith("<|im_start|>assistant\n")


def test_name_has_model_and_prompt_hash(tiny):
    base = TransformersSimulator(*tiny)
    other = TransformersSimulator(*tiny, prompt=HUMAN_SIMULATOR_PROMPT + "Be polite.\n")
    assert "tiny-lm-seed0" in base.name and base.name != other.name
    assert base.name == TransformersSimulator(*tiny).name
    with pytest.raises(ValueError, match="hidden_information"):
        TransformersSimulator(*tiny, prompt="no field")


def test_the_official_format_is_one_user_message_after_a_generic_system_one(
    tiny, small_tasks, monkeypatch
):
    model, tokenizer = tiny
    template = "Asked: {problem_description}\nKnown: {hidden_information}\n{dialogue_history}"
    simulator = TransformersSimulator(
        model, tokenizer, prompt=template, prompt_format="official", max_new_tokens=2
    )
    prompts = []
    original = model.generate

    def spy(**kwargs):
        prompts.append(tokenizer.decode(kwargs["input_ids"][0]))
        return original(**kwargs)

    monkeypatch.setattr(model, "generate", spy)
    simulator.reply(small_tasks[0], dialogue("Which rounding?"))
    (prompt,) = prompts
    transcript = (
        "user:I need a function for my shop.\n\n\n\nassistant:Which rounding?\n\n\n\nagent:"
    )
    filled = template.format(
        problem_description=small_tasks[0].problem_description,
        hidden_information=small_tasks[0].ground_truth,
        dialogue_history=transcript,
    )
    assert "<|im_start|>system\nYou are a helpful assistant.<|im_end|>" in prompt
    assert f"<|im_start|>user\n{filled}<|im_end|>" in prompt
    default = TransformersSimulator(model, tokenizer, prompt=template, prompt_format="official")
    assert default.max_new_tokens == 4096 and "format=official" in default.name


def test_generation_errors_become_simulator_errors(tiny, small_tasks, monkeypatch):
    model, tokenizer = tiny
    simulator = TransformersSimulator(model, tokenizer)

    def broken(**kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(model, "generate", broken)
    with pytest.raises(SimulatorError, match="out of memory"):
        simulator.reply(small_tasks[0], dialogue("?"))


def test_plays_the_human_in_an_episode(tiny, small_tasks):
    simulator = TransformersSimulator(*tiny, max_new_tokens=12)
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, simulator=simulator, max_turns=3)
    obs, info = env.reset(options={"task_index": 1})
    for question in ("What is the name?", "Any threshold?"):
        obs, reward, terminated, _, info = env.step(question)
        assert not terminated and reward == 0.0
        assert obs == simulator.reply(small_tasks[1], info["messages"][:-1])
    _, reward, terminated, _, info = env.step("I WANT TO ANSWER: def f(): return 1")
    assert terminated and reward == 0.0 and info["turn"] == 3


def test_importing_sweetrl_gym_stays_light():
    code = (
        "import sys, sweetrl_gym.simulators.transformers_simulator; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
