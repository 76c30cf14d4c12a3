"""Length-grouped batch order: a permutation whose batches hold similar lengths."""

import numpy as np
import pytest

from algorithms.batches import length_grouped_order


def padded(order, lengths, batch_size):
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    return sum(max(lengths[i] for i in b) * len(b) for b in batches)


def test_grouped_order_is_a_permutation_with_less_padding():
    rng = np.random.default_rng(0)
    lengths = rng.integers(10, 500, size=203).tolist()
    order = rng.permutation(203).tolist()
    grouped = length_grouped_order(order, lengths, 4, group_batches=8, rng=rng)
    assert sorted(grouped) == list(range(203))
    assert padded(grouped, lengths, 4) < 0.8 * padded(order, lengths, 4)
    # Groups keep the shuffled order at a larger scale: each holds the same items.
    for start in range(0, 203, 32):
        assert set(grouped[start : start + 32]) == set(order[start : start + 32])
    # Only the epoch's last batch is short: the last group's three shortest items.
    last = sorted(lengths[i] for i in order[192:])
    assert sorted(lengths[i] for i in grouped[-3:]) == last[:3]


def test_grouped_order_is_seeded():
    lengths = list(range(100))
    order = np.random.default_rng(1).permutation(100).tolist()
    first = length_grouped_order(order, lengths, 5, rng=np.random.default_rng(7))
    assert first == length_grouped_order(order, lengths, 5, rng=np.random.default_rng(7))
    assert first != length_grouped_order(
        order, lengths, 5, group_batches=4, rng=np.random.default_rng(8)
    )
    with pytest.raises(ValueError, match="positive"):
        length_grouped_order(order, lengths, 0, rng=np.random.default_rng(0))
