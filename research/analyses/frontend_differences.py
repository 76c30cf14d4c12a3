"""What each method of a Frontend comparison gets wrong about its pages, by kind.

A Frontend comparison scores each final page by one number, its similarity to the target.
This says what lies behind the number: it renders every evaluated final page and its
target and lists their differences as the simulated human sees them
(:func:`sweetrl_gym.simulators.visual.page_differences`: sections missing, extra or
replaced, background and text colours, columns, alignment, headings, heights). Per
method: how many differences of each kind a page has on average, and their summed
importance; how many sections its pages have, and the share that has the target's
sections in the target's order (none missing, extra or replaced); against the base (the
warm start) on the same tasks, the mean paired change of that importance with its 95%
bootstrap interval over tasks. A method whose pages lost similarity shows here what it
stopped getting right.

    python -m research.analyses.frontend_differences runs/frontend-quick

Prints a table and saves JSON (``--output``; default ``frontend_differences.json`` in the
folder). Frontend comparisons only. Renders pages; trains and generates nothing.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.statistics import bootstrap_ci
from sweetrl_gym.render import Block, Renderer, RenderError
from sweetrl_gym.simulators.visual import Difference, page_differences
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

__all__ = [
    "KINDS",
    "STRUCTURE",
    "difference_profile",
    "final_page_differences",
    "main",
    "summarise",
]

KINDS = (
    "missing",
    "extra",
    "replaced",
    "background",
    "text_colour",
    "columns",
    "alignment",
    "heading",
    "heading_size",
    "height",
)
"""The kinds of :class:`~sweetrl_gym.simulators.visual.Difference`, in the table's order."""

_MEANS = (*KINDS, "importance", "sections", "sections_right")


STRUCTURE = ("missing", "extra", "replaced")
"""The kinds of difference that change a page's sections rather than one section's looks."""


def final_page_differences(
    episodes: Sequence[Trajectory], renderer: Renderer
) -> list[list[Difference]]:
    """Each episode's final-page differences from its target, as the simulated human sees them.

    Args:
        episodes: Frontend episodes; each needs ``reference["ground_truth"]``.
        renderer: Renders the pages (each target once).

    Returns:
        Per episode, :func:`~sweetrl_gym.simulators.visual.page_differences` of its final
        page against its target. A page that does not render, or an episode that never
        answered, counts as an empty page (every section missing).

    Raises:
        KeyError: If an episode's reference has no ``ground_truth`` (not a Frontend run).

    """
    return [page_differences(target, page) for target, page in _rendered_blocks(episodes, renderer)]


def _rendered_blocks(
    episodes: Sequence[Trajectory], renderer: Renderer
) -> list[tuple[tuple[Block, ...], tuple[Block, ...]]]:
    """Each episode's target and final page as rendered blocks (see final_page_differences)."""
    targets: dict[str, tuple[Block, ...]] = {}
    found = []
    for episode in episodes:
        target = episode.reference["ground_truth"]
        if target not in targets:
            targets[target] = renderer.render_page(target).blocks
        try:
            blocks = renderer.render_page(episode.answer).blocks if episode.answer else ()
        except RenderError:  # bad HTML is a page with nothing on it
            blocks = ()
        found.append((targets[target], blocks))
    return found


def difference_profile(
    episodes: Sequence[Trajectory], renderer: Renderer
) -> list[dict[str, float]]:
    """Count each episode's final-page differences from its target, by kind.

    Args:
        episodes: Frontend episodes, as for :func:`final_page_differences`.
        renderer: Renders the pages.

    Returns:
        Per episode, the number of differences of each of :data:`KINDS`; ``importance``,
        their summed importance; ``sections``, how many top-level sections the page has;
        and ``sections_right``, 1 when it has the target's sections in the target's order
        (no difference of a :data:`STRUCTURE` kind), else 0.

    """
    profiles = []
    for target, page in _rendered_blocks(episodes, renderer):
        differences = page_differences(target, page)
        counts = Counter(difference.kind for difference in differences)
        profile = {kind: float(counts.get(kind, 0)) for kind in KINDS}
        profile["importance"] = float(sum(d.importance for d in differences))
        profile["sections"] = float(len(page))
        profile["sections_right"] = float(not any(counts[kind] for kind in STRUCTURE))
        profiles.append(profile)
    return profiles


