"""Pool comparisons run with different seeds: a verdict that holds the training's noise.

One comparison (``sweetrl compare``) measures each method against the base on the same
held-out tasks, but a run is one draw of everything upstream of its evaluation: the warm
start, the sampled training data, the critic, the policy step. On the quick config, seed
1 instead of 0 moved MT-DPO from -10 to +12 points. :func:`pool_runs` takes several run
folders of one config that differ only in ``seed`` and pairs every (seed, task) with the
base on it; the interval is :func:`agents.seed_task_interval`'s (seeds x tasks), so a
method is "a real difference" only when it holds across seeds.

Every method is also set against each method that a control in the run controls, on the
same units: a control that keeps everything of a method but its mechanism (a critic's
ranking replaced by a coin's) shows whether the mechanism carries the method's gain.

Example:
    >>> sweetrl compare --config quick --seeds 0,1,2 --out runs/quick   # pools at the end
    >>> sweetrl pool runs/quick/seed-0 runs/quick/seed-1 runs/quick/seed-2 --out runs/quick

"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.statistics import (
    SIMILARITY_MARGIN,
    PairedDifference,
    PooledDifference,
    pooled_paired_difference,
)
from benchmarks.harness.outcomes import outcome_buffer
from benchmarks.harness.policies import ZERO_SHOT
from benchmarks.harness.report import (
    format_value,
    is_frontend,
    json_safe,
    label_of,
    paired_cell,
)
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["pool_runs", "render_pooled", "write_pooled"]


def pool_runs(run_dirs: Sequence[str | Path], *, seed: int = 0) -> dict[str, Any]:
    """Pool finished comparisons of one config that differ only in their seed.

    Args:
        run_dirs: Folders written by ``sweetrl compare``, or their ``results.json`` files
            kept alone (each evaluated episode's outcome is in it: the folder's
            ``eval/<method>.jsonl`` need not outlive the run), every one evaluated on the
            same tasks.
        seed: Seed of the bootstrap (one run only).

    Returns:
        ``{"runs", "seeds", "base", "metric", "labels", "methods", "left_out",
        "diagnostics"}``; ``metric`` is what the methods are judged on: ``similarity`` on
        Frontend runs, else ``success_rate``. Per method: that metric per run
        (``<metric>``) and their mean (``mean_<metric>``), ``control`` (whether it is a
        control of another method), ``versus_base`` per run (from each run's report),
        ``pooled`` (against the base, :func:`agents.pooled_paired_difference` over every
        run) and ``versus_controlled`` (the same against each method a control of the run
        controls), each as its record (``PooledDifference.to_record()``, read back by
        ``PooledDifference.from_record``). ``left_out``: the methods some runs evaluated
        and others did not (not pooled). ``diagnostics``: per method that reports one, its
        one-line summary per run (``""`` where it has none).

    Raises:
        ValueError: If fewer than two runs are given, a run is unfinished, or the runs'
            configs differ in anything but ``seed`` and the methods they ran.

    """
    dirs = [Path(d) for d in run_dirs]
    if len(dirs) < 2:
        raise ValueError(f"pooling needs at least two runs, got {len(dirs)}")
    results = [_results(d) for d in dirs]
    _check_same_config(dirs, results)
    bases = {r["base"] for r in results}
    if len(bases) != 1:
        raise ValueError(f"the runs compare against different bases: {sorted(bases)}")
    base = results[0]["base"]
    metric = "similarity" if is_frontend(results[0]) else "success_rate"
    evaluated = [[m for m, v in r["methods"].items() if v.get("eval")] for r in results]
    names = [m for m in evaluated[0] if all(m in names for names in evaluated[1:])]
    left_out = sorted({m for names_run in evaluated for m in names_run} - set(names))

    # Each method's episodes per run, read once: the base and a controlled method pair
    # with many.
    episodes = {name: [_episodes(d, r, name) for d, r in zip(dirs, results)] for name in names}

    def versus(name: str, other: str) -> dict[str, Any]:
        runs = list(zip(episodes[name], episodes[other]))
        return pooled_paired_difference(runs, seed=seed).to_record()

    def fit(name: str, run: Mapping[str, Any]) -> Mapping[str, Any]:
        return (run["methods"].get(name) or {}).get("fit") or {}

    # A method some control controls: every other method is set against it too.
    controlled = [c for c in dict.fromkeys(fit(n, results[0]).get("controls") for n in names) if c]
    controlled = [c for c in controlled if c in names and c != base]
    methods: dict[str, Any] = {}
    for name in names:
        values = [float(r["methods"][name]["eval"][metric]) for r in results]
        entry: dict[str, Any] = {
            metric: values,
            f"mean_{metric}": sum(values) / len(values),
            "control": bool(fit(name, results[0]).get("controls")),
        }
        if name != base:
            entry["versus_base"] = [r["methods"][name].get("versus_base") for r in results]
            entry["pooled"] = versus(name, base)
        against = {c: versus(name, c) for c in controlled if name not in (c, base, ZERO_SHOT)}
        if against:
            entry["versus_controlled"] = against
        methods[name] = entry
    summaries = {
        name: [(fit(name, r).get("diagnostics") or {}).get("summary") or "" for r in results]
        for name in dict.fromkeys([*names, *left_out])
    }
    return {
        "runs": [str(d) for d in dirs],
        "seeds": [r["config"]["seed"] for r in results],
        "base": base,
        "metric": metric,
        "labels": {name: label_of(results[0], name) for name in [*names, *left_out]},
        "methods": methods,
        "left_out": left_out,
        "diagnostics": {name: lines for name, lines in summaries.items() if any(lines)},
    }


def render_pooled(pooled: Mapping[str, Any]) -> str:
    """Return the pooled comparison as Markdown: a line per seed, pooled verdicts.

    Args:
        pooled: :func:`pool_runs`'s result, or a ``pooled.json`` read back.

    """
    seeds = pooled["seeds"]
    base = pooled["base"]
    labels = pooled.get("labels") or {}

    def label(name: str) -> str:
        return labels.get(name, name)

    base_label = label(base)
    metric = pooled.get("metric", "success_rate")
    title = "mean similarity" if metric == "similarity" else "success rate"
    frontend = metric == "similarity"
    lines = [
        f"Pooled over {len(seeds)} seeds of the whole pipeline ({', '.join(map(str, seeds))}): "
        f"{title}, and each method against {base_label} on the same held-out tasks. "
        "Per seed: the paired 95% interval over tasks (the evaluation's noise). Pooled: the "
        "95% interval over seeds x tasks, which holds the training's seed-to-seed spread too "
        "(Student t, Satterthwaite's degrees of freedom); seed sd: the estimated spread of the "
        "difference between seeds. Controls are diagnostics of the method they control, not "
        "methods."
        + (
            f" A (seed, task) is gained or lost when its similarity moves by more than "
            f"{SIMILARITY_MARGIN:g}; the win rate counts a move within it as half a win."
            if frontend
            else ""
        ),
        "",
        f"| Method | {title.capitalize()} per seed | Mean | vs base per seed "
        "| vs base, pooled [95% CI] (gained / lost) | seed sd |"
        + (" Win rate vs base, pooled |" if frontend else ""),
        "| --- | --- | --- | --- | --- | --- |" + (" --- |" if frontend else ""),
    ]
    for name, entry in pooled["methods"].items():
        values = " / ".join(format_value(v, metric) for v in entry[metric])
        mean = sum(entry[metric]) / len(entry[metric])  # as pool_runs's mean_<metric>
        seeds_versus = [_paired(v) for v in entry.get("versus_base") or []]
        per_seed = " / ".join(paired_cell(v, metric) for v in seeds_versus)
        versus = _pooled(entry.get("pooled"))
        row = (
            f"| {label(name)} | {values} | "
            f"{format_value(mean, metric)} "
            f"| {per_seed or '—'} | {_pooled_cell(versus, metric)} "
            f"| {_seed_sd(versus, metric)} |"
        )
        if frontend:
            row += f" {_win_rate(versus)} |"
        lines.append(row)
    left_out = pooled.get("left_out") or []
    if left_out:
        lines += [
            "",
            "Not evaluated in every run, so not pooled: "
            + ", ".join(label(name) for name in left_out)
            + ".",
        ]
    lines += ["", "Verdicts (pooled; a real difference only when the interval excludes 0):", ""]
    for name, entry in pooled["methods"].items():
        against = [(base_label, _pooled(entry.get("pooled")))]
        against += [
            (label(c), _pooled(v)) for c, v in (entry.get("versus_controlled") or {}).items()
        ]
        for other, result in against:
            if result is not None:
                lines.append(f"- {label(name)} vs {other}: {_verdict(result, metric)}")
    for name, summaries in (pooled.get("diagnostics") or {}).items():
        per_seed = "; ".join(summary or "not measured" for summary in summaries)
        lines += ["", f"{label(name)}, per seed: {per_seed}."]
    return "\n".join(lines) + "\n"


def _paired(record: Any) -> PairedDifference | None:
    """Read a run's paired difference from its ``results.json`` (``None``: the base's own)."""
    return PairedDifference.from_record(record) if isinstance(record, Mapping) else None


def _pooled(record: Any) -> PooledDifference | None:
    return PooledDifference.from_record(record) if isinstance(record, Mapping) else None


def _pooled_cell(versus: PooledDifference | None, metric: str) -> str:
    cell = paired_cell(versus, metric)
    if versus is not None:
        cell += f" ({versus.gained:.0f} / {versus.lost:.0f})"
    return cell


def _seed_sd(versus: PooledDifference | None, metric: str) -> str:
    spread = versus.spread(metric) if versus is not None else None
    if spread is None:
        return "—"
    sd = spread.seed_sd
    return f"{100 * sd:.1f}" if metric == "success_rate" else f"{sd:.3f}"


def _win_rate(versus: PooledDifference | None) -> str:
    win = versus.win_rate if versus is not None else None
    if win is None:
        return "—"
    if win.interval is None:
        return f"{win.value:.0%}"
    return f"{win.value:.0%} [{win.interval.low:.0%}, {win.interval.high:.0%}]"


def _verdict(versus: PooledDifference, metric: str) -> str:
    difference = versus.difference(metric)
    interval = difference.interval if difference is not None else None
    real = interval is not None and interval.excludes_zero
    unit = " points" if metric == "success_rate" else ""
    win = f", win rate {_win_rate(versus)}" if versus.win_rate is not None else ""
    return (
        f"{paired_cell(versus, metric)}{unit} "
        f"({versus.gained:.0f} (seed, task) units gained, {versus.lost:.0f} lost{win}): "
        + ("a real difference" if real else "the interval includes 0 (not a measurable difference)")
        + ("" if real else _seeds_needed(versus, metric))
    )


def _seeds_needed(versus: PooledDifference, metric: str) -> str:
    """How many seeds a difference of this size would need, at this spread (a plan)."""
    spread = versus.spread(metric)
    needed = spread.seeds_needed if spread is not None else None
    if needed is None:
        return ""
    if needed.seeds is None:
        return (
            f"; were the difference this size, more than {needed.max_seeds} seeds or more "
            "held-out tasks would be needed to show it"
        )
    return (
        f"; were the difference this size, about {needed.seeds} seeds at this spread would "
        f"show it ({needed.power:.0%} power)"
    )


def write_pooled(pooled: Mapping[str, Any], out: str | Path) -> None:
    """Write ``pooled.json`` and ``pooled.md`` into ``out`` (created)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(json_safe(dict(pooled)), indent=2) + "\n"
    (folder / "pooled.json").write_text(text, encoding="utf-8")
    (folder / "pooled.md").write_text(render_pooled(pooled), encoding="utf-8")


