"""A sharded pass with a chunk journal: stopped midway, it resumes at the chunk it was in."""

from __future__ import annotations

import io
import json

import pytest
from tqdm import tqdm

from algorithms import map_sharded


class Stop(Exception):
    pass


def squares(calls: list[list[int]], stop_at: int | None = None):
    """A pass that records its chunks and raises at chunk ``stop_at`` (a crash)."""

    def compute(chunk: list[int]) -> list[int]:
        if stop_at is not None and len(calls) == stop_at:
            raise Stop
        calls.append(list(chunk))
        return [x * x for x in chunk]

    return compute


def test_a_stopped_pass_resumes_at_the_chunk_it_was_in(tmp_path) -> None:
    items = list(range(10))
    calls: list[list[int]] = []
    with pytest.raises(Stop):
        map_sharded(items, squares(calls, stop_at=2), batch_size=3, journal=tmp_path / "j")
    assert calls == [[0, 1, 2], [3, 4, 5]]

    calls.clear()
    bar = tqdm(total=len(items), file=io.StringIO())
    result = map_sharded(items, squares(calls), batch_size=3, journal=tmp_path / "j", progress=bar)
    assert result == [x * x for x in items]
    assert calls == [[6, 7, 8], [9]]  # only what the stopped pass had not finished
    assert bar.n == len(items)  # restored chunks count on the bar

    calls.clear()  # a third call: everything is in the journal
    assert map_sharded(items, squares(calls), batch_size=3, journal=tmp_path / "j") == result
    assert calls == []


def test_a_line_cut_short_and_a_journal_of_another_split_are_not_trusted(tmp_path) -> None:
    items = list(range(6))
    journal = tmp_path / "j"
    map_sharded(items, squares([]), batch_size=2, journal=journal)
    path = journal / "rank-0.jsonl"
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"layout": {"items": 6, "processes": 1, "batch_size": 2}}
    # A crash in the middle of writing the second chunk: the first is kept, then resumed.
    path.write_text(f"{lines[0]}\n{lines[1]}\n{lines[2][:3]}")
    calls: list[list[int]] = []
    assert map_sharded(items, squares(calls), batch_size=2, journal=journal) == [0, 1, 4, 9, 16, 25]
    assert calls == [[2, 3], [4, 5]]
    # Chunks of another size (or item count) do not line up: computed afresh.
    calls.clear()
    map_sharded(items, squares(calls), batch_size=3, journal=journal)
    assert calls == [[0, 1, 2], [3, 4, 5]]
    calls.clear()
    map_sharded(items[:5], squares(calls), batch_size=3, journal=journal)
    assert calls == [[0, 1, 2], [3, 4]]


def test_a_journaled_pass_needs_json_results(tmp_path) -> None:
    with pytest.raises(TypeError, match="JSON serializable"):
        map_sharded([1, 2], lambda chunk: [object() for _ in chunk], batch_size=1, journal=tmp_path)
