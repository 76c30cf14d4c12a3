import math

import pytest
import torch

from agents import TransformersAgent
from algorithms.logprobs import (
    branch_rows_supported,
    encode_dialogues,
    encode_turn_pairs,
    encode_turns,
    shared_prefix_length,
    shared_prefix_turn_logprobs,
    token_logprobs,
    truncate_middle,
    turn_logprobs,
)
from tests.tiny_lm import make_tiny_lm

TURNS = [
    ([{"role": "user", "content": "Write f."}], "What should f return?"),
    (
        [
            {"role": "user", "content": "I need a function that adds tax to prices."},
            {"role": "assistant", "content": "Which rate?"},
            {"role": "user", "content": "Use 8 percent, rounded to cents."},
        ],
        "I WANT TO ANSWER:\ndef add_tax(p):\n    return round(p * 1.08, 2)",
    ),
    ([{"role": "user", "content": "Hi"}], "Hello!"),
]


@pytest.fixture(scope="module")
def tiny():
    model, tokenizer = make_tiny_lm()
    agent = TransformersAgent(model, tokenizer, device="cpu")
    prompts = agent.format_prompts([messages for messages, _ in TURNS])
    return model, tokenizer, prompts, [action for _, action in TURNS]


def by_hand(model, tokenizer, prompt, action):
    """Sum of log p(token) over the action and the end token, one unpadded sequence."""
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    action_ids = tokenizer(action, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    ids = torch.tensor([prompt_ids + action_ids])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0]
    total = 0.0
    for offset, token in enumerate(action_ids):
        row = logits[len(prompt_ids) + offset - 1].tolist()
        top = max(row)
        log_z = top + math.log(sum(math.exp(x - top) for x in row))
        total += row[token] - log_z
    return total, len(action_ids)


def test_batched_padded_logprobs_match_one_sequence_at_a_time(tiny):
    model, tokenizer, prompts, actions = tiny
    turns = encode_turns(tokenizer, prompts, actions)
    assert (
        turns.input_ids.shape[0] == 3 and turns.attention_mask[2].sum() < turns.input_ids.shape[1]
    )
    with torch.no_grad():
        whole = turn_logprobs(model, turns)
        chunked = turn_logprobs(model, turns, micro_batch_size=2)
    for i, (prompt, action) in enumerate(zip(prompts, actions)):
        expected, count = by_hand(model, tokenizer, prompt, action)
        assert whole.sum[i].item() == pytest.approx(expected, abs=1e-4)
        assert whole.num_tokens[i].item() == count
        assert whole.mean[i].item() == pytest.approx(expected / count, abs=1e-5)
    assert torch.allclose(whole.sum, chunked.sum, atol=1e-5)


def test_only_action_tokens_count_and_gradients_flow(tiny):
    model, tokenizer, prompts, actions = tiny
    turns = encode_turns(tokenizer, prompts, actions)
    for row in range(3):
        real = turns.attention_mask[row].bool()
        action = turns.action_mask[row].bool()
        assert (action <= real).all()
        # the action tokens are the last real tokens, after the whole prompt
        last = int(real.sum())
        assert action[:last].tolist() == [False] * (last - int(action.sum())) + [True] * int(
            action.sum()
        )
    model.zero_grad()
    turn_logprobs(model, turns).mean.sum().backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_long_prompts_lose_their_middle_not_their_start_end_or_action(tiny):
    _, tokenizer, prompts, actions = tiny
    full = encode_turns(tokenizer, prompts, actions)
    cut = encode_turns(tokenizer, prompts, actions, max_length=40)
    assert cut.input_ids.shape[1] <= 40
    for row, prompt in enumerate(prompts):
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        n_action = int(full.action_mask[row].sum())
        real = int(full.attention_mask[row].sum())
        kept = int(cut.attention_mask[row].sum())
        ids = cut.input_ids[row, :kept].tolist()
        # The action (and its end token) is whole and last, counted as before.
        assert int(cut.action_mask[row].sum()) == n_action
        assert ids[kept - n_action :] == full.input_ids[row, real - n_action : real].tolist()
        if real <= 40:  # a row that fits is untouched
            assert ids == full.input_ids[row, :real].tolist()
            continue
        budget = 40 - n_action
        head, tail = budget // 2, budget - budget // 2
        assert kept == 40 and len(prompt_ids) > budget
        # The system prompt's first tokens and the latest tokens stay; the middle goes.
        assert ids[:head] == prompt_ids[:head]
        assert ids[head:budget] == prompt_ids[-tail:]
    assert any(int(full.attention_mask[row].sum()) > 40 for row in range(3))
    with pytest.raises(ValueError, match="max_length"):
        encode_turns(tokenizer, prompts, actions, max_length=5)


