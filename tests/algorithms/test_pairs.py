import numpy as np
import pytest

from algorithms import split_pairs, trajectory_pairs, turn_pairs
from tests.algorithms.synthetic import dialogue, synthetic_buffer


def test_best_trajectory_is_paired_with_each_strictly_worse_one(shared_buffer):
    pairs = trajectory_pairs(shared_buffer)
    assert len(pairs) == 8  # 4 tasks x (oracle vs random, oracle vs immediate)
    for pair in pairs:
        assert pair.chosen.task_id == pair.rejected.task_id == pair.task_id
        assert pair.chosen.success and pair.chosen.reward > pair.rejected.reward


def test_success_only_and_reward_gap(shared_buffer):
    import random

    rng = random.Random(0)
    partial = [dialogue(0, "Hello! Nice weather today, isn't it?", rng) for _ in range(2)]
    partial[0].reward = 0.5  # better, but not a success
    assert trajectory_pairs(partial) == []
    assert len(trajectory_pairs(partial, success_only=False)) == 1
    assert trajectory_pairs(partial, success_only=False, min_reward_gap=0.5) == []
    ties = [dialogue(0, "I like turtles and long walks.", rng) for _ in range(3)]
    assert trajectory_pairs(ties, success_only=False) == []


def test_split_holds_out_whole_tasks():
    pairs = trajectory_pairs(synthetic_buffer(10))
    train, held = split_pairs(pairs, held_out_fraction=0.2, seed=0)
    assert {p.task_id for p in train}.isdisjoint({p.task_id for p in held})
    assert len({p.task_id for p in held}) == 2 and len(train) + len(held) == len(pairs)
    assert split_pairs(pairs, held_out_fraction=0.2, seed=0) == (train, held)
    assert split_pairs(pairs, held_out_fraction=0.0)[1] == []
    with pytest.raises(ValueError, match="held_out_fraction"):
        split_pairs(pairs, held_out_fraction=1.0)


def test_turn_pairs_take_top_half_against_bottom_half():
    candidates = [f"c{i}" for i in range(8)]
    scores = [0.1, 0.9, 0.5, 0.3, 0.8, 0.0, 0.7, 0.2]
    pairs = turn_pairs(
        [{"role": "user", "content": "hi"}],
        candidates,
        scores,
        num_pairs=4,
        rng=np.random.default_rng(0),
    )
    top = {"c1", "c4", "c6", "c2"}
    assert len(pairs) == 4 and len({(p.chosen, p.rejected) for p in pairs}) == 4
    assert all(p.chosen in top and p.rejected not in top for p in pairs)
    assert all(p.chosen_score > p.rejected_score for p in pairs)


def test_turn_pairs_skip_ties_and_short_lists():
    rng = np.random.default_rng(0)
    assert turn_pairs([], ["a", "b", "c"], [1.0, 1.0, 1.0], rng=rng) == []
    assert len(turn_pairs([], ["a", "b", "c"], [3.0, 2.0, 1.0], num_pairs=4, rng=rng)) == 1
    with pytest.raises(ValueError, match="2 candidates but 1 scores"):
        turn_pairs([], ["a", "b"], [1.0], rng=rng)
