import math

import pytest
import torch

from sweetrl_gym.lm.sampling import sample_tokens, sampling_processors
from tests.tiny_lm import make_tiny_lm


def assert_frequencies_match(draws: torch.Tensor, probabilities: torch.Tensor) -> None:
    """Each token's count is within 5 standard deviations of its binomial expectation."""
    n = len(draws)
    counts = torch.bincount(draws, minlength=len(probabilities)).double()
    for token, p in enumerate(probabilities.double().tolist()):
        spread = 5 * math.sqrt(n * p * (1 - p)) + 1e-9
        assert abs(counts[token] - n * p) <= spread, (token, counts[token].item(), n * p)


def test_draws_follow_the_softmax_and_never_a_masked_token():
    logits = torch.tensor([2.0, 0.5, -1.0, float("-inf"), 1.0, -3.0])
    torch.manual_seed(0)
    draws = sample_tokens(logits.repeat(40_000, 1))  # many chunks of rows
    assert draws.dtype == torch.int64 and draws.shape == (40_000,)
    assert not (draws == 3).any()
    assert_frequencies_match(draws, torch.softmax(logits, dim=-1))


def test_rows_are_drawn_from_their_own_distributions():
    logits = torch.full((3, 50), float("-inf"))
    logits[0, 7] = 0.0  # one possible token
    logits[1, [0, 49]] = 0.0  # the first or the last, half each
    logits[2] = torch.linspace(-2, 2, 50)
    draws = torch.stack([sample_tokens(logits) for _ in range(4_000)])
    assert (draws[:, 0] == 7).all()
    assert set(draws[:, 1].tolist()) == {0, 49}
    assert_frequencies_match(draws[:, 1], torch.tensor([0.5] + [0.0] * 48 + [0.5]))
    assert_frequencies_match(draws[:, 2], torch.softmax(logits[2], dim=-1))


def test_draws_follow_the_seed():
    scores = torch.randn(20, 1000)
    torch.manual_seed(3)
    first = sample_tokens(scores)
    torch.manual_seed(3)
    assert torch.equal(sample_tokens(scores), first)
    assert not torch.equal(sample_tokens(scores), first)


def test_generate_with_the_processors_samples_the_model_at_its_temperature():
    model, tokenizer = make_tiny_lm(seed=0)
    prompt = tokenizer("hello there", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=prompt).logits[0, -1].float()
    batch = prompt.repeat(6_000, 1)
    for temperature, top_p in ((0.5, 1.0), (2.0, 1.0), (1.0, 0.6)):
        torch.manual_seed(0)
        out = model.generate(
            input_ids=batch,
            attention_mask=torch.ones_like(batch),
            max_new_tokens=1,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            logits_processor=sampling_processors(temperature, top_p),
            pad_token_id=tokenizer.eos_token_id,
        )
        probabilities = torch.softmax(logits / temperature, dim=-1)
        if top_p < 1:  # the smallest set of most likely tokens holding top_p of the mass
            ranked, order = probabilities.sort(descending=True)
            outside = order[(ranked.cumsum(0) - ranked) >= top_p]
            probabilities[outside] = 0
            probabilities /= probabilities.sum()
        assert_frequencies_match(out[:, -1], probabilities)


def test_rows_without_a_finite_score_are_a_clear_error():
    for bad in (float("nan"), float("-inf")):
        scores = torch.zeros(10, 5)
        scores[9] = bad
        with pytest.raises(ValueError, match="no finite value"):
            sample_tokens(scores)


@pytest.mark.parametrize(
    ("temperature", "top_p"), [(0.0, 1.0), (-1.0, 1.0), (1.0, 0.0), (1.0, 1.5)]
)
def test_bad_settings_are_clear_errors(temperature, top_p):
    with pytest.raises(ValueError, match=r"temperature|top_p"):
        sampling_processors(temperature, top_p)
