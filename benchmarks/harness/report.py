"""The report of a comparison: ``results.json``, ``results.md`` and plots in one folder.

:func:`write_report` takes the ``results`` dict that
:func:`benchmarks.harness.compare.run_comparison` builds and writes, into its folder:

* ``results.json``: ``results`` plus ``versions`` (Python, machine, package versions) and
  ``written_at`` (UTC), with NaN and infinities written as ``null``;
* ``results.md``: the setup, the paper's metrics per method with 95% confidence intervals,
  each trained method against zero-shot, and the training metrics (critic accuracies,
  final loss);
* ``<metric>.png`` (one bar chart per metric, with the intervals), ``critic_accuracy.png``
  and ``training_curves.png``.

Plots need matplotlib (``pip install 'sweetrl-gym[bench]'``); without it the JSON and
Markdown files are still written, then :class:`ImportError` says what to install.
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import platform
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from agents.statistics import (
    SIMILARITY_MARGIN,
    Estimate,
    Interval,
    PairedDifference,
    finite_number,
)
from benchmarks.harness.panel import write_page_panel
from benchmarks.harness.policies import WARM_START, ZERO_SHOT
from benchmarks.machine import machine_summary
from sweetrl_gym.atomic_write import write_atomically

__all__ = [
    "baseline_of",
    "compare_to_baseline",
    "environment_versions",
    "format_table",
    "format_value",
    "is_frontend",
    "json_safe",
    "label_of",
    "main_metric",
    "paired_cell",
    "render_markdown",
    "versus_base",
    "write_plots",
    "write_report",
]

logger = logging.getLogger(__name__)

BASELINE = ZERO_SHOT
# How reports show the harness's own rows; a trained method shows the label its fit
# recorded (its class's), else its name.
LABELS = {ZERO_SHOT: "Zero-shot", WARM_START: "Warm start (BC)"}
# Evaluation metrics in table order: (key, column title, kind).
_METRICS = (
    ("success_rate", "Success rate", "percent"),
    ("tests_passed", "Tests passed", "percent"),
    ("similarity", "Similarity", "score"),
    ("avg_turns", "Avg. turns", "turns"),
    ("answer_rate", "Answered", "percent"),
)
_KIND = {key: kind for key, _, kind in _METRICS}
_TITLE = {key: title for key, title, _ in _METRICS}
_PACKAGES = ("torch", "transformers", "accelerate", "gymnasium")
_DASH = "—"
_REASON_CHARS = 80
_INSTALL_HINT = "pip install 'sweetrl-gym[bench]'"


def write_report(results: Mapping[str, Any], out: str | Path) -> None:
    """Write ``results.json``, ``results.md`` and the plots of a comparison into ``out``.

    Every file is written atomically (a temporary file, then a rename), so an interrupted
    run never leaves a half-written report.

    Args:
        results: The comparison's results (see :func:`benchmarks.harness.compare.run_comparison`).
        out: The run's folder (created if missing).

    Raises:
        ImportError: If matplotlib is missing (after ``results.json`` and ``results.md``
            are written); the message says what to install.

    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    record = {
        **results,
        "versions": environment_versions(),
        "written_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    text = json.dumps(json_safe(record), indent=2, allow_nan=False)
    write_atomically(out / "results.json", lambda path: path.write_text(text + "\n", "utf-8"))
    missing: ImportError | None = None
    try:
        plots = write_plots(results, out)
    except ImportError as err:
        plots, missing = [], err
    plots += _page_panel(results, out)
    markdown = render_markdown(results, plots)
    write_atomically(out / "results.md", lambda path: path.write_text(markdown, "utf-8"))
    if missing is not None:
        raise missing


def _page_panel(results: Mapping[str, Any], out: Path) -> list[str]:
    """Frontend runs: the picture panel of the baseline's and the best method's final pages."""
    if not is_frontend(results):
        return []
    base = results.get("base")
    scored = [(e.get("similarity"), name) for name, e in _evals(results) if name != base]
    scored = [(value, name) for value, name in scored if finite_number(value) is not None]
    best = [max(scored)[1]] if scored else []
    shown = [name for name in (base, *best) if name in _method_order(results)]
    try:
        panel = write_page_panel(out, shown, [label_of(results, name) for name in shown])
    except (ImportError, RuntimeError) as err:  # no renderer here: the numbers stand alone
        logger.warning("no picture panel of the final pages: %s", err)
        return []
    return [panel] if panel else []


def is_frontend(results: Mapping[str, Any]) -> bool:
    """Whether the comparison ran on Frontend Design (its reward: a page's similarity)."""
    return ((results.get("config") or {}).get("env") or {}).get("id") == "ColBench-Frontend-v0"


def environment_versions() -> dict[str, str]:
    """Return the Python, machine and package versions a run's numbers depend on.

    A package that is not installed reads ``"not installed"``.
    """
    import sweetrl_gym

    versions = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": machine_summary(),
        "sweetrl-gym": sweetrl_gym.__version__,
    }
    for package in _PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def json_safe(value: Any) -> Any:
    """Return ``value`` as plain JSON data: NaN and infinities become ``None``.

    Mappings get string keys, sequences become lists, numpy scalars become Python numbers
    and anything else unknown (a ``Path``) becomes its string.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(item) for item in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars and 0-d arrays
        try:
            return json_safe(value.item())
        except (TypeError, ValueError):
            pass
    return str(value)


def main_metric(results: Mapping[str, Any]) -> str:
    """Return the metric methods are judged on.

    ``similarity`` for frontend runs; for backend runs ``success_rate``, or
    ``tests_passed`` when no evaluated method solves any task (0% success says nothing).
    """
    evals = [e for _, e in _evals(results)]
    if any("similarity" in e for e in evals):
        return "similarity"
    rates = [finite_number(e.get("success_rate")) for e in evals]
    if (
        evals
        and all(rate in (None, 0.0) for rate in rates)
        and any("tests_passed" in e for e in evals)
    ):
        return "tests_passed"
    return "success_rate"


def format_table(results: Mapping[str, Any]) -> str:
    """Return the Markdown results table: one row per method, the paper's metrics.

    Values carry their 95% confidence interval (``22.4% [18.0%, 26.9%]``); a method that
    was skipped says ``not trained: <reason>``; ``Trained in`` is the fit's duration (over
    every launch of a resumed fit).
    """
    metrics = _present_metrics(results)
    titles = [_TITLE[m] for m in metrics] or ["Result"]
    base = baseline_of(results)
    main = main_metric(results)
    paired = any(
        isinstance((results.get("methods", {}).get(n) or {}).get("versus_base"), Mapping)
        for n in _method_order(results)
    )
    versus = (
        [f"{_TITLE[main]} vs {_lower(label_of(results, base))} [95% paired CI]"] if paired else []
    )
    header = ["Method", *titles, *versus, "Trained in"]
    rows = [header, ["---"] * len(header)]
    for name in _method_order(results):
        entry = results.get("methods", {}).get(name) or {}
        fit = entry.get("fit")
        evaluation = entry.get("eval")
        trained_in = _DASH
        if isinstance(fit, Mapping) and fit.get("status") == "trained":
            trained_in = _duration(fit.get("seconds"))
        if isinstance(fit, Mapping) and fit.get("status") == "skipped":
            cells = [f"not trained: {_short(fit.get('reason', ''))}"]
        elif not isinstance(evaluation, Mapping):
            cells = ["not evaluated"]
        else:
            cells = [_with_interval(evaluation, metric) for metric in metrics]
        cells += [_DASH] * (len(titles) - len(cells))
        if paired:
            cells.append(paired_cell(versus_base(entry), main))
        rows.append([label_of(results, name), *cells, trained_in])
    return "\n".join("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows) + "\n"


def _clip(text: Any, limit: int = 90) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def baseline_of(results: Mapping[str, Any]) -> str:
    """Return the method every other is compared with: the warm start if any, else zero-shot."""
    return str(results.get("base") or BASELINE)


def compare_to_baseline(results: Mapping[str, Any], baseline: str | None = None) -> list[str]:
    """Return one line per trained method comparing it to ``baseline`` on the main metric.

    With paired differences (``versus_base``, computed on the same tasks), for example
    ``"SWEET-RL vs warm start: +9.7 points [+2.7, +16.8] (95% paired CI; 14 tasks gained,
    3 lost): a real difference"``; without, the two methods' own intervals are compared
    (``"...; 95% intervals overlap (not a measurable difference)"``). Rates differ in
    percentage points, similarity in its own units. Empty when the baseline was not
    evaluated.
    """
    baseline = baseline or baseline_of(results)
    evals = dict(_evals(results))
    reference = evals.get(baseline)
    metric = main_metric(results)
    if reference is None or finite_number(reference.get(metric)) is None:
        return []
    lines = []
    for name in _method_order(results):
        fit = (results.get("methods", {}).get(name) or {}).get("fit")
        if name in (baseline, BASELINE) or not isinstance(fit, Mapping):
            continue
        if fit.get("status") != "trained":
            continue
        head = f"{label_of(results, name)} vs {_lower(label_of(results, baseline))}"
        value = finite_number(evals.get(name, {}).get(metric))
        if value is None:
            lines.append(f"{head}: not evaluated")
            continue
        versus = versus_base(results.get("methods", {}).get(name) or {})
        if versus is not None and versus.difference(metric) is not None:
            lines.append(f"{head}: {_paired_sentence(versus, metric)}")
            continue
        delta = value - finite_number(reference[metric])
        change = f"{delta * 100:+.1f} points" if _KIND[metric] == "percent" else f"{delta:+.3f}"
        mine, theirs = _interval(evals[name], metric), _interval(reference, metric)
        if mine is None or theirs is None:
            verdict = "no confidence interval to compare"
        elif mine.low <= theirs.high and theirs.low <= mine.high:
            verdict = "95% intervals overlap (not a measurable difference)"
        else:
            verdict = "95% intervals do not overlap (a real difference)"
        lines.append(f"{head}: {change}; {verdict}")
    return lines


def render_markdown(results: Mapping[str, Any], plots: Sequence[str] = ()) -> str:
    """Return ``results.md``: setup, results table, comparison to zero-shot, training metrics.

    Args:
        results: The comparison's results.
        plots: File names of plots beside it, embedded at the end.

    """
    config = results.get("config") or {}
    name = results.get("name") or config.get("name") or "comparison"
    parts = [f"# Comparison: {name}\n"]
    if config.get("description"):
        parts.append(f"{config['description']}\n")
    parts.append(f"**Setup.** {_setup(results)}\n")
    parts.append("## Results\n")
    parts.append(format_table(results))
    parts.append(
        "Means over held-out tasks (a task's samples averaged first), with 95% percentile "
        "bootstrap confidence intervals over tasks.\n"
    )
    comparisons = compare_to_baseline(results)
    if comparisons:
        metric = main_metric(results)
        why = " (no method succeeds on any task)" if metric == "tests_passed" else ""
        base = _lower(label_of(results, baseline_of(results)))
        parts.append(f"Against {base}, on {_TITLE[metric].lower()}{why}:\n")
        parts.append("".join(f"- {line}\n" for line in comparisons))
    training = _training_table(results)
    if training:
        parts.append("## Training metrics\n")
        parts.append("Final values of each fit; accuracies are pairwise (chosen over rejected).\n")
        parts.append(training)
        parts.append(
            "Training curves of every step: `tensorboard --logdir methods` in this folder.\n"
        )
    for name in _method_order(results):  # what each method reports of its own fit
        fit = (results.get("methods") or {}).get(name, {}).get("fit") or {}
        markdown = (fit.get("diagnostics") or {}).get("markdown")
        if markdown:
            parts.append(f"## {label_of(results, name)}: diagnostics\n")
            parts.append(markdown)
    if plots:
        parts.append("## Plots\n")
        parts.append("\n".join(f"![{Path(p).stem}]({p})" for p in plots) + "\n")
    return "\n".join(parts)


def write_plots(results: Mapping[str, Any], out: str | Path) -> list[str]:
    """Draw the comparison's plots into ``out``; return the file names written.

    One bar chart per evaluation metric (``success_rate.png``, ...), with 95% interval
    error bars; with a warm start, ``learning_progress.png`` (the main metric of the raw
    model, the warm start and each method after RL); ``critic_accuracy.png`` when any
    method logged an accuracy; ``training_curves.png`` when any method logged a loss.

    Raises:
        ImportError: If matplotlib is not installed.

    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ImportError(f"the comparison's plots need matplotlib: {_INSTALL_HINT}") from err

    out = Path(out)
    order = _method_order(results)
    colors = {name: f"C{index % 10}" for index, name in enumerate(order)}

    def label(name: str) -> str:
        return label_of(results, name)

    def save(fig: Any, filename: str) -> str:
        # Figures are drawn on their own Agg canvas: no pyplot state, no backend switch
        # for the rest of the process, nothing left open.
        FigureCanvasAgg(fig)
        fig.tight_layout()
        write_atomically(out / filename, lambda path: fig.savefig(path, format="png"))
        return filename

    written = []
    evals = _evals(results)
    for metric in _present_metrics(results):
        points = [(n, e) for n, e in evals if finite_number(e.get(metric)) is not None]
        if not points:
            continue
        fig = Figure(figsize=(6, 4), dpi=100)
        _metric_bars(fig.add_subplot(), metric, points, colors, label)
        written.append(save(fig, f"{metric}.png"))

    stages = _stage_points(results, main_metric(results))
    if stages:
        fig = Figure(figsize=(6, 4), dpi=100)
        _stage_lines(fig.add_subplot(), main_metric(results), stages, colors, label)
        written.append(save(fig, "learning_progress.png"))

    accuracies = _training_values(results, lambda key: "accuracy" in key)
    if accuracies:
        fig = Figure(figsize=(6, 4), dpi=100)
        _accuracy_bars(fig.add_subplot(), accuracies, label)
        written.append(save(fig, "critic_accuracy.png"))

    curves = _loss_curves(results)
    if curves:
        rows = math.ceil(len(curves) / 2)
        fig = Figure(figsize=(6, 2.5 * rows + 0.5), dpi=100)
        _loss_panels(fig, curves, label)
        written.append(save(fig, "training_curves.png"))
    return written