def _results(run: Path) -> dict[str, Any]:
    """Read a run's ``results.json`` (``run`` is its folder or the file itself)."""
    path = run if run.is_file() else run / "results.json"
    if not path.is_file():
        raise ValueError(f"{run}: no results.json (is the comparison finished?)")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not a comparison's results ({err})") from err
    if not isinstance(results, dict) or not isinstance(results.get("methods"), dict):
        raise ValueError(f"{path}: not a comparison's results (no methods)")
    return results


def _episodes(run: Path, results: Mapping[str, Any], method: str) -> TrajectoryBuffer:
    """Return a method's evaluation episodes: a folder's file, else the kept outcomes.

    A ``results.json`` given alone is read alone: a folder it was copied into may hold
    another run's episodes.
    """
    path = run / "eval" / f"{method}.jsonl"
    if run.is_dir() and path.is_file():
        return TrajectoryBuffer.load(path)
    outcomes = (results["methods"].get(method) or {}).get("outcomes")
    if outcomes is None:
        found = f"no evaluation episodes of {method!r} ({path}), and its" if run.is_dir() else "its"
        raise ValueError(
            f"{run}: {found} results.json keeps no outcomes of {method!r} "
            "(written before they were kept)"
        )
    return outcome_buffer(outcomes, where=f"{run}, {method!r}")