def test_truncate_middle_keeps_head_and_tail():
    ids = list(range(100))
    assert truncate_middle(ids, 10, head=3) == [0, 1, 2, 93, 94, 95, 96, 97, 98, 99]
    assert truncate_middle(ids, 10) == [0, 1, 2, 3, 4, 95, 96, 97, 98, 99]  # half and half
    assert truncate_middle(ids, 7) == [0, 1, 2, 96, 97, 98, 99]  # odd: the tail gets more
    assert truncate_middle(ids, 4, head=0) == [96, 97, 98, 99]  # the old left truncation
    assert truncate_middle(ids, 4, head=4) == [0, 1, 2, 3]
    assert truncate_middle(ids, 100, head=10) == ids and truncate_middle(ids, 500) == ids
    assert truncate_middle([], 3) == []
    with pytest.raises(ValueError, match="head"):
        truncate_middle(ids, 10, head=11)
    with pytest.raises(ValueError, match="max_length"):
        truncate_middle(ids, 0)


def test_a_long_dialogue_keeps_its_task_in_every_turn(tiny):
    """A chat far over max_length: each turn keeps its system prompt and first message."""
    model, tokenizer, _, _ = tiny
    agent = TransformersAgent(model, tokenizer, device="cpu", system_prompt="SYSTEM: task x.")
    messages = [{"role": "user", "content": "Write f."}]
    actions = []
    for i in range(12):
        actions.append(f"Question number {i}: what about case {i}?")
        messages += [
            {"role": "assistant", "content": actions[-1]},
            {"role": "user", "content": f"Answer {i} says nothing much at all."},
        ]
    prompts = agent.format_prompts([messages[: 1 + 2 * i] for i in range(12)])
    # System prompt + first user message: under half the prompt's share of max_length.
    first = tokenizer(prompts[0], add_special_tokens=False)["input_ids"]
    encoded = encode_dialogues(tokenizer, [(prompts, actions)], max_length=120)
    assert len(encoded) == 12 and encoded.input_ids.shape[1] == 120  # fell back per turn
    for row, (prompt, action) in enumerate(zip(prompts, actions)):
        ids = _real_rows(encoded)[row]
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        action_ids = tokenizer(action, add_special_tokens=False)["input_ids"]
        action_ids = [*action_ids, tokenizer.eos_token_id]
        assert (120 - len(action_ids)) // 2 >= len(first)
        assert ids[: len(first)] == first  # the task survives every cut
        assert ids[-len(action_ids) :] == action_ids  # the action is whole
        prompt_part = ids[: -len(action_ids)]
        assert prompt_part[-20:] == prompt_ids[-20:]  # so does the latest message
        assert len(prompt_part) == min(len(prompt_ids), 120 - len(action_ids))
    assert sum(len(r) == 120 for r in _real_rows(encoded)) >= 6  # most turns were cut


def test_bad_input(tiny):
    _, tokenizer, prompts, actions = tiny
    with pytest.raises(ValueError, match="2 prompts but 3 actions"):
        encode_turns(tokenizer, prompts[:2], actions)
    with pytest.raises(ValueError, match="no turns"):
        encode_turns(tokenizer, [], [])
    with pytest.raises(ValueError, match="empty prompt"):
        encode_turns(tokenizer, [""], ["x"])


# -- One row per dialogue, turn indices, and log-probs without full-vocabulary logits --------