# --- helpers -----------------------------------------------------------------------------


def _method_order(results: Mapping[str, Any]) -> list[str]:
    """Methods in the config's ``methods.run`` order, then any others the results hold."""
    config = results.get("config") or {}
    run = list((config.get("methods") or {}).get("run") or [])
    methods = results.get("methods") or {}
    first = [m for m in (BASELINE, WARM_START) if m in methods]
    rest = [m for m in run if m in methods and m not in first]
    return first + rest + [m for m in methods if m not in first and m not in rest]


def _evals(results: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    methods = results.get("methods") or {}
    pairs = [(name, (methods.get(name) or {}).get("eval")) for name in _method_order(results)]
    return [(name, e) for name, e in pairs if isinstance(e, Mapping)]


def _present_metrics(results: Mapping[str, Any]) -> list[str]:
    evals = [e for _, e in _evals(results)]
    return [key for key, _, _ in _METRICS if any(key in e for e in evals)]


def _interval(evaluation: Mapping[str, Any], metric: str) -> Interval | None:
    estimate = Estimate.from_record(evaluation, metric)
    return None if estimate is None else estimate.interval


def versus_base(entry: Mapping[str, Any]) -> PairedDifference | None:
    """Return a method's paired difference from the base, read from its ``results.json`` entry.

    ``None`` for the base itself and for a method that was not evaluated.
    """
    record = entry.get("versus_base")
    return PairedDifference.from_record(record) if isinstance(record, Mapping) else None


def format_value(value: float, metric: str) -> str:
    """Format one value of a metric as the report does (``22.4%``, ``0.541``)."""
    return _format(value, _KIND[metric])


def _format(value: float, kind: str) -> str:
    if kind == "percent":
        return f"{value * 100:.1f}%"
    if kind == "score":
        return f"{value:.3f}"
    return f"{value:.1f}"


def _with_interval(evaluation: Mapping[str, Any], metric: str) -> str:
    estimate = Estimate.from_record(evaluation, metric)
    if estimate is None:
        return _DASH
    kind = _KIND[metric]
    text = _format(estimate.value, kind)
    interval = estimate.interval
    if interval is None:
        return text
    return f"{text} [{_format(interval.low, kind)}, {_format(interval.high, kind)}]"


def _signed(value: float, kind: str) -> str:
    return f"{value * 100:+.1f}" if kind == "percent" else f"{value:+.3f}"


def paired_cell(versus: PairedDifference | None, metric: str) -> str:
    """Format a paired difference as ``+4.4 [-2.2, +11.5]`` (a dash when there is none)."""
    difference = versus.difference(metric) if versus is not None else None
    if difference is None:
        return _DASH
    kind = _KIND[metric]
    text = _signed(difference.value, kind)
    interval = difference.interval
    if interval is None:
        return text
    return f"{text} [{_signed(interval.low, kind)}, {_signed(interval.high, kind)}]"


def _paired_sentence(versus: PairedDifference, metric: str) -> str:
    kind = _KIND[metric]
    unit = " points" if kind == "percent" else ""
    difference = versus.difference(metric)
    text = _signed(difference.value, kind) + unit
    counts = ""
    if versus.gained is not None:
        counts = f"; {versus.gained} tasks gained, {versus.lost or 0} lost"
        if metric == "similarity":
            counts += f" by more than {SIMILARITY_MARGIN:g}"
    win = versus.win_rate
    if win is not None:  # Frontend: pages won against the other's, ties counting half
        counts += f"; win rate {win.value:.0%}"
        if win.interval is not None:
            counts += f" [{win.interval.low:.0%}, {win.interval.high:.0%}]"
    interval = difference.interval
    if interval is None:
        return text + counts
    verdict = (
        "excludes 0 (a real difference)"
        if interval.excludes_zero
        else "includes 0 (not a measurable difference)"
    )
    bounds = f"[{_signed(interval.low, kind)}, {_signed(interval.high, kind)}]"
    return f"{text} {bounds} (95% paired CI{counts}); the interval {verdict}"


def _lower(label: str) -> str:
    """Return a method's label for inside a sentence: "Zero-shot" -> "zero-shot".

    A first word with capitals after its first letter ("RFT", "ArCHer") stays.
    """
    first = label.split(" ")[0]
    return label if any(c.isupper() for c in first[1:]) else label[:1].lower() + label[1:]


def _duration(seconds: Any) -> str:
    value = finite_number(seconds)
    if value is None:
        return _DASH
    if value < 60:
        return f"{value:.1f} s"
    if value < 3600:
        return f"{int(value // 60)} min {int(value % 60)} s"
    return f"{int(value // 3600)} h {int(value % 3600 // 60)} min"


def _short(reason: Any) -> str:
    lines = str(reason).strip().splitlines()
    text = " ".join(lines[0].split()) if lines else "no reason given"
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1].rstrip() + "…"


