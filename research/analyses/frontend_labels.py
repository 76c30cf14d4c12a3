"""Whether a Frontend comparison's episode pairs are ordered as their pages differ.

SWEET-RL's critic (and MT-DPO) learn from pairs of one task's episodes, the one of higher
final similarity to the target chosen. A critic that reads text can only learn an order
the pages' designs show. This renders every training episode's final page and its target,
measures how far apart they are as the simulated human sees them (the summed importance
of :func:`sweetrl_gym.simulators.visual.page_differences`: sections missing or extra,
background and text colours, columns, alignment, headings, heights), and counts, over all
pairs of a task's episodes whose similarities differ by at least each gap, whether the
page of higher similarity is the one with less difference (agrees), more (disagrees) or
as much (tied). The gaps are the ``min_reward_gap`` values a run could use.

    python -m research.analyses.frontend_labels runs/frontend-quick

Prints a table and saves JSON (``--output``; default ``frontend_labels.json`` in the
folder). Frontend comparisons only. Renders pages; trains and generates nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Sequence
from pathlib import Path

from research.analyses.frontend_differences import final_page_differences
from research.analyses.run_folder import training_run
from sweetrl_gym.render import Renderer
from sweetrl_gym.trajectory import Trajectory

__all__ = ["GAPS", "design_distances", "label_agreement", "main"]

GAPS = (0.0, 0.02, 0.05, 0.1)
"""The similarity gaps counted (each pair counts under every gap it reaches)."""


def design_distances(episodes: Sequence[Trajectory], renderer: Renderer) -> list[float]:
    """How far each episode's final page is from its target, as the simulated human sees it.

    Args:
        episodes: Frontend episodes; each needs ``reference["ground_truth"]``.
        renderer: Renders the pages (each target once).

    Returns:
        Per episode, the summed importance of the page's differences from the target. A
        page that does not render counts as an empty page (every section missing).

    Raises:
        KeyError: If an episode's reference has no ``ground_truth`` (not a Frontend run).

    """
    return [
        sum(d.importance for d in differences)
        for differences in final_page_differences(episodes, renderer)
    ]


def label_agreement(
    task_ids: Sequence[str],
    rewards: Sequence[float],
    distances: Sequence[float],
    gaps: Sequence[float] = GAPS,
) -> dict[str, dict[str, int]]:
    """Count a task's episode pairs by whether similarity and design distance agree.

    Args:
        task_ids: Each episode's task.
        rewards: Each episode's final similarity.
        distances: Each episode's :func:`design_distances` entry.
        gaps: Count the pairs whose similarities differ by at least each of these.

    Returns:
        Per gap (as text), ``pairs``, ``agrees``, ``disagrees`` and ``tied``.

    Raises:
        ValueError: If the three sequences differ in length.

    """
    if not len(task_ids) == len(rewards) == len(distances):
        raise ValueError("task_ids, rewards and distances need one entry per episode")
    by_task: dict[str, list[int]] = {}
    for index, task in enumerate(task_ids):
        by_task.setdefault(task, []).append(index)
    counts = {
        f"{gap:g}": dict.fromkeys(("pairs", "agrees", "disagrees", "tied"), 0) for gap in gaps
    }
    for indices in by_task.values():
        for a, b in itertools.combinations(indices, 2):
            better, worse = (a, b) if rewards[a] > rewards[b] else (b, a)
            gap = rewards[better] - rewards[worse]
            if distances[better] < distances[worse]:
                verdict = "agrees"
            elif distances[better] > distances[worse]:
                verdict = "disagrees"
            else:
                verdict = "tied"
            for threshold in gaps:
                if gap >= threshold and gap > 0:
                    counts[f"{threshold:g}"]["pairs"] += 1
                    counts[f"{threshold:g}"][verdict] += 1
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m research.analyses.frontend_labels RUN``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a Frontend comparison's folder (one seed)")
    parser.add_argument("--output", type=Path, help="the JSON file (default: in the folder)")
    args = parser.parse_args(argv)
    _, buffer = training_run(args.run)
    episodes = list(buffer)
    with Renderer() as renderer:
        distances = design_distances(episodes, renderer)
    counts = label_agreement([t.task_id for t in episodes], [t.reward for t in episodes], distances)
    output = args.output or args.run / "frontend_labels.json"
    output.write_text(json.dumps({"episodes": len(episodes), "gaps": counts}, indent=2) + "\n")
    print("similarity gap  pairs  agrees  disagrees  tied")
    for gap, row in counts.items():
        print(
            f"{'>= ' + gap:>14}  {row['pairs']:>5}  {row['agrees']:>6}  "
            f"{row['disagrees']:>9}  {row['tied']:>4}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
