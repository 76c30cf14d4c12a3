"""Frozen references compute with the numerics of the model they are compared with.

Before any update a policy equals its DPO reference and a critic equals its frozen start,
so every margin and advantage is exactly 0 — in bf16 as in fp32. A bf16 model trains as
fp32 master weights under bf16 autocast; a reference run on the bf16 weights instead
differs from it by rounding alone, an offset as large as the learnt signal at small scale.
The learning rate here is so small that no step moves a weight: every logged step is
"before any update".
"""

import math

import pytest
import torch

from agents import TransformersAgent
from algorithms import ArCHer, MultiTurnDPO, SweetRL, critic_prompts, turn_logprobs
from algorithms.pairs import TurnPair
from tests.algorithms.conftest import FAST
from tests.tiny_lm import make_tiny_lm

NO_STEP = {**FAST, "learning_rate": 1e-30, "num_epochs": 1}
TOLERANCE = 1e-6


def _policy(dtype: torch.dtype) -> TransformersAgent:
    model, tokenizer = make_tiny_lm(seed=0)
    model.to(dtype)
    return TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, seed=0)


def _logged(algorithm, key: str) -> list[float]:
    values = [value for _, name, value in algorithm.history if name == key]
    assert values, f"{key} was not logged"
    return values


DTYPES = pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])


@DTYPES
def test_mt_dpo_margins_are_zero_before_any_update(dtype, shared_buffer):
    algorithm = MultiTurnDPO(_policy(dtype), **NO_STEP, nll_coef=0.0)
    metrics = algorithm.fit(shared_buffer)
    assert all(abs(m) < TOLERANCE for m in _logged(algorithm, "train/reward_margin"))
    assert metrics["train/loss"] == pytest.approx(0.693147, abs=TOLERANCE)


@DTYPES
def test_sweet_rl_critic_and_policy_margins_are_zero_before_any_update(dtype, shared_buffer):
    algorithm = SweetRL(
        _policy(dtype),
        **NO_STEP,
        nll_coef=0.0,
        critic_learning_rate=1e-30,
        critic_epochs=1,
        num_candidates=4,
        candidate_fraction=0.5,
        drop_truncated_candidates=False,
        held_out_fraction=0.0,
    )
    metrics = algorithm.fit(shared_buffer)
    # The critic is its start: every trajectory score margin is 0, so every pair ties...
    assert all(abs(m) < TOLERANCE for m in _logged(algorithm, "critic/score_margin"))
    assert metrics["critic/train_pair_accuracy"] == 0.5
    assert metrics["critic/train_pair_loss"] == pytest.approx(math.log(2), abs=TOLERANCE)
    # ...and so is every turn advantage measured against the start.
    critic = algorithm.critic
    for trajectory in shared_buffer:
        turns = [(turn, trajectory.reference) for turn in trajectory.turns]
        encoded = algorithm.encode(
            critic_prompts(algorithm.policy, turns), [turn.action for turn, _ in turns]
        )
        with torch.no_grad():
            advantages = (
                turn_logprobs(critic.model, encoded).mean
                - turn_logprobs(critic.start_model, encoded).mean
            )
        assert all(abs(a) < TOLERANCE for a in advantages.tolist())
    # The policy step's DPO reference is the policy it starts from.
    assert all(abs(m) < TOLERANCE for m in _logged(algorithm, "train/reward_margin"))


@DTYPES
def test_sweet_rl_control_policy_step_margins_are_zero(dtype):
    """The controls train SWEET-RL's policy step alone on re-ranked pairs (fit_policy)."""
    messages = ({"role": "user", "content": "Write a function that adds two numbers."},)
    pairs = [
        TurnPair(messages, "What types are the inputs?", "I WANT TO ANSWER: def f(a, b): pass"),
        TurnPair(messages, "I WANT TO ANSWER: def f(a, b): return a + b", "Hello?"),
    ]
    algorithm = SweetRL(_policy(dtype), **NO_STEP, nll_coef=0.0)
    algorithm.fit_policy([pair.reversed() for pair in pairs])  # the coin control's order
    assert all(abs(m) < TOLERANCE for m in _logged(algorithm, "train/reward_margin"))


@DTYPES
def test_archer_target_critic_reads_like_the_critic_before_any_update(dtype, shared_buffer):
    """ArCHer's target starts as the critic: at the first step V's target is min Q itself."""
    algorithm = ArCHer(
        _policy(dtype),
        **NO_STEP,
        critic_learning_rate=1e-30,
        critic_epochs=1,
        value_samples=0,  # V's target: min(Q1, Q2)_target at the buffer's own action
        tau=0.0,  # the target stays the start
    )
    algorithm.fit(shared_buffer)
    q_means = _logged(algorithm, "critic/q_mean")
    v_targets = _logged(algorithm, "critic/v_target_mean")
    assert all(abs(q - v) < TOLERANCE for q, v in zip(q_means, v_targets))


@DTYPES
def test_lora_policy_margins_are_zero_before_any_update(dtype, shared_buffer):
    """With LoRA the reference is the base with adapters off; the adapter starts at 0."""
    pytest.importorskip("peft")
    algorithm = MultiTurnDPO(_policy(dtype), **NO_STEP, nll_coef=0.0, lora_rank=4)
    algorithm.fit(shared_buffer)
    assert all(abs(m) < TOLERANCE for m in _logged(algorithm, "train/reward_margin"))