def test_encode_turns_numbers_each_row_as_its_turn(tiny):
    _, tokenizer, prompts, actions = tiny
    turns = encode_turns(tokenizer, prompts, actions)
    assert turns.num_turns == len(turns) == 3
    for row in range(3):
        counted = turns.turn_index[row] >= 0
        assert counted.tolist() == turns.action_mask[row].bool().tolist()
        assert set(turns.turn_index[row][counted].tolist()) == {row}
    # A selection keeps global turn indices: the other turns score nothing.
    with torch.no_grad():
        whole = turn_logprobs(model := tiny[0], turns)
        one = turn_logprobs(model, turns.select([1]))
    assert one.sum.shape == (3,) and one.num_tokens[[0, 2]].tolist() == [0, 0]
    assert one.sum[1].item() == pytest.approx(whole.sum[1].item(), abs=1e-5)


def _dialogue(agent, trajectory):
    prompts = agent.format_prompts([turn.messages for turn in trajectory.turns])
    return prompts, [turn.action for turn in trajectory.turns]


@pytest.fixture(scope="module")
def dialogues(shared_buffer):
    """Real episodes (oracle: 5+ turns, random questions, one-turn answers), as dialogues."""
    model, tokenizer = make_tiny_lm()
    agent = TransformersAgent(model, tokenizer, device="cpu")
    long = [t for t in shared_buffer if t.num_turns >= 4][:3]
    short = [t for t in shared_buffer if t.num_turns == 1][:1]
    chosen = [long[0], short[0], long[1], long[2]]
    return [_dialogue(agent, t) for t in chosen]


def _flat(dialogues):
    return [p for ps, _ in dialogues for p in ps], [a for _, acts in dialogues for a in acts]


def _real_rows(turns):
    return [turns.input_ids[r][turns.attention_mask[r].bool()].tolist() for r in range(len(turns))]


def test_a_dialogue_packs_into_one_row_with_each_turns_own_tokens(tiny, dialogues):
    _, tokenizer, _, _ = tiny
    packed = encode_dialogues(tokenizer, dialogues)
    per_turn = encode_turns(tokenizer, *_flat(dialogues))
    assert len(packed) == len(dialogues) and packed.num_turns == per_turn.num_turns == len(per_turn)
    assert packed.input_ids.numel() < per_turn.input_ids.numel() / 2
    rows = _real_rows(per_turn)
    turn = 0
    for row, (prompts, _) in enumerate(dialogues):
        ids = packed.input_ids[row].tolist()
        for t in range(len(prompts)):
            # Turn t's counted tokens end its own per-turn row; the row's start is its prompt.
            span = (packed.turn_index[row] == turn + t).nonzero().flatten().tolist()
            assert span == list(range(span[0], span[-1] + 1))
            assert ids[: span[-1] + 1] == rows[turn + t]
        turn += len(prompts)
    assert packed.action_mask.tolist() == (packed.turn_index >= 0).long().tolist()


def test_packed_and_per_turn_log_probs_and_gradients_are_equal(dialogues):
    model, tokenizer = make_tiny_lm()
    packed = encode_dialogues(tokenizer, dialogues)
    per_turn = encode_turns(tokenizer, *_flat(dialogues))
    grads = []
    for turns, micro in ((per_turn, None), (packed, None), (packed, 2)):
        model.zero_grad()
        logps = turn_logprobs(model, turns, micro_batch_size=micro)
        weights = torch.linspace(0.5, 2.0, turns.num_turns)  # each turn its own weight
        (weights * logps.mean).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
        if turns is per_turn:
            expected = logps
        else:
            assert torch.allclose(logps.sum, expected.sum, atol=1e-4)
            assert torch.allclose(logps.mean, expected.mean, atol=1e-4)
            assert logps.num_tokens.tolist() == expected.num_tokens.tolist()
    for other in grads[1:]:
        for mine, theirs in zip(other, grads[0]):
            assert torch.allclose(mine, theirs, atol=1e-4, rtol=1e-3)


