"""The settings whose ``paper`` value is the official pipeline's (OpenRLHF's optimiser, lengths, NLL)."""

import itertools
import math

import pytest
import torch

from agents import TransformersAgent
from algorithms import RejectionFT, SweetRL, SweetRLConfig, TrainingConfig
from algorithms.logprobs import encode_turns, turn_logprobs
from algorithms.pairs import TurnPair
from tests.algorithms.conftest import FAST
from tests.tiny_lm import make_tiny_lm


def _policy() -> TransformersAgent:
    model, tokenizer = make_tiny_lm(seed=0)
    return TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, seed=0)


def _logged(algorithm, key: str) -> list[float]:
    return [value for _, name, value in algorithm.history if name == key]


def test_official_schedule_warms_up_then_decays_to_a_tenth(shared_buffer):
    settings = {**FAST, "batch_size": 1, "num_epochs": 8, "learning_rate": 1e-4}
    algorithm = RejectionFT(
        _policy(),
        **settings,
        lr_scheduler="cosine_with_min_lr",
        warmup_ratio=0.03,
        min_lr_ratio=0.1,
        adam_betas=(0.9, 0.95),
    )
    algorithm.fit(shared_buffer)
    rates = _logged(algorithm, "train/learning_rate")  # each step's, after its update
    steps = len(rates)
    assert steps == 8 * sum(t.success for t in shared_buffer)
    warmup = math.ceil(0.03 * steps)
    assert warmup == 1  # ceil: even a short stage warms up a step
    assert rates[0] == pytest.approx(1e-4)  # the first step ran at lr 0, the next at lr
    assert all(a >= b for a, b in itertools.pairwise(rates))  # then the cosine only falls
    assert rates[-1] == pytest.approx(1e-5)  # to min_lr_ratio x lr


def test_adam_betas_reach_the_optimiser(shared_buffer):
    def trained(betas):
        policy = _policy()
        RejectionFT(policy, **{**FAST, "batch_size": 1, "num_epochs": 3}, adam_betas=betas).fit(
            shared_buffer
        )
        return torch.cat([p.detach().flatten() for p in policy.model.parameters()])

    torch_default, official = trained((0.9, 0.999)), trained((0.9, 0.95))
    assert not torch.allclose(torch_default, official)
    assert torch.allclose(torch_default, trained([0.9, 0.999]))  # a TOML list is a tuple


def test_schedule_settings_are_checked():
    with pytest.raises(ValueError, match="adam_betas"):
        TrainingConfig(adam_betas=(0.9,))
    with pytest.raises(ValueError, match="adam_betas"):
        TrainingConfig(adam_betas=(0.9, 1.5))
    with pytest.raises(ValueError, match="both set the warm-up"):
        TrainingConfig(warmup_steps=10, warmup_ratio=0.03)
    with pytest.raises(ValueError, match="cosine_with_min_lr"):
        TrainingConfig(min_lr_ratio=0.1)  # the constant schedule has no floor
    assert TrainingConfig(warmup_ratio=0.03).warmup_for(100) == 3
    assert TrainingConfig(warmup_steps=5).warmup_for(100) == 5


def test_whole_sequence_rows_score_every_token_after_the_first():
    _, tokenizer = make_tiny_lm(seed=0)
    model, _ = make_tiny_lm(seed=0)
    prompts, actions = ["user: add two numbers\nassistant:", "user: hi\nassistant:"], [" ok", " no"]
    action_only = encode_turns(tokenizer, prompts, actions)
    whole = encode_turns(tokenizer, prompts, actions, whole_sequence=True)
    assert torch.equal(whole.input_ids, action_only.input_ids)
    lengths = whole.attention_mask.sum(1)
    assert whole.action_mask.sum(1).tolist() == (lengths - 1).tolist()
    with torch.no_grad():
        logits = model(whole.input_ids, attention_mask=whole.attention_mask).logits.float()
        by_token = logits[:, :-1].log_softmax(-1).gather(2, whole.input_ids[:, 1:, None])[..., 0]
        logps = turn_logprobs(model, whole)
    for row, length in enumerate(lengths.tolist()):
        expected = by_token[row, : length - 1]
        assert logps.sum[row].item() == pytest.approx(expected.sum().item(), rel=1e-4)
        assert logps.mean[row].item() == pytest.approx(expected.mean().item(), rel=1e-4)