def summarise(
    profiles: Mapping[str, Sequence[Mapping[str, float]]],
    task_ids: Mapping[str, Sequence[str]],
    base: str,
) -> dict[str, dict[str, Any]]:
    """Average each method's profiles per task, then over tasks; pair them with the base.

    Args:
        profiles: Per method, :func:`difference_profile` of its evaluated episodes.
        task_ids: Per method, each episode's task (the same order as its profiles).
        base: The method the others are paired with (its tasks must cover theirs).

    Returns:
        Per method: ``tasks``; the mean of each kind, of ``importance``, of ``sections``
        and of ``sections_right`` (the share of pages with the target's sections) per
        page; ``section_counts``, how many pages have each number of sections (over
        episodes, not tasks); and, except for the base, ``importance_vs_base`` (the mean
        paired change) with ``importance_vs_base_ci`` (95% percentile bootstrap over
        tasks).

    Raises:
        ValueError: If a method's profiles and task ids differ in length, the base is
            missing, or a method has a task the base lacks.

    """
    if base not in profiles:
        raise ValueError(f"the base {base!r} has no evaluation here")
    per_task: dict[str, dict[str, dict[str, float]]] = {}
    section_counts: dict[str, Counter[int]] = {}
    for method, rows in profiles.items():
        if len(rows) != len(task_ids[method]):
            raise ValueError(f"{method}: {len(rows)} profiles for {len(task_ids[method])} tasks")
        grouped: dict[str, list[Mapping[str, float]]] = {}
        for task, row in zip(task_ids[method], rows):
            grouped.setdefault(task, []).append(row)
        section_counts[method] = Counter(int(row["sections"]) for row in rows)
        per_task[method] = {
            task: {key: float(np.mean([row[key] for row in group])) for key in group[0]}
            for task, group in grouped.items()
        }
    summary: dict[str, dict[str, Any]] = {}
    for method, tasks in per_task.items():
        entry: dict[str, Any] = {"tasks": len(tasks)}
        entry.update({key: float(np.mean([t[key] for t in tasks.values()])) for key in _MEANS})
        entry["section_counts"] = {str(n): c for n, c in sorted(section_counts[method].items())}
        if method != base:
            missing = sorted(set(tasks) - set(per_task[base]))
            if missing:
                raise ValueError(f"{method}: task {missing[0]} has no {base} evaluation")
            change = [tasks[t]["importance"] - per_task[base][t]["importance"] for t in tasks]
            entry["importance_vs_base"] = float(np.mean(change))
            entry["importance_vs_base_ci"] = list(bootstrap_ci(change))
        summary[method] = entry
    return summary


def _evaluations(run: Path) -> dict[str, TrajectoryBuffer]:
    """Load a comparison folder's finished evaluations (those with a metrics file)."""
    names = [
        path.name.removesuffix(".metrics.json") for path in (run / "eval").glob("*.metrics.json")
    ]
    found = {name: run / "eval" / f"{name}.jsonl" for name in sorted(names)}
    if not found:
        raise FileNotFoundError(f"{run / 'eval'} holds no finished evaluation")
    return {name: TrajectoryBuffer.load(path) for name, path in found.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m research.analyses.frontend_differences RUN``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a Frontend comparison's folder (one seed)")
    parser.add_argument("--base", default="warm-start", help="the method others pair with")
    parser.add_argument("--output", type=Path, help="the JSON file (default: in the folder)")
    args = parser.parse_args(argv)
    evaluations = _evaluations(args.run)
    with Renderer() as renderer:
        profiles = {
            name: difference_profile(list(buf), renderer) for name, buf in evaluations.items()
        }
    task_ids = {name: [t.task_id for t in buf] for name, buf in evaluations.items()}
    summary = summarise(profiles, task_ids, args.base)
    output = args.output or args.run / "frontend_differences.json"
    output.write_text(json.dumps({"base": args.base, "methods": summary}, indent=2) + "\n")
    print(_table(summary, args.base))
    return 0


def _table(summary: Mapping[str, Mapping[str, Any]], base: str) -> str:
    header = ["method", *_MEANS, f"vs {base} [95% CI]"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for method, entry in summary.items():
        versus = "—"
        if "importance_vs_base" in entry:
            low, high = entry["importance_vs_base_ci"]
            versus = f"{entry['importance_vs_base']:+.3f} [{low:+.3f}, {high:+.3f}]"
        cells = [f"{entry[key]:.2f}" for key in _MEANS]
        lines.append("| " + " | ".join([method, *cells, versus]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