def test_a_dialogue_whose_template_rewrites_history_falls_back_to_rows_per_turn(tiny, dialogues):
    model, tokenizer, _, _ = tiny
    prompts, actions = dialogues[0]
    # Like a template that drops earlier reasoning: turn 2 sees another turn-1 reply.
    edited = [*prompts[:2], prompts[2].replace(actions[1], "Noted."), *prompts[3:]]
    assert edited[2] != prompts[2]
    mixed = [dialogues[1], (edited, actions), dialogues[2]]
    encoded = encode_dialogues(tokenizer, mixed)
    after = 1 + len(actions)  # the first turn of the last dialogue
    assert len(encoded) == after + 1 and encoded.num_turns == after + len(dialogues[2][1])
    per_turn = encode_turns(tokenizer, *_flat(mixed))
    # The edited dialogue's rows are encode_turns' rows, with global turn numbers.
    assert _real_rows(encoded)[1 : 1 + len(actions)] == _real_rows(per_turn)[1 : 1 + len(actions)]
    assert encoded.turn_index[1].max().item() == 1 and encoded.turn_index[-1].min().item() == -1
    assert set(encoded.turn_index[-1].tolist()) == {-1, *range(after, encoded.num_turns)}
    with torch.no_grad():
        got, expected = turn_logprobs(model, encoded), turn_logprobs(model, per_turn)
    assert torch.allclose(got.sum, expected.sum, atol=1e-4)


def test_a_dialogue_longer_than_max_length_falls_back_with_encode_turns_truncation(tiny, dialogues):
    model, tokenizer, _, _ = tiny
    whole = encode_dialogues(tokenizer, dialogues[:2])
    longest = int(whole.attention_mask[0].sum())
    assert longest > int(whole.attention_mask[1].sum())
    cut = encode_dialogues(tokenizer, dialogues[:2], max_length=longest - 1)
    turns = len(dialogues[0][0])
    assert len(cut) == turns + 1  # the long dialogue per turn, the short one still packed
    per_turn = encode_turns(tokenizer, *_flat(dialogues[:2]), max_length=longest - 1)
    assert _real_rows(cut)[:turns] == _real_rows(per_turn)[:turns]
    assert int(cut.attention_mask[turns - 1].sum()) == longest - 1  # the last turn lost a token
    with torch.no_grad():
        got, expected = turn_logprobs(model, cut), turn_logprobs(model, per_turn)
    assert torch.allclose(got.sum, expected.sum, atol=1e-4)


def test_dialogue_input_errors(tiny):
    _, tokenizer, prompts, actions = tiny
    with pytest.raises(ValueError, match="no turns"):
        encode_dialogues(tokenizer, [])
    with pytest.raises(ValueError, match="dialogue 1 has no turns"):
        encode_dialogues(tokenizer, [(prompts[:1], actions[:1]), ([], [])])
    with pytest.raises(ValueError, match="dialogue 0: 2 prompts but 1 actions"):
        encode_dialogues(tokenizer, [(prompts[:2], actions[:1])])
    with pytest.raises(ValueError, match="empty prompt"):
        encode_dialogues(tokenizer, [([""], ["x"])])


def full_logits_reference(model, turns):
    """The plain computation: full logits, fp32 log-softmax, zero outside the actions."""
    logits = model(input_ids=turns.input_ids, attention_mask=turns.attention_mask).logits
    logps = logits[:, :-1].float().log_softmax(-1)
    logps = logps.gather(-1, turns.input_ids[:, 1:, None])[..., 0]
    mask = turns.action_mask[:, 1:].bool()
    return torch.where(mask, logps, 0.0), mask.float()


class HeadSpy:
    """Stands in for the head's forward and records the shape of every input it gets."""

    def __init__(self, head):
        self.forward, self.shapes = head.forward, []

    def __call__(self, hidden):
        self.shapes.append(tuple(hidden.shape))
        return self.forward(hidden)


