"""Pool comparisons run with different seeds: a verdict that holds the training's noise.

One comparison (``sweetrl compare``) measures each method against the base on the same
held-out tasks, but a run is one draw of everything upstream of its evaluation: the warm
start, the sampled training data, the critic, the policy step. On the quick config, seed
1 instead of 0 moved MT-DPO from -10 to +12 points. :func:`pool_runs` takes several run
folders of one config that differ only in ``seed`` and pairs every (seed, task) with the
base on it; the interval is :func:`agents.seed_task_interval`'s (seeds x tasks), so a
method is "a real difference" only when it holds across seeds.

Every method is also set against SWEET-RL on the same units: its controls
(``sweet-rl-random``, ``sweet-rl-env``) show whether the critic's ranking carries its gain.

Example:
    >>> sweetrl compare --config quick --seeds 0,1,2 --out runs/quick   # pools at the end
    >>> sweetrl pool runs/quick/seed-0 runs/quick/seed-1 runs/quick/seed-2 --out runs/quick

"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.controls import SOURCE, is_control
from benchmarks.harness.report import LABELS, json_safe, paired_cell
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["pool_runs", "render_pooled", "write_pooled"]


def pool_runs(run_dirs: Sequence[str | Path], *, seed: int = 0) -> dict[str, Any]:
    """Pool finished comparisons of one config that differ only in their seed.

    Args:
        run_dirs: Folders written by ``sweetrl compare`` (each has ``results.json`` and
            ``eval/<method>.jsonl``), every one evaluated on the same tasks.
        seed: Seed of the bootstrap (one run only).

    Returns:
        ``{"runs", "seeds", "base", "methods", "turn_pair_signal"}``; per method:
        ``success_rate`` per run and their mean, ``control`` (a diagnostic of SWEET-RL),
        ``versus_base`` per run (from each run's report), ``pooled`` (against the base,
        :func:`agents.pooled_paired_difference` over every run) and ``versus_sweet_rl``
        (the same against SWEET-RL, when it was evaluated). ``turn_pair_signal``: per run,
        SWEET-RL's turn pairs judged by the environment (``None`` where not measured).

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

    def versus(name: str, other: str) -> dict[str, float]:
        pairs = [(_episodes(d, name), _episodes(d, other)) for d in dirs]
        return pooled_paired_difference(pairs, seed=seed)

    methods: dict[str, Any] = {}
    for name in names:
        rates = [float(r["methods"][name]["eval"]["success_rate"]) for r in results]
        entry: dict[str, Any] = {
            "success_rate": rates,
            "mean_success_rate": sum(rates) / len(rates),
            "control": is_control(name),
        }
        if name != base:
            entry["versus_base"] = [r["methods"][name].get("versus_base") for r in results]
            entry["pooled"] = versus(name, base)
        if SOURCE in names and name not in (SOURCE, base, "zero-shot"):
            entry["versus_sweet_rl"] = versus(name, SOURCE)
        methods[name] = entry
    signal = [
        ((r["methods"].get(SOURCE) or {}).get("fit") or {}).get("turn_pair_signal") for r in results
    ]
    return {
        "runs": [str(d) for d in dirs],
        "seeds": [r["config"]["seed"] for r in results],
        "base": base,
        "methods": methods,
        "turn_pair_signal": signal,
    }


def render_pooled(pooled: Mapping[str, Any]) -> str:
    """Return the pooled comparison as Markdown: a line per seed, pooled verdicts."""
    seeds = pooled["seeds"]
    base = pooled["base"]
    base_label = LABELS.get(base, base)
    lines = [
        f"Pooled over {len(seeds)} seeds of the whole pipeline ({', '.join(map(str, seeds))}): "
        f"success rate, and each method against {base_label} on the same held-out tasks. "
        "Per seed: the paired 95% interval over tasks (the evaluation's noise). Pooled: the "
        "95% interval over seeds x tasks, which holds the training's seed-to-seed spread too "
        "(Student t, Satterthwaite's degrees of freedom); seed sd: the estimated spread of the "
        "difference between seeds. Controls are diagnostics of SWEET-RL, not methods.",
        "",
        "| Method | Success per seed | Mean | vs base per seed | vs base, pooled [95% CI] "
        "(gained / lost) | seed sd |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, entry in pooled["methods"].items():
        rates = " / ".join(f"{100 * r:.1f}%" for r in entry["success_rate"])
        per_seed = " / ".join(
            paired_cell(v, "success_rate") for v in entry.get("versus_base") or []
        )
        lines.append(
            f"| {LABELS.get(name, name)} | {rates} | {100 * entry['mean_success_rate']:.1f}% "
            f"| {per_seed or '—'} | {_pooled_cell(entry.get('pooled'))} "
            f"| {_seed_sd(entry.get('pooled'))} |"
        )
    lines += ["", "Verdicts (pooled; a real difference only when the interval excludes 0):", ""]
    for name, entry in pooled["methods"].items():
        for key, other in (("pooled", base_label), ("versus_sweet_rl", "SWEET-RL")):
            if entry.get(key):
                lines.append(f"- {LABELS.get(name, name)} vs {other}: {_verdict(entry[key])}")
    signals = pooled.get("turn_pair_signal") or []
    if any(signals):
        lines += [
            "",
            "SWEET-RL's turn pairs judged by the environment, per seed (chosen better / "
            "worse / as good): " + "; ".join(_signal(s) for s in signals) + ".",
        ]
    return "\n".join(lines) + "\n"


def _pooled_cell(versus: Any) -> str:
    cell = paired_cell(versus, "success_rate")
    if isinstance(versus, Mapping):
        cell += f" ({versus['gained']:.0f} / {versus['lost']:.0f})"
    return cell


def _seed_sd(versus: Any) -> str:
    if not isinstance(versus, Mapping) or "success_rate_seed_sd" not in versus:
        return "—"
    return f"{100 * versus['success_rate_seed_sd']:.1f}"


def _verdict(versus: Mapping[str, Any]) -> str:
    low, high = versus["success_rate_diff_ci_low"], versus["success_rate_diff_ci_high"]
    real = low > 0 or high < 0
    return (
        f"{paired_cell(versus, 'success_rate')} points "
        f"({versus['gained']:.0f} (seed, task) units gained, {versus['lost']:.0f} lost): "
        + ("a real difference" if real else "the interval includes 0 (not a measurable difference)")
    )


def _signal(counts: Any) -> str:
    if not isinstance(counts, Mapping):
        return "not measured"
    return (
        f"questions {counts['chosen_obtains_more']} / {counts['chosen_obtains_fewer']} / "
        f"{counts['same']}, answers {counts['chosen_passes_more']} / "
        f"{counts['chosen_passes_fewer']} / {counts['same_tests']}"
    )


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
