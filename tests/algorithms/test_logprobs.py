import math

import pytest
import torch

from agents import TransformersAgent
from algorithms.logprobs import encode_turns, turn_logprobs
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


def test_long_prompts_lose_their_start_not_the_action(tiny):
    _, tokenizer, prompts, actions = tiny
    full = encode_turns(tokenizer, prompts, actions)
    cut = encode_turns(tokenizer, prompts, actions, max_length=40)
    assert cut.input_ids.shape[1] <= 40
    for row in range(3):
        n_action = int(full.action_mask[row].sum())
        assert int(cut.action_mask[row].sum()) == n_action
        real = int(full.attention_mask[row].sum())
        kept = int(cut.attention_mask[row].sum())
        assert (
            cut.input_ids[row, :kept].tolist() == full.input_ids[row, real - kept : real].tolist()
        )
    with pytest.raises(ValueError, match="max_length"):
        encode_turns(tokenizer, prompts, actions, max_length=5)


def test_bad_input(tiny):
    _, tokenizer, prompts, actions = tiny
    with pytest.raises(ValueError, match="2 prompts but 3 actions"):
        encode_turns(tokenizer, prompts[:2], actions)
    with pytest.raises(ValueError, match="no turns"):
        encode_turns(tokenizer, [], [])
    with pytest.raises(ValueError, match="empty prompt"):
        encode_turns(tokenizer, [""], ["x"])