def test_chunked_head_equals_full_logits_with_and_without_grad(dialogues):
    model, tokenizer = make_tiny_lm()
    turns = encode_dialogues(tokenizer, dialogues)
    spy = HeadSpy(model.lm_head)
    model.lm_head.forward = spy
    try:
        with torch.no_grad():
            chunked, mask = token_logprobs(model, turns, chunk_size=7)
    finally:
        del model.lm_head.forward
    # The head only ever saw 7 positions at a time, as many as there are action tokens.
    assert max(shape[-2] for shape in spy.shapes) == 7
    assert sum(shape[-2] for shape in spy.shapes) == int(turns.action_mask[:, 1:].sum())
    with torch.no_grad():
        expected, expected_mask = full_logits_reference(model, turns)
    assert torch.equal(mask, expected_mask)
    assert torch.allclose(chunked, expected, atol=1e-5)

    grads = []
    for compute in (lambda: token_logprobs(model, turns, chunk_size=7), full_logits_reference):
        model.zero_grad()
        logps, mask = compute() if compute is not full_logits_reference else compute(model, turns)
        (logps * mask).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for mine, theirs in zip(*grads):
        assert torch.allclose(mine, theirs, atol=1e-5, rtol=1e-4)


def test_the_head_is_restored_after_scoring(tiny):
    model, tokenizer, prompts, actions = tiny
    with torch.no_grad():
        token_logprobs(model, encode_turns(tokenizer, prompts, actions))
    assert "forward" not in model.lm_head.__dict__
    assert model(input_ids=torch.tensor([[5, 6, 7]])).logits.shape == (
        1,
        3,
        model.config.vocab_size,
    )


def test_a_head_transform_in_the_config_takes_the_full_logits_path(tiny):
    from transformers import Gemma2Config, Gemma2ForCausalLM

    _, tokenizer, prompts, actions = tiny
    config = Gemma2Config(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        final_logit_softcapping=2.0,  # strong: log-probs differ visibly without it
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = Gemma2ForCausalLM(config).eval()
    turns = encode_turns(tokenizer, prompts, actions)
    with torch.no_grad():
        got, _ = token_logprobs(model, turns)
        expected, _ = full_logits_reference(model, turns)
    assert torch.allclose(got, expected, atol=1e-5)


def test_a_forward_that_changes_the_heads_output_is_caught(tiny):
    _, tokenizer, prompts, actions = tiny
    model, _ = make_tiny_lm()
    forward = model.forward

    def scaled(*args, **kwargs):  # a transform no config attribute announces
        out = forward(*args, **kwargs)
        out.logits = out.logits * 2
        return out

    model.forward = scaled
    turns = encode_turns(tokenizer, prompts, actions)
    with torch.no_grad(), pytest.warns(RuntimeWarning, match="full logits"):
        got, _ = token_logprobs(model, turns)
    with torch.no_grad():
        expected, _ = full_logits_reference(model, turns)
    assert torch.allclose(got, expected, atol=1e-5)


def test_through_distributed_data_parallel(tmp_path, dialogues):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    if not dist.is_available() or dist.is_initialized():
        pytest.skip("torch.distributed unavailable or already in use in this process")
    model, tokenizer = make_tiny_lm()
    plain, _ = make_tiny_lm()
    turns = encode_dialogues(tokenizer, dialogues[:2])
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1
    )
    try:
        wrapped = DistributedDataParallel(model)
        spy = HeadSpy(model.lm_head)
        model.lm_head.forward = spy
        turn_logprobs(wrapped, turns, micro_batch_size=1).sum.sum().backward()
        del model.lm_head.forward
    finally:
        dist.destroy_process_group()
    assert spy.shapes and all(shape[-2] <= 1024 for shape in spy.shapes)  # the chunked path
    expected, mask = full_logits_reference(plain, turns)
    (expected * mask).sum().backward()
    for mine, theirs in zip(model.parameters(), plain.parameters()):
        assert torch.allclose(mine.grad, theirs.grad, atol=1e-5, rtol=1e-4)


