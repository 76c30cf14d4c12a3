import gymnasium as gym
import pytest
import torch

import sweetrl_gym  # noqa: F401
from agents import Agent
from agents.prompts import BACKEND_AGENT_PROMPT
from agents.transformers_agent import TransformersAgent
from tests.tiny_lm import make_tiny_lm

WORDS = ["hi", "what is the name?", "def f(x): return 1", "x" * 40, "Round it.", "ok", "a b c d"]


def conversation(i):
    chat = [{"role": "user", "content": WORDS[i % len(WORDS)] * (1 + i % 3)}]
    if i % 2:
        chat += [{"role": "assistant", "content": "Which rule?"}, {"role": "user", "content": "3"}]
    return chat


@pytest.fixture(scope="module")
def tiny():
    return make_tiny_lm(seed=0)


def make_agent(tiny, **kwargs):
    model, tokenizer = tiny
    kwargs.setdefault("max_new_tokens", 8)
    return TransformersAgent(model, tokenizer, **kwargs)


def test_prompts_contain_system_prompt_and_every_message(tiny):
    agent = make_agent(tiny, temperature=0)
    assert isinstance(agent, Agent) and agent.name == "tiny-lm-seed0"
    batch = [conversation(1), conversation(2)]
    replies = agent.act(batch)
    assert len(replies) == 2 and all(isinstance(r, str) for r in replies)
    assert agent.last_prompts == agent.format_prompts(batch)
    for prompt, chat in zip(agent.last_prompts, batch):
        assert prompt.startswith(f"<|im_start|>system\n{BACKEND_AGENT_PROMPT}<|im_end|>")
        for message in chat:
            assert f"<|im_start|>{message['role']}\n{message['content']}<|im_end|>" in prompt
        assert prompt.endswith("<|im_start|>assistant\n")


def test_no_system_prompt_and_own_system_message_kept(tiny):
    agent = make_agent(tiny, system_prompt=None)
    assert "system" not in agent.format_prompts([conversation(0)])[0]
    own = [{"role": "system", "content": "Be brief."}, *conversation(0)]
    prompt = make_agent(tiny).format_prompts([own])[0]
    assert "Be brief." in prompt and BACKEND_AGENT_PROMPT not in prompt


def test_system_prompt_folded_when_template_rejects_system_role(tiny):
    model, tokenizer = make_tiny_lm()
    tokenizer.chat_template = (
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
        "{% endif %}" + tokenizer.chat_template
    )
    agent = TransformersAgent(model, tokenizer, system_prompt="SYSTEM TEXT", max_new_tokens=2)
    prompt = agent.format_prompts([conversation(0)])[0]
    assert "<|im_start|>user\nSYSTEM TEXT\n\n" in prompt and "system\n" not in prompt
    assert isinstance(agent.act([conversation(1)])[0], str)


def test_tokenizer_without_chat_template_is_a_clear_error():
    model, tokenizer = make_tiny_lm()
    tokenizer.chat_template = None
    with pytest.raises(ValueError, match="chat template"):
        TransformersAgent(model, tokenizer)


def test_batched_left_padded_greedy_equals_one_at_a_time_in_order(tiny):
    agent = make_agent(tiny, temperature=0, batch_size=3, max_new_tokens=10)
    batch = [conversation(i) for i in range(7)]  # mixed lengths, 3 chunks
    lengths = {len(p) for p in agent.format_prompts(batch)}
    assert len(lengths) > 3
    batched = agent.act(batch)
    single = [agent.act([chat])[0] for chat in batch]
    assert batched == single
    assert len(set(batched)) > 2  # replies differ, so a reordering would show


def test_generation_does_not_add_special_tokens_twice(tiny, monkeypatch):
    model, tokenizer = tiny
    agent = make_agent(tiny, temperature=0, max_new_tokens=2)
    seen = []
    original = model.generate

    def spy(**kwargs):
        seen.append(kwargs["input_ids"][0].tolist())
        return original(**kwargs)

    monkeypatch.setattr(model, "generate", spy)
    agent.act([conversation(0)])
    expected = tokenizer(agent.last_prompts[0], add_special_tokens=False)["input_ids"]
    assert seen == [expected] and expected[0] == tokenizer.convert_tokens_to_ids("<|im_start|>")