def _cell(text: str) -> str:
    """Escape a table cell: a pipe would end it, a newline the row."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _count(number: Any, noun: str) -> str:
    return f"{number if number is not None else '?'} {noun}{'' if number == 1 else 's'}"


def label_of(results: Mapping[str, Any], name: str) -> str:
    """Return how the report shows method ``name``: its recorded label, else its name."""
    fit = ((results.get("methods") or {}).get(name) or {}).get("fit") or {}
    return LABELS.get(name) or fit.get("label") or name


def _setup(results: Mapping[str, Any]) -> str:
    config = results.get("config") or {}
    env = config.get("env") or {}
    policy = config.get("policy") or {}
    sets = results.get("task_sets") or {}
    sentences = []
    if env:
        simulator = env.get("simulator", "default")
        human = (
            "the offline simulated human"
            if simulator == "default"
            else f"simulated human {env.get('simulator_model') or simulator!s}"
        )
        sentences.append(
            f"`{env.get('id', '?')}` with {human}; base model `{policy.get('model', '?')}`."
        )
        if not is_frontend(results):
            sentences.append(_scoring_sentence(env.get("scoring", "ours")))
    train, test = sets.get("train") or {}, sets.get("test") or {}
    samples = (config.get("data") or {}).get("samples_per_task", "?")
    eval_samples = (config.get("eval") or {}).get("samples_per_task", "?")
    source = results.get("training_data") or {}
    if train:
        buffer = results.get("buffer") or {}
        episodes, rate = buffer.get("episodes"), finite_number(buffer.get("success_rate"))
        if source.get("source") == "file":  # data.trajectories: nothing was collected
            data = (
                f"Trained on the episodes of `{source.get('path')}` ({source.get('format')} "
                f"format, sha256 `{str(source.get('sha256'))[:12]}`), "
                f"{_count(train.get('tasks'), 'task')}"
            )
        else:
            data = f"Trained from one buffer of {_count(train.get('tasks'), 'task')} × "
            data += _count(samples, "sample") + " of the base policy"
        demonstrations = results.get("demonstrations") or []
        if demonstrations:
            data += (
                f", plus {' and '.join(map(str, demonstrations))} demonstrations on the same tasks"
            )
        mean = finite_number(buffer.get("mean_reward"))
        if is_frontend(results) and episodes is not None and mean is not None:
            data += f" ({episodes} episodes, mean similarity {mean:.3f})"
        elif episodes is not None and rate is not None:
            data += f" ({episodes} episodes, {rate * 100:.1f}% successful)"
        sentences.append(data + ".")
    if test:
        sentences.append(
            f"Evaluated on {_count(test.get('tasks'), 'held-out task')} × "
            f"{_count(eval_samples, 'sample')}."
        )
    hashes = [
        f"{split} `{str(info['sha256'])[:12]}`"
        for split, info in (("train", train), ("test", test))
        if info.get("sha256")
    ]
    if hashes:
        sentences.append(f"Task sets (sha256): {', '.join(hashes)}.")
    seeds = results.get("seeds") or {}
    if seeds:
        values = set(map(str, seeds.values()))
        if len(values) == 1:
            sentences.append(f"Seed {values.pop()} ({', '.join(seeds)}).")
        else:
            sentences.append("Seeds: " + ", ".join(f"{k} {v}" for k, v in seeds.items()) + ".")
    seconds = finite_number(results.get("seconds"))
    if seconds is not None and results.get("resumed"):
        # Earlier launches' time is in no clock of this one: only their stages' times are kept.
        sentences.append(
            f"This launch took {_duration(seconds)}; it resumed a run that earlier launches "
            "began, whose total time is not recorded."
        )
    elif seconds is not None:
        sentences.append(f"Total time {_duration(seconds)}.")
    stages = _stage_times(results.get("stage_seconds"))
    if stages:
        sentences.append(stages)
    return " ".join(sentences) or "not recorded."


def _scoring_sentence(scoring: str) -> str:
    """Say which rules scored the Backend answers (older runs had only ours)."""
    if scoring == "official":
        return (
            'Answers scored by the official evaluator\'s rules (`env.scoring = "official"`, '
            "the paper's metric)."
        )
    return (
        f'Answers scored by our rules (`env.scoring = "{scoring}"`; the paper\'s metric '
        'is `"official"`).'
    )


def _stage_times(times: Any) -> str:
    """Return a sentence of the stages that generate episodes and their times."""
    if not isinstance(times, Mapping):
        return ""
    collect, evaluate = [], []
    for stage, seconds in times.items():
        kind, _, name = str(stage).partition("/")
        if kind == "collect":
            if name == "train":
                what = "training episodes"
            elif name == WARM_START:
                what = "the warm start's demonstrations"
            else:
                what = f"{name} demonstrations"
            collect.append(f"{what} {_duration(seconds)}")
        elif kind == "eval":
            evaluate.append(f"`{name}` {_duration(seconds)}")
    parts = []
    if collect:
        parts.append("collecting " + ", ".join(collect))
    if evaluate:
        parts.append("evaluating " + ", ".join(evaluate))
    return ("Time in " + "; ".join(parts) + ".") if parts else ""


def _fit_metrics(results: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    methods = results.get("methods") or {}
    pairs = []
    for name in _method_order(results):
        fit = (methods.get(name) or {}).get("fit")
        if isinstance(fit, Mapping) and fit.get("status") == "trained":
            pairs.append((name, fit.get("metrics") or {}))
    return pairs


def _training_values(
    results: Mapping[str, Any], wanted: Callable[[str], bool]
) -> dict[str, dict[str, float]]:
    """Return ``{method: {key: value}}``: the finite final fit metrics whose key is wanted."""
    values = {}
    for name, metrics in _fit_metrics(results):
        chosen = {k: finite_number(v) for k, v in metrics.items() if wanted(k)}
        chosen = {k: v for k, v in chosen.items() if v is not None}
        if chosen:
            values[name] = chosen
    return values


def _training_table(results: Mapping[str, Any]) -> str:
    fits = _fit_metrics(results)
    keys = sorted({k for _, m in fits for k in m if "accuracy" in k})
    if any("train/loss" in m for _, m in fits):
        keys.append("train/loss")
    if not keys:
        return ""
    rows = [["Method", *(f"`{k}`" for k in keys)], ["---"] * (len(keys) + 1)]
    for name, metrics in fits:
        cells = []
        for key in keys:
            value = finite_number(metrics.get(key))
            if value is None:
                cells.append(_DASH)
            else:
                cells.append(f"{value * 100:.1f}%" if "accuracy" in key else f"{value:.4g}")
        rows.append([label_of(results, name), *cells])
    return "\n".join("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows) + "\n"


def _loss_curves(results: Mapping[str, Any]) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """Return ``{method: {tag: [(step, value), ...]}}``: each fit's loss-like history."""
    methods = results.get("methods") or {}
    curves: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for name in _method_order(results):
        fit = (methods.get(name) or {}).get("fit")
        if not isinstance(fit, Mapping) or fit.get("status") != "trained":
            continue
        tags: dict[str, list[tuple[float, float]]] = {}
        for point in fit.get("history") or []:
            if not isinstance(point, Sequence) or isinstance(point, str) or len(point) != 3:
                continue
            step, tag, value = finite_number(point[0]), point[1], finite_number(point[2])
            if isinstance(tag, str) and tag.endswith("loss") and None not in (step, value):
                tags.setdefault(tag, []).append((step, value))
        if tags:
            curves[name] = tags
    return curves