def test_through_a_peft_lora_model(tiny):
    peft = pytest.importorskip("peft")
    _, tokenizer, prompts, actions = tiny
    model, _ = make_tiny_lm()
    # init_lora_weights=False: random adapters, so LoRA visibly changes the output
    config = peft.LoraConfig(
        r=4, target_modules=["q_proj", "v_proj", "lm_head"], init_lora_weights=False
    )
    lora = peft.get_peft_model(model, config)
    turns = encode_turns(tokenizer, prompts, actions)
    spy = HeadSpy(lora.get_output_embeddings())
    lora.get_output_embeddings().forward = spy
    lora.zero_grad()
    got, mask = token_logprobs(lora, turns, chunk_size=5)
    (got * mask).sum().backward()
    del lora.get_output_embeddings().forward
    assert spy.shapes and max(shape[-2] for shape in spy.shapes) == 5
    chunked_grads = [p.grad.clone() for p in lora.parameters() if p.requires_grad]
    lora.zero_grad()
    expected, _ = full_logits_reference(lora, turns)
    (expected * mask).sum().backward()
    assert torch.allclose(got, expected, atol=1e-5)
    trainable = [p.grad for p in lora.parameters() if p.requires_grad]
    assert len(trainable) == len(chunked_grads) > 0
    for mine, theirs in zip(chunked_grads, trainable):
        assert torch.allclose(mine, theirs, atol=1e-5, rtol=1e-4)


def test_a_model_without_an_output_head_to_find_takes_the_full_logits_path(tiny):
    model, tokenizer, prompts, actions = tiny

    class Custom(torch.nn.Module):  # no get_output_embeddings, no .module: nothing to patch
        def __init__(self):
            super().__init__()
            self.lm = model

        def forward(self, **kwargs):
            return self.lm(**kwargs)

    turns = encode_turns(tokenizer, prompts, actions)
    with torch.no_grad():
        got, _ = token_logprobs(Custom(), turns)
        expected, _ = full_logits_reference(model, turns)
    assert torch.allclose(got, expected, atol=1e-5)


# -- scoring several actions of one prompt: the prompt read once ------------------------


def candidates_of_one_prompt(tiny):
    _, tokenizer, prompts, _ = tiny
    actions = [
        "Which rate?",
        "What should it return for an empty list?",
        "I WANT TO ANSWER: 1",
        "Ok",
    ]
    return encode_turns(tokenizer, [prompts[1]] * len(actions), actions)


def test_shared_prefix_scores_equal_full_rows(tiny):
    model = tiny[0]
    turns = candidates_of_one_prompt(tiny)
    length = shared_prefix_length(turns)
    # The prompt is common; the rows part one token before the first action token.
    assert 0 < length == min(int(m.nonzero()[0]) for m in turns.action_mask) - 1
    with torch.no_grad():
        expected = turn_logprobs(model, turns)
    shapes = []
    hook = model.register_forward_pre_hook(
        lambda _, args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True
    )
    try:
        got = shared_prefix_turn_logprobs(model, turns)
    finally:
        hook.remove()
    rows, width = turns.input_ids.shape
    assert shapes == [(1, length), (rows, width - length)]  # the prompt was read once
    assert torch.equal(got.num_tokens, expected.num_tokens)
    assert torch.allclose(got.sum, expected.sum, atol=1e-4)
    assert torch.allclose(got.mean, expected.mean, atol=1e-5)


def test_shared_prefix_scores_through_a_peft_lora_model(tiny):
    peft = pytest.importorskip("peft")
    model, _ = make_tiny_lm()
    config = peft.LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    lora = peft.get_peft_model(model, config)
    turns = candidates_of_one_prompt(tiny)
    with torch.no_grad():
        expected = turn_logprobs(lora, turns).sum
    assert torch.allclose(shared_prefix_turn_logprobs(lora, turns).sum, expected, atol=1e-4)


def test_rows_without_a_common_start_are_scored_the_plain_way(tiny):
    model, tokenizer, prompts, actions = tiny
    turns = encode_turns(tokenizer, ["x" + prompts[0], "y" + prompts[1]], actions[:2])
    assert shared_prefix_length(turns) == 0
    with torch.no_grad():
        expected = turn_logprobs(model, turns).sum
    assert torch.allclose(shared_prefix_turn_logprobs(model, turns).sum, expected, atol=1e-5)


# -- preference pairs: two actions of one prompt in one row ------------------------------