def test_seeded_sampling_is_reproducible_and_leaves_global_rng(tiny):
    batch = [conversation(i) for i in range(3)]
    first, second = make_agent(tiny, seed=7), make_agent(tiny, seed=7)
    state = torch.random.get_rng_state()
    runs = [first.act(batch), first.act(batch)]
    assert torch.equal(state, torch.random.get_rng_state())
    assert [second.act(batch), second.act(batch)] == runs
    assert runs[0] != runs[1]  # a new call draws new samples
    assert make_agent(tiny, seed=8).act(batch) != runs[0]


def test_generate_n_completions(tiny):
    agent = make_agent(tiny, seed=0, max_new_tokens=6)
    prompts = agent.format_prompts([conversation(0), conversation(3)])
    out = agent.generate(prompts, n=3)
    assert [len(c) for c in out] == [3, 3]
    assert all(isinstance(t, str) for c in out for t in c)
    assert len(set(out[0])) > 1  # sampled at temperature 1
    greedy = agent.generate(prompts, n=2, temperature=0)
    assert greedy[0][0] == greedy[0][1] != greedy[1][0]
    assert agent.generate([]) == []


def test_max_new_tokens_bounds_the_reply(tiny, monkeypatch):
    model, _ = tiny
    new_tokens = []
    original = model.generate

    def spy(**kwargs):
        out = original(**kwargs)
        new_tokens.append(out.shape[1] - kwargs["input_ids"].shape[1])
        return out

    monkeypatch.setattr(model, "generate", spy)
    agent = make_agent(tiny, max_new_tokens=3, seed=1, batch_size=2)
    agent.act([conversation(i) for i in range(4)])
    agent.generate(agent.last_prompts[:1], max_new_tokens=5, temperature=0)
    assert new_tokens[:2] == [3, 3] and 1 <= new_tokens[2] <= 5


def test_bad_input_errors(tiny):
    agent = make_agent(tiny)
    assert agent.act([]) == []
    with pytest.raises(ValueError, match="conversation 1"):
        agent.act([conversation(0), "hello"])
    with pytest.raises(ValueError, match="conversation 0, message 0"):
        agent.act([[{"content": "no role"}]])
    with pytest.raises(ValueError, match="conversation 0, message 1"):
        agent.act([[{"role": "user", "content": "x"}, {"role": "assistant", "content": None}]])
    with pytest.raises(ValueError, match="prompt 0"):
        agent.generate([""])
    with pytest.raises(ValueError, match="list of prompt strings"):
        agent.generate("one prompt")
    with pytest.raises(ValueError, match="n must"):
        agent.generate(["x"], n=0)
    for bad in ({"temperature": -1}, {"top_p": 0}, {"max_new_tokens": 0}, {"batch_size": 0}):
        with pytest.raises(ValueError):
            make_agent(tiny, **bad)


def test_restores_training_mode(tiny):
    model, _ = tiny
    agent = make_agent(tiny, max_new_tokens=2)
    model.train()
    try:
        agent.act([conversation(0)])
        assert model.training
    finally:
        model.eval()


def test_plays_a_full_backend_episode(tiny, small_tasks):
    agent = make_agent(tiny, max_new_tokens=12, seed=0)
    env = gym.make("ColBench-Backend-v0", tasks=small_tasks, max_turns=3)
    _, info = env.reset(options={"task_index": 0})
    for _ in range(3):
        action = agent.act([info["messages"]])[0]
        assert agent.last_prompts[0].endswith("<|im_start|>assistant\n")
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert terminated and 0.0 <= reward <= 1.0 and info["turn"] <= 3
    assert info["messages"][-1]["content"] == action