def _metric_bars(
    ax: Any,
    metric: str,
    points: list[tuple[str, Mapping[str, Any]]],
    colors: dict[str, str],
    label: Callable[[str], str],
) -> None:
    kind = _KIND[metric]
    scale = 100.0 if kind == "percent" else 1.0
    values = [finite_number(e[metric]) * scale for _, e in points]
    below, above = [], []
    for (_, evaluation), value in zip(points, values):
        interval = _interval(evaluation, metric)
        low, high = (
            (value, value) if interval is None else (interval.low * scale, interval.high * scale)
        )
        below.append(max(0.0, value - low))
        above.append(max(0.0, high - value))
    names = [label(n) for n, _ in points]
    bars = ax.bar(
        names,
        values,
        yerr=[below, above],
        capsize=4,
        color=[colors[n] for n, _ in points],
        error_kw={"elinewidth": 1},
    )
    top = max(v + a for v, a in zip(values, above))
    lift = 0.02 * max(top, 1e-9)
    for bar, value, extra in zip(bars, values, above):
        # Above the error bar, so the label never sits on the whisker.
        x = bar.get_x() + bar.get_width() / 2
        label = _format(value / scale, kind)
        ax.text(x, value + extra + lift, label, ha="center", va="bottom", fontsize=8)
    unit = " (%)" if kind == "percent" else ""
    ax.set_ylabel(_TITLE[metric] + unit)
    ax.set_title(f"{_TITLE[metric]} on held-out tasks (95% CI)", fontsize=11)
    if kind == "percent":
        ax.set_ylim(0, max(5.0, min(100.0, top * 1.15)))
    elif kind == "score":
        ax.set_ylim(0, max(0.05, min(1.0, top * 1.15)))
    else:
        ax.set_ylim(0, max(1.0, top * 1.15))
    ax.tick_params(axis="x", labelsize=9)
    ax.grid(axis="y", alpha=0.3)


