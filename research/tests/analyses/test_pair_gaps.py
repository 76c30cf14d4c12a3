"""The pair-gap analysis judges every turn pair SWEET-RL drew, split by the critic's gap."""

from __future__ import annotations

import json

import pytest

from benchmarks.cli import main as sweetrl
from research.analyses.pair_gaps import HALVES, KINDS, main


def test_every_drawn_pair_of_a_kind_is_counted_once_in_a_gap_half(tmp_path, capsys):
    from algorithms.pair_signal import judge_turn_pairs
    from algorithms.pairs import TurnPair
    from sweetrl_gym import TrajectoryBuffer

    run = tmp_path / "smoke"
    command = ["compare", "--config", "smoke", "--methods", "sweet-rl", "--out", str(run)]
    assert sweetrl([*command, "--no-progress"]) == 0
    output = tmp_path / "gaps.json"
    assert main([str(run), str(run), "--output", str(output)]) == 0
    report = json.loads(output.read_text())
    counts = report["runs"][str(run)]

    cache = run / "methods" / "sweet-rl" / "run" / "stages" / "candidate_pairs.json"
    rows = json.loads(cache.read_text())["pairs"]
    pairs = [TurnPair(**row) for row in rows]
    verdicts = judge_turn_pairs(pairs, TrajectoryBuffer.load(run / "data" / "train.jsonl"))
    for kind, word in KINDS.items():
        judged = [
            v
            for v in verdicts
            if word in v or v == ("same" if kind == "questions" else "same_tests")
        ]
        cells = [counts[kind][half] for half in HALVES]
        assert sum(sum(cell.values()) for cell in cells) == len(judged), kind
        assert sum(cell["right"] for cell in cells) == sum(v.endswith("_more") for v in judged)
        assert sum(cell["wrong"] for cell in cells) == sum(v.endswith("_fewer") for v in judged)
        wider, narrower = (sum(cell.values()) for cell in cells)
        assert wider >= narrower  # the median's pairs go to the wider half
    # Pooled over the two folders (the same run twice): every count doubles.
    for kind in KINDS:
        for half in HALVES:
            assert report["pooled"][kind][half] == {k: 2 * v for k, v in counts[kind][half].items()}
    assert "| pooled |" in capsys.readouterr().out


def test_a_folder_without_sweet_rl_pairs_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"turn_pairs\.json is missing"):
        main([str(tmp_path), "--output", str(tmp_path / "out.json")])