PAIRS = [
    (1, "Which rate?", "I WANT TO ANSWER:\ndef add_tax(p):\n    return p"),
    (0, "What should f return?", "Ok"),
    (2, "Hello!", "Hi there, what do you need today?"),
]


def _pair_rows(tiny, max_length=None):
    _, tokenizer, prompts, _ = tiny
    args = (
        [prompts[i] for i, _, _ in PAIRS],
        [first for _, first, _ in PAIRS],
        [second for _, _, second in PAIRS],
    )
    plain = encode_turns(tokenizer, args[0] * 2, args[1] + args[2], max_length=max_length)
    return encode_turn_pairs(tokenizer, *args, max_length=max_length), plain


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("checkpointing", [False, True])
def test_a_pair_in_one_row_scores_and_trains_as_two_plain_rows(tiny, attention, checkpointing):
    model, _ = make_tiny_lm()
    model.config._attn_implementation = attention
    if checkpointing:
        from algorithms.models import enable_activation_checkpointing

        enable_activation_checkpointing(model)
        model.train()
    packed, plain = _pair_rows(tiny)
    assert len(packed) == len(PAIRS) and len(plain) == 2 * len(PAIRS)
    # The prompt is read once: the pair's row is shorter than its two plain rows.
    assert packed.attention_mask.sum() < plain.attention_mask.sum()
    assert packed.num_turns == plain.num_turns == 2 * len(PAIRS)
    results = []
    for turns in (plain, packed):
        model.zero_grad()
        logps = turn_logprobs(model, turns)
        weights = torch.linspace(0.5, 2.0, turns.num_turns)  # each turn its own weight
        (weights * logps.mean).sum().backward()
        results.append((logps, [p.grad.clone() for p in model.parameters()]))
    (expected, expected_grads), (got, grads) = results
    assert got.num_tokens.tolist() == expected.num_tokens.tolist()
    assert torch.allclose(got.sum, expected.sum, atol=1e-4)
    for mine, theirs in zip(grads, expected_grads):
        assert torch.allclose(mine, theirs, atol=1e-4, rtol=1e-3)


def test_a_pair_too_long_for_max_length_is_two_plain_rows_truncated_as_before(tiny):
    model = tiny[0]
    _, plain = _pair_rows(tiny)
    longest_action = int(plain.action_mask.sum(dim=1).max())
    max_length = longest_action + 6  # every pair's prompt must lose its middle
    packed, plain = _pair_rows(tiny, max_length=max_length)
    assert len(packed) == 2 * len(PAIRS)
    assert torch.equal(
        packed.branch[packed.attention_mask.bool()],
        torch.ones(int(packed.attention_mask.sum()), dtype=torch.long),
    )
    with torch.no_grad():
        assert torch.allclose(
            turn_logprobs(model, packed).sum, turn_logprobs(model, plain).sum, atol=1e-5
        )
    # A micro-batch keeps each row's branches and positions.
    with torch.no_grad():
        whole = turn_logprobs(model, _pair_rows(tiny)[0]).sum
        parts = turn_logprobs(model, _pair_rows(tiny)[0], micro_batch_size=1).sum
    assert torch.allclose(whole, parts, atol=1e-5)


def test_pairs_need_an_attention_that_takes_a_block_mask(tiny):
    model, _ = make_tiny_lm()
    assert branch_rows_supported(model)
    model.config.sliding_window = 8  # a window the block mask would not keep
    assert not branch_rows_supported(model)
    model.config.sliding_window = None
    model.config._attn_implementation = "flash_attention_2"
    assert not branch_rows_supported(model)
    packed, _ = _pair_rows(tiny)
    with pytest.raises(ValueError, match="sdpa' or 'eager'"):
        turn_logprobs(model, packed)
    _, tokenizer, prompts, _ = tiny
    with pytest.raises(ValueError, match="2 prompts, 1 and 1 actions"):
        encode_turn_pairs(tokenizer, prompts[:2], ["a"], ["b"])
    with pytest.raises(ValueError, match="no turns"):
        encode_turn_pairs(tokenizer, [], [], [])