def _stage_points(
    results: Mapping[str, Any], metric: str
) -> dict[str, list[tuple[float, float, float]]]:
    """Each trained method's (value, low, high) at its stages: raw model, warm start, after RL.

    Empty without a warm start (there is then one stage of training only).
    """
    evals = dict(_evals(results))
    raw, warm = evals.get(BASELINE), evals.get(WARM_START)
    if raw is None or warm is None or finite_number(warm.get(metric)) is None:
        return {}

    def point(evaluation: Mapping[str, Any]) -> tuple[float, float, float]:
        value = float(finite_number(evaluation.get(metric)) or 0.0)
        interval = _interval(evaluation, metric)
        return (value, value, value) if interval is None else (value, interval.low, interval.high)

    start = [point(raw), point(warm)]
    lines = {WARM_START: start}
    for name, evaluation in evals.items():
        if name not in (BASELINE, WARM_START) and finite_number(evaluation.get(metric)) is not None:
            lines[name] = [*start, point(evaluation)]
    return lines


def _stage_lines(
    ax: Any,
    metric: str,
    lines: dict[str, list[tuple[float, float, float]]],
    colors: dict[str, str],
    label: Callable[[str], str],
) -> None:
    """Draw each method's metric at each stage of its training, with 95% intervals."""
    scale = 100.0 if _KIND[metric] == "percent" else 1.0
    offsets = {name: 0.04 * (i - (len(lines) - 1) / 2) for i, name in enumerate(lines)}
    for name, points in lines.items():
        xs = [x + offsets[name] for x in range(len(points))]
        values = [v * scale for v, _, _ in points]
        errors = [
            [(v - lo) * scale for v, lo, _ in points],
            [(hi - v) * scale for v, _, hi in points],
        ]
        ax.errorbar(
            xs,
            values,
            yerr=errors,
            marker="o",
            capsize=3,
            label=label(name),
            color=colors.get(name),
        )
    ax.set_xticks(range(3), ["raw model", "warm start (BC)", "after RL"])
    ax.set_xlim(-0.3, 2.3)
    unit = " (%)" if _KIND[metric] == "percent" else ""
    ax.set_ylabel(_TITLE[metric] + unit)
    ax.set_title(f"{_TITLE[metric]} through training (held-out tasks, 95% CI)", fontsize=11)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(axis="y", alpha=0.3)