PAIRS = [
    TurnPair(
        ({"role": "user", "content": "Write a function that adds two numbers."},),
        "I WANT TO ANSWER: def f(a, b): return a + b",
        "What types are the inputs?",
    ),
    TurnPair(
        ({"role": "user", "content": "I need the late fee for a library book."},),
        "How many days late is it?",
        "I WANT TO ANSWER: def fee(d): return 0",
    ),
]


def test_sequence_nll_scope_leaves_the_dpo_step_as_it_is():
    """The prompt's log-probs are alike in both rows of a pair: without the NLL term the
    official whole-row scoring trains exactly as the action-only one."""

    def margins(scope, nll_coef):
        algorithm = SweetRL(
            _policy(),
            **{**FAST, "batch_size": 2, "num_epochs": 3},
            nll_coef=nll_coef,
            nll_scope=scope,
        )
        algorithm.fit_policy(PAIRS)
        return _logged(algorithm, "train/reward_margin"), _logged(algorithm, "train/chosen_nll")

    action_margins, action_nll = margins("action", 0.0)
    sequence_margins, sequence_nll = margins("sequence", 0.0)
    assert action_margins[-1] != 0
    assert sequence_margins == pytest.approx(action_margins, rel=1e-3, abs=1e-6)
    # The NLL term measures the whole row instead: a different quantity.
    assert sequence_nll[0] != pytest.approx(action_nll[0], rel=1e-3)
    # With the anchor on, the steps differ (the row-wide anchor also fits the prompt).
    anchored, _ = margins("sequence", 1.0)
    assert anchored[-1] != pytest.approx(action_margins[-1], rel=1e-3)


def test_critic_rows_have_their_own_length(shared_buffer):
    # The policy's rows fit in 384 tokens; the critic's are cut to 24, shorter than some
    # actions of the buffer, which then cannot fit.
    algorithm = SweetRL(_policy(), **FAST, critic_max_length=24)
    pairs = algorithm.trajectory_pairs(shared_buffer)
    with pytest.raises(ValueError, match="max_length is 24"):
        algorithm.fit_critic(pairs)
    SweetRL(_policy(), **FAST, critic_max_length=384, critic_epochs=1).fit_critic(pairs)


def test_sweet_rl_official_settings_are_checked():
    with pytest.raises(ValueError, match="nll_scope"):
        SweetRLConfig(nll_scope="prompt")
    with pytest.raises(ValueError, match="critic_max_length"):
        SweetRLConfig(critic_max_length=0)


def test_the_official_hint_comes_before_the_formatted_prompt(shared_buffer):
    from algorithms.critic_inputs import REFERENCE_HINT, critic_prompt

    policy = _policy()
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    hint = REFERENCE_HINT.format(ground_truth=trajectory.reference["ground_truth"])
    prefixed = critic_prompt(policy, turn, trajectory.reference, hint_position="prefix")
    assert prefixed == hint + policy.format_prompts([turn.messages])[0]
    inside = critic_prompt(policy, turn, trajectory.reference)
    assert not inside.startswith(hint) and hint in inside
    with pytest.raises(ValueError, match="hint_position"):
        critic_prompt(policy, turn, trajectory.reference, hint_position="suffix")
    # The critic trains and scores on such rows (a dialogue still packs as one sequence).
    algorithm = SweetRL(policy, **FAST, critic_epochs=1, hint_position="prefix")
    metrics = algorithm.fit_critic(algorithm.trajectory_pairs(shared_buffer))
    assert math.isfinite(metrics["critic/loss"])
    assert len(algorithm.turn_advantages(trajectory)) == len(trajectory.turns)
