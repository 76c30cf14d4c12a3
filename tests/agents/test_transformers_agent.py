import gymnasium as gym
import pytest
import torch

import sweetrl_gym  # noqa: F401
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
    assert agent.name == "tiny-lm-seed0"
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


def test_samples_of_one_prompt_share_its_states(tiny):
    prompts = make_agent(tiny).format_prompts([conversation(i) for i in range(3)])
    one_by_one = make_agent(tiny, temperature=0, max_new_tokens=6)
    expected = [one_by_one.generate([p], temperature=0)[0][0] for p in prompts]
    agent = make_agent(tiny, temperature=0, max_new_tokens=6, batch_size=6)
    out = agent.generate(prompts, n=4)
    assert out == [[text] * 4 for text in expected]
    # Each prompt's states are computed once, whichever chunk its copies land in.
    prompt_tokens = agent.stats.prompt_tokens
    assert agent.stats.reused_tokens > 0.6 * prompt_tokens
    assert agent._prefix_cache is None  # nothing kept after the call


def test_max_new_tokens_bounds_the_reply(tiny, monkeypatch):
    model, _ = tiny
    new_tokens = []
    original = model.generate

    def spy(**kwargs):
        out = original(**kwargs)
        new_tokens.append(out.sequences.shape[1] - kwargs["input_ids"].shape[1])
        return out

    monkeypatch.setattr(model, "generate", spy)
    agent = make_agent(tiny, max_new_tokens=3, seed=1, batch_size=2)
    agent.act([conversation(i) for i in range(4)])
    agent.generate(agent.last_prompts[:1], max_new_tokens=5, temperature=0)
    assert new_tokens[:2] == [3, 3] and 1 <= new_tokens[2] <= 5


def test_bad_input_errors(tiny):
    agent = make_agent(tiny)
    assert agent.act([]) == []
    with pytest.raises(TypeError, match="conversation 1 must be a list"):
        agent.act([conversation(0), "hello"])
    with pytest.raises(ValueError, match="conversation 0: message 0 needs a string 'role'"):
        agent.act([[{"content": "no role"}]])
    with pytest.raises(ValueError, match=r"conversation 0: message 1 \(assistant\)"):
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


# --- speed machinery: prefix caching, rows leaving the batch, packed attention ---------------


def later_turns(batch, replies):
    return [
        [*chat, {"role": "assistant", "content": reply}, {"role": "user", "content": "And?"}]
        for chat, reply in zip(batch, replies)
    ]


def test_prefix_caching_reuses_states_and_changes_no_reply(tiny):
    plain = make_agent(tiny, temperature=0, batch_size=3, max_new_tokens=12)
    cached = make_agent(tiny, temperature=0, batch_size=3, max_new_tokens=12)
    first = [conversation(i) for i in range(7)]
    expected = [plain.act(first)]
    expected.append(plain.act(later_turns(first, expected[0])))
    with cached.prefix_caching() as cache:
        got = [cached.act(first)]
        reused, prompts = cached.stats.reused_tokens, cached.stats.prompt_tokens
        got.append(cached.act(later_turns(first, got[0])))
        assert len(cache) > 0 and cache.num_tokens > 0
    assert got == expected
    # Later chunks of the first call reuse the shared system prompt; each prompt of the
    # second call starts with a whole first turn (prompt and reply) kept by the first.
    assert reused > 0
    assert cached.stats.reused_tokens - reused > 0.8 * (cached.stats.prompt_tokens - prompts)
    assert cached._prefix_cache is None  # dropped on leaving the block
    assert plain.stats.reused_tokens == 0
    assert plain.stats.generated_tokens == cached.stats.generated_tokens > 0


def test_prefix_cache_empties_when_the_weights_change():
    model, tokenizer = make_tiny_lm(seed=1)
    agent = TransformersAgent(model, tokenizer, temperature=0, max_new_tokens=6)
    batch = [conversation(0), conversation(2)]
    with agent.prefix_caching() as cache:
        agent.act(batch)
        assert len(cache) > 0
        with torch.no_grad():
            model.lm_head.weight.mul_(-1.0)  # in place, as an optimizer step
        reused = agent.stats.reused_tokens
        after = agent.act(batch)
        # Only what the call shares within itself, as the first did: nothing of the
        # old weights' states (with them, every prompt but its last token is reused).
        assert agent.stats.reused_tokens - reused == reused
    assert after == TransformersAgent(model, tokenizer, temperature=0, max_new_tokens=6).act(batch)


def test_seeded_sampling_with_prefix_caching_is_reproducible(tiny):
    batch = [conversation(i) for i in range(4)]
    runs = []
    for _ in range(2):
        agent = make_agent(tiny, seed=3, batch_size=2, max_new_tokens=10)
        with agent.prefix_caching():
            replies = agent.act(batch)
            runs.append([replies, agent.act(later_turns(batch, replies))])
    assert runs[0] == runs[1]