def _accuracy_bars(
    ax: Any, accuracies: dict[str, dict[str, float]], label: Callable[[str], str]
) -> None:
    """Draw grouped bars: methods on the x axis, one colour per accuracy metric."""
    keys = sorted({k for values in accuracies.values() for k in values})
    width = min(0.25, 0.8 / len(keys))
    for index, key in enumerate(keys):
        xs, heights = [], []
        for position, values in enumerate(accuracies.values()):
            if key in values:
                xs.append(position + width * (index - (len(keys) - 1) / 2))
                heights.append(values[key] * 100)
        bars = ax.bar(xs, heights, width=width, color=f"C{index % 10}", label=key)
        ax.bar_label(bars, labels=[f"{h:.0f}%" for h in heights], padding=1, fontsize=7)
    ax.set_xticks(range(len(accuracies)), [label(n) for n in accuracies])
    ax.set_xlim(-0.6, len(accuracies) - 0.4)
    ax.axhline(50, color="grey", linestyle="--", linewidth=0.8)  # chance, for pairs
    ax.set_ylim(0, 100 + 12 * len(keys))  # headroom for the legend above the bars
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("accuracy (%)")
    ax.set_title("Pairwise accuracy (chosen over rejected)", fontsize=11)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(axis="y", alpha=0.3)


def _loss_panels(
    fig: Any,
    curves: dict[str, dict[str, list[tuple[float, float]]]],
    label: Callable[[str], str],
) -> None:
    """Draw one panel per method (two columns); a tag has one colour in every panel."""
    rows, columns = math.ceil(len(curves) / 2), min(2, len(curves))
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    tags = sorted({tag for series in curves.values() for tag in series})
    colors = {tag: f"C{index % 10}" for index, tag in enumerate(tags)}
    for ax, (name, series) in zip(axes, curves.items()):
        for tag, points in sorted(series.items()):
            steps, values = zip(*sorted(points))
            marker = "." if len(steps) < 20 else None
            ax.plot(steps, values, label=tag, color=colors[tag], linewidth=1.2, marker=marker)
        ax.set_title(label(name), fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[len(curves) :]:
        ax.set_visible(False)
    fig.suptitle("Training losses", fontsize=11)
