"""Behaviour cloning: the warm start's algorithm, through the public API."""

import math
from dataclasses import replace

import pytest
import torch

from algorithms import Algorithm, BehaviorCloning, RejectionFT, turn_logprobs
from algorithms.batches import Dialogue
from sweetrl_gym import TrajectoryBuffer
from tests.algorithms.conftest import FAST


def mean_nll(algo, policy, buffer):
    turns = [turn for t in buffer for turn in t.turns]
    encoded = algo.encode(algo.policy_prompts(turns), [t.action for t in turns])
    with torch.no_grad():
        logps = turn_logprobs(policy.model, encoded)
    return float(-logps.sum.sum() / logps.num_tokens.sum())


def test_clones_every_trajectory_successful_or_not(shared_buffer, tiny_policy, tmp_path):
    algo = BehaviorCloning(tiny_policy, **FAST)
    failures = shared_buffer.filter(lambda t: not t.success)
    before = mean_nll(algo, tiny_policy, failures)
    metrics = algo.fit(shared_buffer)
    # Unlike rejection fine-tuning, failures are imitated too.
    assert metrics["train/num_trajectories"] == len(shared_buffer)
    assert metrics["train/num_turns"] == shared_buffer.num_turns
    assert math.isfinite(metrics["train/loss"])
    assert mean_nll(algo, tiny_policy, failures) < before - 0.1

    algo.save(tmp_path / "bc")
    loaded = Algorithm.load(tmp_path / "bc")
    assert isinstance(loaded, BehaviorCloning) and loaded.config == algo.config


def test_rejection_fine_tuning_is_cloning_of_a_selection(shared_buffer, tiny_policy):
    assert issubclass(RejectionFT, BehaviorCloning)
    rft = RejectionFT(tiny_policy, **FAST)
    assert len(rft.select(shared_buffer)) == sum(t.success for t in shared_buffer)


def test_empty_buffer_is_a_clear_error(tiny_policy):
    with pytest.raises(ValueError, match="empty"):
        BehaviorCloning(tiny_policy, **FAST).fit(TrajectoryBuffer())
    assert Algorithm.named("bc") is BehaviorCloning


def first_turns(trajectory, keep):
    """The trajectory cut after its first ``keep`` turns."""
    last = trajectory.turns[keep - 1]
    chat = [*last.messages, {"role": "assistant", "content": last.action}]
    return replace(trajectory, turns=trajectory.turns[:keep], messages=chat)


def test_batches_group_dialogues_of_similar_length(shared_buffer, tiny_policy, monkeypatch):
    import algorithms.behavior_cloning as bc

    seen: list[list[int]] = []
    original = bc.collate_dialogues

    def recording(encode):
        collate = original(encode)

        def run(items):
            seen.append([item.text_length() for item in items])
            return collate(items)

        return run

    monkeypatch.setattr(bc, "collate_dialogues", recording)
    # Lengths that vary a lot: every trajectory cut after each of its turns.
    buffer = TrajectoryBuffer(
        [first_turns(t, keep) for t in shared_buffer for keep in range(1, len(t.turns) + 1)]
    )
    algo = BehaviorCloning(tiny_policy)
    lengths = sorted(
        Dialogue(algo.policy_prompts(t.turns), [turn.action for turn in t.turns]).text_length()
        for t in buffer
    )

    def padding(group_by_length):
        seen.clear()
        settings = {**FAST, "learning_rate": 1e-6, "batch_size": 4}
        BehaviorCloning(tiny_policy, **settings, group_by_length=group_by_length).fit(buffer)
        assert sorted(n for batch in seen for n in batch) == lengths  # each dialogue once
        return sum(max(batch) * len(batch) - sum(batch) for batch in seen)

    assert padding(True) < 0.5 * padding(False)