def test_finished_rows_leave_the_batch_without_changing_replies(tiny, monkeypatch):
    from sweetrl_gym.lm import generation

    model, tokenizer = tiny
    agent = make_agent(tiny, temperature=0, batch_size=7, max_new_tokens=20)
    batch = [conversation(i) for i in range(7)]
    alone = [agent.act([chat])[0] for chat in batch]
    # End a reply at the token greedy decoding picks most: replies then end at different
    # lengths, and rows leave the batch at several segment boundaries.
    ids = [tokenizer(reply, add_special_tokens=False)["input_ids"] for reply in alone]
    half = len(ids) / 2
    common = min(
        {t for row in ids for t in row}, key=lambda t: abs(sum(t in r for r in ids) - half)
    )
    monkeypatch.setattr(model.generation_config, "eos_token_id", [common])
    monkeypatch.setattr(generation, "_SEGMENT_TOKENS", 2)
    calls = []
    original = model.generate

    def spy(**kwargs):
        calls.append(kwargs["input_ids"].shape[0])
        return original(**kwargs)

    monkeypatch.setattr(model, "generate", spy)
    batched = agent.act(batch)
    monkeypatch.setattr(model, "generate", original)
    assert batched == [agent.act([chat])[0] for chat in batch]
    assert calls[0] == 7 and min(calls) < 7 and calls == sorted(calls, reverse=True)
    lengths = [len(tokenizer(r, add_special_tokens=False)["input_ids"]) for r in batched]
    assert len(set(lengths)) > 1


def test_half_precision_cpu_generation_packs_grouped_query_attention(monkeypatch):
    from transformers import LlamaConfig, LlamaForCausalLM

    from agents.tiny_model import make_tiny_tokenizer
    from sweetrl_gym.lm import generation

    tokenizer = make_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,  # grouped-query attention, as SmolLM2's 9 over 3
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        initializer_range=0.2,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(config).eval()
    agent = TransformersAgent(model, tokenizer, device="cpu", temperature=0, max_new_tokens=8)
    fp32 = agent.act([conversation(3)])  # fp32: transformers' attention as it is
    used = []
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", _recording_sdpa(used))
    model.to(torch.bfloat16)
    replies = agent.act([conversation(3)])
    assert isinstance(replies[0], str) and model.config._attn_implementation == "sdpa"
    assert used and not any(used)  # decoding never asked torch for enable_gqa
    # The packed product is the same attention: in fp32 the replies are identical.
    model.to(torch.float32)
    assert generation._register_packed_sdpa()
    model.config._attn_implementation = generation._PACKED_SDPA
    try:
        assert agent.act([conversation(3)]) == fp32
    finally:
        model.config._attn_implementation = "sdpa"


def _recording_sdpa(used):
    original = torch.nn.functional.scaled_dot_product_attention

    def sdpa(query, key, value, *args, **kwargs):
        if query.shape[-2] <= 2:  # a decoding step: one query, or 2 packed per key head
            used.append(bool(kwargs.get("enable_gqa", False)))
        return original(query, key, value, *args, **kwargs)

    return sdpa


def test_prefix_cache_keeps_longest_prefixes_within_its_memory_budget():
    import numpy as np

    from sweetrl_gym.lm import PrefixCache

    def states(n):  # 1 layer, key and value, 1 head, n positions, 2 dims: 16 bytes a token
        return torch.zeros((1, 2, 1, n, 2))

    cache = PrefixCache(max_bytes=16 * 10)
    cache._add(np.arange(4), states(4))
    cache._add(np.arange(6), states(6))  # extends the first: it replaces it
    assert len(cache) == 1 and cache.num_tokens == 6 and cache.num_bytes == 96
    cache._add(np.array([0, 1, 9]), states(3))
    entry, length = cache._lookup(np.array([0, 1, 2, 3, 7]))
    assert length == 4 and len(entry.ids) == 6
    cache._add(np.array([5, 5]), states(2))  # over budget: the least recently used goes
    assert cache.num_tokens == 8 and cache._lookup(np.array([0, 1, 9]))[1] == 2
    with pytest.raises(ValueError):
        PrefixCache(max_bytes=0)


def test_plays_each_environment_with_its_prompt_unless_given_its_own(
    tiny, bakery_page_env, small_tasks
):
    from agents import FRONTEND_AGENT_PROMPT, collect

    frontend = bakery_page_env
    backend = {"tasks": small_tasks[:1], "max_turns": 1}

    def first_prompt(agent, env_id, env_kwargs):
        buffer = collect(env_id, agent, 1, env_kwargs=env_kwargs, progress=False)
        turn = buffer[0].turns[0]
        assert all(m["role"] != "system" for m in turn.messages)  # stored as the env has it
        return turn.prompt

    agent = make_agent(tiny, temperature=0, max_new_tokens=2)
    on_frontend = first_prompt(agent, "ColBench-Frontend-v0", frontend)
    assert on_frontend.startswith(f"<|im_start|>system\n{FRONTEND_AGENT_PROMPT}<|im_end|>")
    on_backend = first_prompt(agent, "ColBench-Backend-v0", backend)
    assert on_backend.startswith(f"<|im_start|>system\n{BACKEND_AGENT_PROMPT}<|im_end|>")
    own = make_agent(tiny, temperature=0, max_new_tokens=2, system_prompt="Design pages.")
    kept = first_prompt(own, "ColBench-Frontend-v0", frontend)
    assert kept.startswith("<|im_start|>system\nDesign pages.<|im_end|>")
    assert FRONTEND_AGENT_PROMPT not in kept