def _check_same_config(dirs: Sequence[Path], results: Sequence[Mapping[str, Any]]) -> None:
    """Refuse runs whose configs differ in anything but the seed and run-only settings.

    Which methods a run ran (``methods.run``) may differ too: a seed added later with
    fewer methods pools on the methods every run evaluated. Run-only settings
    (``TrainingConfig.RUN_ONLY_SETTINGS``: e.g. gradient checkpointing, which a seed
    killed for memory resumes with; ``EnvConfig.RUN_ONLY_SETTINGS``: the wait on the
    human's server) change how a run runs, not what it computes, as when a comparison
    resumes.
    """
    first = _computed_config(results[0]["config"])
    for directory, result in zip(dirs[1:], results[1:]):
        other = _computed_config(result["config"])
        if other != first:
            keys = _differing_keys(first, other)
            raise ValueError(
                f"{directory} was run with another config than {dirs[0]} (differs in "
                f"{', '.join(keys[:5])}); pool runs that differ only in their seed"
            )


def _computed_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``config`` without its seed, the methods it ran and run-only settings."""
    from algorithms import TrainingConfig
    from benchmarks.harness.compare import with_new_defaults
    from benchmarks.harness.experiment_config import EnvConfig

    # A run written before a setting existed ran it at its default.
    config = with_new_defaults(dict(config))
    kept = {key: value for key, value in config.items() if key != "seed"}
    if isinstance(kept.get("methods"), Mapping):  # which ran, not how each is computed
        kept["methods"] = {key: value for key, value in kept["methods"].items() if key != "run"}
    for section, settings in (("training", TrainingConfig), ("env", EnvConfig)):
        if isinstance(kept.get(section), Mapping):
            kept[section] = {
                key: value
                for key, value in kept[section].items()
                if key not in settings.RUN_ONLY_SETTINGS
            }
    return kept


def _differing_keys(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for key in sorted(set(a) | set(b)):
        left, right = a.get(key), b.get(key)
        if isinstance(left, Mapping) and isinstance(right, Mapping):
            keys += _differing_keys(left, right, f"{prefix}{key}.")
        elif left != right:
            keys.append(f"{prefix}{key}")
    return keys
