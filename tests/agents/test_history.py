"""How an agent reads its own past turns (``history``): as sent, or as the official agent."""

import pytest

from agents import collect
from agents.prompts import agent_history, official_content
from agents.transformers_agent import TransformersAgent
from benchmarks.harness.experiment_config import ConfigError, load_config
from benchmarks.harness.policies import build_policy
from tests.tiny_lm import make_tiny_lm

SAID = "THOUGHT: ask the name first.\nOUTPUT: What is the function called?"


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_lm(seed=0)


def chat():
    return [
        {"role": "user", "content": "Write a function."},
        {"role": "assistant", "content": SAID},
        {"role": "user", "content": "total_price."},
    ]


def test_content_is_the_text_between_the_first_and_second_output_unstripped():
    assert official_content(SAID) == " What is the function called?"
    assert official_content("a OUTPUT: b\nOUTPUT: c") == " b\n"
    assert official_content("no marker at all ") == "no marker at all "
    assert official_content(official_content("a OUTPUT: b OUTPUT: c")) == " b "
    read = agent_history(chat(), "content")
    assert [m["content"] for m in read] == [
        "Write a function.",
        " What is the function called?",
        "total_price.",
    ]
    assert agent_history(chat(), "raw") == chat()
    with pytest.raises(ValueError, match="history must be one of"):
        agent_history(chat(), "cleaned")


def test_the_agent_prompt_holds_its_past_turns_as_its_history_says(tiny):
    model, tokenizer = tiny
    raw = TransformersAgent(model, tokenizer, max_new_tokens=4)
    content = TransformersAgent(model, tokenizer, max_new_tokens=4, history="content")
    (raw_prompt,) = raw.format_prompts([chat()])
    (content_prompt,) = content.format_prompts([chat()])
    assert f"<|im_start|>assistant\n{SAID}<|im_end|>" in raw_prompt
    assert "<|im_start|>assistant\n What is the function called?<|im_end|>" in content_prompt
    assert "THOUGHT" not in content_prompt
    with pytest.raises(ValueError, match="history must be one of"):
        TransformersAgent(model, tokenizer, history="official")


class Scripted(TransformersAgent):
    """A TransformersAgent whose model always says the same thing (with a thought)."""

    def generate(self, prompts, **kwargs):
        return [[SAID] for _ in prompts]


def test_training_rows_read_the_history_the_agent_saw_at_act_time(tiny, small_tasks):
    model, tokenizer = tiny
    agent = Scripted(model, tokenizer, max_new_tokens=4, history="content")
    env_kwargs = {"tasks": small_tasks[:2], "max_turns": 3}
    buffer = collect("ColBench-Backend-v0", agent, 2, env_kwargs=env_kwargs, progress=False)
    turns = [turn for trajectory in buffer for turn in trajectory.turns]
    assert len(turns) == 6
    later = [turn for turn in turns if len(turn.messages) > 1]
    said = [[m["content"] for m in t.messages if m["role"] == "assistant"] for t in later]
    assert later and all(texts and set(texts) == {SAID} for texts in said)  # as sent
    for turn in later:
        assert "THOUGHT" not in turn.prompt  # what the agent read
        assert " What is the function called?<|im_end|>" in turn.prompt
    # A trainer formats a recorded turn with the policy (Algorithm.policy_prompts):
    # the same prompt the agent acted on.
    assert agent.format_prompts([t.messages for t in turns]) == [t.prompt for t in turns]


def test_policy_history_is_a_setting_and_the_paper_configs_read_content():
    agent = build_policy(load_config("smoke", ["policy.history='content'"]))
    assert agent.history == "content"
    assert build_policy(load_config("smoke")).history == "raw"
    for name in ("paper", "paper-1gpu", "paper-frontend"):
        assert load_config(name).policy.history == "content"
    with pytest.raises(ConfigError, match=r"policy\.history"):
        load_config("smoke", ["policy.history='cleaned'"])


def test_the_critic_reads_the_past_turns_as_the_policy_does(tiny):
    from algorithms.critic_inputs import critic_prompt
    from sweetrl_gym.trajectory import Turn

    model, tokenizer = tiny
    turn = Turn(messages=chat(), action="OUTPUT: And the discount?")
    for history, seen in (("raw", SAID), ("content", " What is the function called?")):
        policy = TransformersAgent(model, tokenizer, max_new_tokens=4, history=history)
        prompt = critic_prompt(policy, turn, {}, None)
        assert prompt == policy.format_prompts([turn.messages])[0]
        assert f"<|im_start|>assistant\n{seen}<|im_end|>" in prompt
