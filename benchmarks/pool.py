"""Pool comparisons run with different seeds: each method against the base over every run.

One comparison (``sweetrl compare``) measures each method against the base on the same
held-out tasks, but a run is one draw of everything upstream of its evaluation: the warm
start, the sampled training data, the critic. Two runs of the quick config with the same
settings differed by 9 points for SWEET-RL. :func:`pool_runs` takes several run folders
of one config that differ only in ``seed`` and pairs every (run, task) with the base on
it (:func:`agents.pooled_paired_difference`, a bootstrap over tasks that draws a task
with its results in every run, since the runs share their held-out tasks).

Example:
    >>> for seed in 0 1 2; do sweetrl compare --seed $seed --out runs/quick-$seed; done
    >>> sweetrl pool runs/quick-0 runs/quick-1 runs/quick-2 --out runs/quick-pooled

"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.report import LABELS, json_safe, paired_cell
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["pool_runs", "render_pooled"]


def pool_runs(run_dirs: Sequence[str | Path], *, seed: int = 0) -> dict[str, Any]:
    """Pool finished comparisons of one config that differ only in their seed.

    Args:
        run_dirs: Folders written by ``sweetrl compare`` (each has ``results.json`` and
            ``eval/<method>.jsonl``).
        seed: Seed of the bootstrap.

    Returns:
        ``{"runs", "seeds", "base", "methods"}``; per method: ``success_rate`` per run
        and their mean, ``versus_base`` per run (from each run's report) and ``pooled``
        (:func:`agents.pooled_paired_difference` over every run's tasks); the base has
        no ``pooled``.

    Raises:
        ValueError: If fewer than two runs are given, a run is unfinished, or the runs'
            configs differ in anything but ``seed``.

    """
    from agents import pooled_paired_difference

    dirs = [Path(d) for d in run_dirs]
    if len(dirs) < 2:
        raise ValueError(f"pooling needs at least two runs, got {len(dirs)}")
    results = [_results(d) for d in dirs]
    _check_same_config(dirs, results)
    bases = {r["base"] for r in results}
    if len(bases) != 1:
        raise ValueError(f"the runs compare against different bases: {sorted(bases)}")
    base = results[0]["base"]
    evaluated = [[m for m, v in r["methods"].items() if v.get("eval")] for r in results]
    names = [m for m in evaluated[0] if all(m in names for names in evaluated[1:])]
    methods: dict[str, Any] = {}
    for name in names:
        rates = [float(r["methods"][name]["eval"]["success_rate"]) for r in results]
        entry: dict[str, Any] = {
            "success_rate": rates,
            "mean_success_rate": sum(rates) / len(rates),
        }
        if name != base:
            entry["versus_base"] = [r["methods"][name].get("versus_base") for r in results]
            pairs = [(_episodes(d, name), _episodes(d, base)) for d in dirs]
            entry["pooled"] = pooled_paired_difference(pairs, seed=seed)
        methods[name] = entry
    return {
        "runs": [str(d) for d in dirs],
        "seeds": [r["config"]["seed"] for r in results],
        "base": base,
        "methods": methods,
    }


def render_pooled(pooled: Mapping[str, Any]) -> str:
    """Return the pooled comparison as a Markdown table."""
    seeds = ", ".join(str(s) for s in pooled["seeds"])
    base = pooled["base"]
    lines = [
        f"Pooled over {len(pooled['runs'])} runs (seeds {seeds}); every method against "
        f"{LABELS.get(base, base)} on the same tasks of each run (95% paired bootstrap, "
        "resampling tasks with their results in every run).",
        "",
        "| Method | Success rate per run | Mean | vs base, pooled [95% CI] (gained / lost) |",
        "| --- | --- | --- | --- |",
    ]
    for name, entry in pooled["methods"].items():
        rates = " / ".join(f"{100 * r:.1f}%" for r in entry["success_rate"])
        cell = paired_cell(entry.get("pooled"), "success_rate")
        if "pooled" in entry:
            d = entry["pooled"]
            cell += f" ({d['gained']:.0f} / {d['lost']:.0f}, {d['num_tasks']:.0f} tasks)"
        label = LABELS.get(name, name)
        lines.append(f"| {label} | {rates} | {100 * entry['mean_success_rate']:.1f}% | {cell} |")
    return "\n".join(lines) + "\n"


def write_pooled(pooled: Mapping[str, Any], out: str | Path) -> None:
    """Write ``pooled.json`` and ``pooled.md`` into ``out`` (created)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(json_safe(dict(pooled)), indent=2) + "\n"
    (folder / "pooled.json").write_text(text, encoding="utf-8")
    (folder / "pooled.md").write_text(render_pooled(pooled), encoding="utf-8")


def _results(directory: Path) -> dict[str, Any]:
    path = directory / "results.json"
    if not path.is_file():
        raise ValueError(f"{directory}: no results.json (is the comparison finished?)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not a comparison's results ({err})") from err


def _episodes(directory: Path, method: str) -> TrajectoryBuffer:
    path = directory / "eval" / f"{method}.jsonl"
    if not path.is_file():
        raise ValueError(f"{directory}: no evaluation episodes of {method!r} ({path})")
    return TrajectoryBuffer.load(path)


def _check_same_config(dirs: Sequence[Path], results: Sequence[Mapping[str, Any]]) -> None:
    """Refuse runs whose configs differ in anything but the seed."""
    first = {k: v for k, v in results[0]["config"].items() if k != "seed"}
    for directory, result in zip(dirs[1:], results[1:]):
        other = {k: v for k, v in result["config"].items() if k != "seed"}
        if other != first:
            keys = _differing_keys(first, other)
            raise ValueError(
                f"{directory} was run with another config than {dirs[0]} (differs in "
                f"{', '.join(keys[:5])}); pool runs that differ only in their seed"
            )


def _differing_keys(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for key in sorted(set(a) | set(b)):
        left, right = a.get(key), b.get(key)
        if isinstance(left, Mapping) and isinstance(right, Mapping):
            keys += _differing_keys(left, right, f"{prefix}{key}.")
        elif left != right:
            keys.append(f"{prefix}{key}")
    return keys
