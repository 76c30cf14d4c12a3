"""Which way does a section more or less move a skeleton page's score? Nothing else changes.

On the Frontend comparisons, policies whose pages gained or lost sections moved perceptual
similarity and the differences the simulated human names in opposite directions, and
the direction flipped between seeds. This measures the section count on its own: for
each task it renders the target, writes the skeleton of every fact the human can tell
(:meth:`PageSketch.from_blocks`, the pilot's ``all_facts``), and then the same skeleton
with one or two sections taken out of its middle, or with a copy of its middle section
put in once or twice (same colours, columns and size: only the count changes). Each page
is scored against its target by perceptual similarity and by the summed importance of
the differences the human names (:func:`~sweetrl_gym.simulators.visual.page_differences`).
Per variant: the mean paired change from the all-facts page, with a 95% bootstrap
interval over tasks, and the share of tasks whose similarity rose.

    python -m research.analyses.section_count --tasks 50

Prints a table and saves every task's scores (``--output``; default
``runs/analyses/section_count.json``). Needs the renderer (``make browser``); about six
renders a task. Trains and generates nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from agents.statistics import bootstrap_ci
from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.simulators.skeleton import PageSketch
from sweetrl_gym.simulators.visual import page_differences

__all__ = ["VARIANTS", "main", "section_count_scores", "section_variants", "summarize_sections"]

RESULTS = Path("runs") / "analyses" / "section_count.json"

_CHANGES = {"two_missing": -2, "one_missing": -1, "all_facts": 0, "one_extra": 1, "two_extra": 2}

VARIANTS = tuple(_CHANGES)
"""The all-facts skeleton, with sections taken out of its middle or copies put in."""


def section_variants(sketch: PageSketch) -> dict[str, PageSketch]:
    """Return the skeleton and its variants of :data:`VARIANTS`.

    Args:
        sketch: A page of at least one section.

    Returns:
        Per variant its page. A variant that would leave no section is left out.

    Raises:
        ValueError: If the page has no section.

    """
    sections = list(sketch.sections)
    if not sections:
        raise ValueError("a page with no section has no middle to change")
    middle = len(sections) // 2
    variants = {}
    for name, change in _CHANGES.items():
        if change < 0 and len(sections) + change < 1:
            continue
        if change < 0:
            kept = sections[:middle] + sections[middle - change :]
        else:
            kept = sections[:middle] + [sections[middle]] * change + sections[middle:]
        variants[name] = PageSketch(tuple(kept))
    return variants


def section_count_scores(
    tasks: Sequence[Any],
    renderer: Any,
    similarity: Callable[[Any, Any], float],
    *,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Score each task's variants against its target page.

    Args:
        tasks: Frontend tasks (their ``ground_truth`` is the target page).
        renderer: A :class:`~sweetrl_gym.render.Renderer`.
        similarity: A function of two screenshots, in [0, 1].
        progress: Show a progress bar.

    Returns:
        One row per task: ``task_id``, ``sections`` (the target's), and per variant its
        ``similarity`` and ``importance`` (summed importance of the named differences).

    """
    rows = []
    for task in tqdm(tasks, desc="tasks", unit="task", disable=not progress):
        target = renderer.render_page(task.ground_truth)
        sketch = PageSketch.from_blocks(target.blocks)
        row: dict[str, Any] = {"task_id": task.task_id, "sections": len(sketch.sections)}
        for name, page in section_variants(sketch).items():
            rendered = renderer.render_page(page.to_html())
            differences = page_differences(target.blocks, rendered.blocks)
            row[name] = {
                "similarity": float(similarity(target.image, rendered.image)),
                "importance": float(sum(d.importance for d in differences)),
            }
        rows.append(row)
    return rows


def summarize_sections(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each variant's paired change from the all-facts page, on both measures.

    Args:
        rows: :func:`section_count_scores`' rows.

    Returns:
        ``num_tasks`` and, per variant, ``tasks`` (those that have it), the mean of each
        measure, and for the other variants ``<measure>_change`` with
        ``<measure>_change_ci`` (95% percentile bootstrap over tasks) and
        ``similarity_rose`` (the share of tasks whose similarity rose).

    Raises:
        ValueError: If there are no rows.

    """
    if not rows:
        raise ValueError("no tasks were scored")
    variants: dict[str, Any] = {}
    for name in VARIANTS:
        having = [row for row in rows if name in row]
        if not having:
            continue
        entry: dict[str, Any] = {"tasks": len(having)}
        for measure in ("similarity", "importance"):
            entry[measure] = float(np.mean([row[name][measure] for row in having]))
            if name != "all_facts":
                change = [row[name][measure] - row["all_facts"][measure] for row in having]
                entry[f"{measure}_change"] = float(np.mean(change))
                entry[f"{measure}_change_ci"] = list(bootstrap_ci(change))
                if measure == "similarity":
                    entry["similarity_rose"] = float(np.mean([c > 0 for c in change]))
        variants[name] = entry
    return {"num_tasks": len(rows), "variants": variants}


def _table(summary: dict[str, Any]) -> str:
    lines = [
        "| variant | tasks | similarity | change [95% CI] | rose on | named importance | change |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, entry in summary["variants"].items():
        cells = [name, str(entry["tasks"]), f"{entry['similarity']:.3f}"]
        if name == "all_facts":
            cells += ["—", "—", f"{entry['importance']:.2f}", "—"]
        else:
            low, high = entry["similarity_change_ci"]
            i_low, i_high = entry["importance_change_ci"]
            cells += [
                f"{entry['similarity_change']:+.3f} [{low:+.3f}, {high:+.3f}]",
                f"{entry['similarity_rose']:.0%}",
                f"{entry['importance']:.2f}",
                f"{entry['importance_change']:+.2f} [{i_low:+.2f}, {i_high:+.2f}]",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m research.analyses.section_count``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=50, help="held-out tasks (default 50)")
    parser.add_argument("--split", choices=("train", "test"), default="test")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.tasks < 1:
        parser.error(f"--tasks must be at least 1, got {args.tasks}")

    from sweetrl_gym.render import default_renderer
    from sweetrl_gym.similarity import perceptual_similarity
    from sweetrl_gym.tasks.frontend_loaders import load_frontend_tasks

    tasks = load_frontend_tasks("bundled", args.split)[: args.tasks]
    rows = section_count_scores(
        tasks, default_renderer(), perceptual_similarity, progress=not args.no_progress
    )
    summary = summarize_sections(rows)
    print(_table(summary))
    report = {"split": args.split, "similarity": "perceptual", **summary, "tasks": rows}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.output, lambda path: path.write_text(json.dumps(report, indent=2) + "\n"))
    print(f"saved: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
