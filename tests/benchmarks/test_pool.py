"""Pooling seeds from their reports alone: the typed statistics written and read back."""

from __future__ import annotations

import json

from agents import PooledDifference, paired_difference, pooled_paired_difference, summarize
from benchmarks.harness.outcomes import episode_outcomes
from benchmarks.harness.pool import pool_runs, render_pooled, write_pooled
from benchmarks.harness.report import json_safe
from sweetrl_gym.trajectory import TrajectoryBuffer
from tests.agents.test_evaluation import fake

BASE = [1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0]
SEEDS = [  # the method's successes per task, one list per seed
    [1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1],
    [1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0],
    [1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0],
]


def _buffer(successes):
    return TrajectoryBuffer([fake(f"t{i}", float(s)) for i, s in enumerate(successes)])


def _report(folder, seed, method):
    """A finished comparison's results.json, as ``sweetrl compare`` writes it."""
    base = _buffer(BASE)
    results = {
        "config": {
            "seed": seed,
            "env": {"id": "ColBench-Backend-v0"},
            "methods": {"run": ["warm-start", "mine"]},
        },
        "base": "warm-start",
        "methods": {},
    }
    for name, buffer in (("warm-start", base), ("mine", method)):
        versus = None if name == "warm-start" else paired_difference(buffer, base, seed=seed)
        results["methods"][name] = {
            "eval": summarize(buffer, seed=seed),
            "fit": {"status": "trained", "seconds": 1.0},
            "versus_base": None if versus is None else versus.to_record(),
            "outcomes": episode_outcomes(buffer),
        }
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(json_safe(results), allow_nan=False))
    return folder


def test_pooled_json_keeps_each_pooled_difference_and_renders_as_written(tmp_path):
    runs = [_report(tmp_path / f"seed-{s}", s, _buffer(m)) for s, m in enumerate(SEEDS)]
    pooled = pool_runs(runs)
    write_pooled(pooled, tmp_path / "pooled")
    written = json.loads((tmp_path / "pooled" / "pooled.json").read_text())
    expected = pooled_paired_difference([(_buffer(m), _buffer(BASE)) for m in SEEDS])
    record = written["methods"]["mine"]["pooled"]
    assert record == json.loads(json.dumps(expected.to_record()))
    assert PooledDifference.from_record(record) == expected
    # A pooled.json read back renders as it was written, verdict and plan included.
    markdown = (tmp_path / "pooled" / "pooled.md").read_text()
    assert render_pooled(written) == markdown == render_pooled(pooled)
    plan = expected.spread("success_rate").seeds_needed
    interval = expected.difference("success_rate").interval
    assert not interval.excludes_zero and plan.seeds is not None
    assert f"about {plan.seeds} seeds at this spread would show it (80% power)" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith("| mine |"))
    per_seed = [paired_difference(_buffer(m), _buffer(BASE), seed=s) for s, m in enumerate(SEEDS)]
    first = per_seed[0].difference("success_rate")
    assert f"| {100 * first.value:+.1f} [{100 * first.interval.low:+.1f}, " in row
    # One written before the plan was kept (the recorded runs 9-27): no plan, same verdict.
    for key in [k for k in record if k.endswith("_seeds_needed")]:
        del record[key]
    clause = (
        f"; were the difference this size, about {plan.seeds} seeds at this spread would "
        "show it (80% power)"
    )
    assert render_pooled(written) == markdown.replace(clause, "") != markdown
