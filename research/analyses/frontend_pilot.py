"""How far can knowing the design lift a skeleton page? The Frontend pilot.

A small policy on the CPU writes skeleton pages (:mod:`sweetrl_gym.simulators.skeleton`), not
whole target pages. Collaboration can only pay off on the Frontend if a skeleton written
from what the simulated human can say scores clearly higher than one written knowing
nothing. Reads top to bottom: take held-out bundled tasks -> render each target page ->
score against it (:func:`~sweetrl_gym.similarity.perceptual_similarity` unless told
otherwise) a blank page, the default skeleton (:meth:`PageSketch.default`), the skeleton
of every fact the human can tell but the sections' sizes, and the skeleton of every fact
(:meth:`PageSketch.from_blocks`); then play the tasks in ``ColBench-Frontend-v0`` with
the :class:`~agents.FrontendCollaborator` at each ``--collaborator ASK:APPLY`` setting
(its final page's similarity) -> print each variant's mean with a 95% bootstrap interval
over tasks and its paired difference from the default skeleton, and save every task's
scores (``--output``; default ``runs/analyses/frontend_pilot.json`` under the current
folder).

    python -m research.analyses.frontend_pilot --tasks 100 --collaborator 0.5:0.8

``--max-turns`` sets the collaborator's turn limit (default 4).

Needs the renderer (``python -m sweetrl_gym.render.install``); about 4 s a task on one
CPU core.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from agents.statistics import bootstrap_ci
from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.simulators.skeleton import PageSketch

__all__ = ["VARIANTS", "collaborator_scores", "pilot_scores", "summarize_pilot"]

RESULTS = Path("runs") / "analyses" / "frontend_pilot.json"
BLANK_PAGE = "<html><body></body></html>"

VARIANTS = ("blank", "default", "facts_but_sizes", "all_facts")
"""What is scored against each target: a blank page, the skeleton written knowing nothing,
knowing every fact but the sections' sizes, and knowing every fact."""


def pilot_scores(
    tasks: Sequence[Any],
    renderer: Any,
    similarity: Callable[[Any, Any], float],
    *,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Score each variant of :data:`VARIANTS` against each task's target page.

    Args:
        tasks: Frontend tasks (their ``ground_truth`` is the target page).
        renderer: A :class:`~sweetrl_gym.render.Renderer`.
        similarity: A function of two screenshots, in [0, 1].
        progress: Show a progress bar.

    Returns:
        One row per task: ``task_id``, ``sections`` (how many the target has) and a
        score per variant.

    """
    default_page = renderer.render_page(PageSketch.default().to_html()).image
    blank_page = renderer.render_page(BLANK_PAGE).image
    rows = []
    for task in tqdm(tasks, desc="tasks", unit="task", disable=not progress):
        target = renderer.render_page(task.ground_truth)
        facts = PageSketch.from_blocks(target.blocks)
        pages = {
            "facts_but_sizes": facts.with_default_sizes().to_html(),
            "all_facts": facts.to_html(),
        }
        images = {"blank": blank_page, "default": default_page}
        images |= {name: renderer.render_page(html).image for name, html in pages.items()}
        row: dict[str, Any] = {"task_id": task.task_id, "sections": len(facts.sections)}
        row |= {name: float(similarity(target.image, images[name])) for name in VARIANTS}
        rows.append(row)
    return rows


def collaborator_scores(
    tasks: Sequence[Any],
    ask_probability: float,
    apply_probability: float,
    *,
    max_turns: int = 4,
    progress: bool = True,
) -> dict[str, float]:
    """Play each task once with the collaborator; return each task's final similarity.

    Args:
        tasks: The first tasks of the bundled test split (played in that order).
        ask_probability: The collaborator's chance of asking about the design first.
        apply_probability: Its chance of applying each thing the human says.
        max_turns: The environment's turn limit.
        progress: Show a progress bar.

    Returns:
        ``{task_id: similarity}``.

    """
    from agents import FrontendCollaborator, collect

    agent = FrontendCollaborator(ask_probability, apply_probability, max_turns=max_turns)
    buffer = collect(
        "ColBench-Frontend-v0",
        agent,
        task_indices=range(len(tasks)),
        num_envs=8,
        split="test",
        env_kwargs={"max_turns": max_turns},
        progress=progress,
    )
    return {t.task_id: float(t.reward) for t in buffer}


def summarize_pilot(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each variant's mean and interval, and the spreads the pilot is about.

    Args:
        rows: :func:`pilot_scores`' rows.

    Returns:
        ``means`` (per variant, :data:`VARIANTS` and any other score column such as a
        collaborator's: ``mean``, ``ci_low``, ``ci_high``), ``spreads`` (each variant's
        paired difference from ``default``, with its interval and the share of tasks
        where it is positive) and ``num_tasks``.

    Raises:
        ValueError: If there are no rows.

    """
    if not rows:
        raise ValueError("no tasks were scored")
    names = [k for k in rows[0] if k not in ("task_id", "sections")]
    means = {}
    for name in names:
        values = np.array([row[name] for row in rows])
        low, high = bootstrap_ci(values)
        means[name] = {"mean": float(values.mean()), "ci_low": low, "ci_high": high}
    spreads = {}
    for name in (n for n in names if n not in ("blank", "default")):
        values = np.array([row[name] - row["default"] for row in rows])
        low, high = bootstrap_ci(values)
        spreads[f"{name}_minus_default"] = {
            "mean": float(values.mean()),
            "ci_low": low,
            "ci_high": high,
            "share_positive": float((values > 0).mean()),
        }
    return {"means": means, "spreads": spreads, "num_tasks": len(rows)}


def _table(summary: dict[str, Any]) -> str:
    lines = [f"{'variant':<46} similarity [95% CI]"]
    for name, m in summary["means"].items():
        lines.append(f"{name:<46} {m['mean']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}]")
    for name, s in summary["spreads"].items():
        lines.append(
            f"{name:<46} {s['mean']:+.3f} [{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]"
            f"  (higher on {s['share_positive']:.0%} of tasks)"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the pilot from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=100, help="held-out tasks (default 100)")
    parser.add_argument("--split", choices=("train", "test"), default="test")
    parser.add_argument(
        "--collaborator",
        action="append",
        default=[],
        metavar="ASK:APPLY",
        help="also play the tasks with the collaborator at these probabilities (repeatable)",
    )
    parser.add_argument(
        "--max-turns", type=int, default=4, help="the collaborator's turn limit (default 4)"
    )
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.tasks < 1:
        parser.error(f"--tasks must be at least 1, got {args.tasks}")
    if args.max_turns < 1:
        parser.error(f"--max-turns must be at least 1, got {args.max_turns}")
    settings = [_probabilities(text, parser) for text in args.collaborator]
    if settings and args.split != "test":
        parser.error("--collaborator plays the test split's tasks: use --split test")

    from sweetrl_gym.render import default_renderer
    from sweetrl_gym.similarity import perceptual_similarity
    from sweetrl_gym.tasks.frontend_loaders import load_frontend_tasks

    tasks = load_frontend_tasks("bundled", args.split)[: args.tasks]
    started = time.perf_counter()
    rows = pilot_scores(
        tasks, default_renderer(), perceptual_similarity, progress=not args.no_progress
    )
    for ask, apply in settings:
        scores = collaborator_scores(
            tasks, ask, apply, max_turns=args.max_turns, progress=not args.no_progress
        )
        for row in rows:
            row[f"collaborator(ask={ask:g}, apply={apply:g})"] = scores[row["task_id"]]
    summary = summarize_pilot(rows)
    print(_table(summary))
    report = {
        "split": args.split,
        "similarity": "perceptual",
        "max_turns": args.max_turns,
        "seconds": round(time.perf_counter() - started, 1),
        "machine": platform.platform(),
        **summary,
        "tasks": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.output, lambda path: path.write_text(json.dumps(report, indent=2) + "\n"))
    print(f"saved: {args.output}")
    return 0


def _probabilities(text: str, parser: argparse.ArgumentParser) -> tuple[float, float]:
    try:
        ask, apply = (float(x) for x in text.split(":"))
    except ValueError:
        parser.error(f"--collaborator takes ASK:APPLY, e.g. 0.5:0.8, got {text!r}")
    if not (0 <= ask <= 1 and 0 <= apply <= 1):
        parser.error(f"--collaborator probabilities must be in [0, 1], got {text!r}")
    return ask, apply


if __name__ == "__main__":
    sys.exit(main())
