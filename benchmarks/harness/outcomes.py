"""Each evaluated episode's outcome, kept in ``results.json`` so that seeds pool from it alone.

Pooling seeds (:mod:`benchmarks.harness.pool`) pairs every (seed, task) with the base on
it, so it needs each episode's task and score, not only a method's mean. A run folder has
them in ``eval/<method>.jsonl``, but that folder (episodes, weights: gigabytes) rarely
outlives the machine it ran on. The outcomes are the few numbers pooling reads, small
enough to keep with the report: a seed run today pools with one run next month from the
two ``results.json`` files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sweetrl_gym.setting_types import is_finite_number
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

__all__ = ["episode_outcomes", "outcome_buffer"]

_COLUMNS = ("task_id", "reward", "success")


def episode_outcomes(buffer: TrajectoryBuffer) -> dict[str, list[Any]]:
    """Return each episode's task, score and success, in the buffer's order (columns).

    Args:
        buffer: A method's evaluation episodes.

    Returns:
        ``{"task_id": [...], "reward": [...], "success": [...]}``, plus ``"similarity"``
        when every episode is a Frontend one (its ``metadata["similarity"]``).

    """
    columns: dict[str, list[Any]] = {
        "task_id": [t.task_id for t in buffer],
        "reward": [float(t.reward) for t in buffer],
        "success": [bool(t.success) for t in buffer],
    }
    similarities = buffer.similarities()
    if similarities is not None:
        columns["similarity"] = similarities
    return columns


def outcome_buffer(outcomes: Mapping[str, Any], where: str = "outcomes") -> TrajectoryBuffer:
    """Rebuild episodes that carry only their outcomes (no turns), for paired comparisons.

    What :func:`agents.pooled_paired_difference` and :func:`agents.paired_difference`
    read of an episode (its task, reward, success and similarity) is what
    :func:`episode_outcomes` kept; the dialogues are not there.

    Args:
        outcomes: As :func:`episode_outcomes` returns (read back from JSON).
        where: Names the outcomes in errors (e.g. a file and a method).

    Returns:
        One turnless :class:`~sweetrl_gym.trajectory.Trajectory` per episode.

    Raises:
        ValueError: If a column is missing, the columns differ in length, or a value has
            the wrong type (a hand-edited or truncated file).

    """
    if not isinstance(outcomes, Mapping):
        kind = type(outcomes).__name__
        raise ValueError(f"{where}: expected columns {list(_COLUMNS)}, got {kind}")
    names = [*_COLUMNS, *(["similarity"] if "similarity" in outcomes else [])]
    columns = [outcomes.get(name) for name in names]
    if not all(isinstance(column, list) for column in columns):
        missing = [n for n, c in zip(names, columns) if not isinstance(c, list)]
        raise ValueError(f"{where}: no list of {', '.join(missing)}")
    if len({len(column) for column in columns}) != 1:
        lengths = ", ".join(f"{n} {len(c)}" for n, c in zip(names, columns))
        raise ValueError(f"{where}: columns of different lengths ({lengths})")
    trajectories = []
    for row in zip(*columns):
        task_id, reward, success, *similarity = row
        numbers = [reward, *similarity]
        if (
            not isinstance(task_id, str)
            or not isinstance(success, bool)
            or not all(is_finite_number(x) for x in numbers)
        ):
            raise ValueError(f"{where}: a malformed episode {list(row)!r}")
        metadata = {"similarity": float(similarity[0])} if similarity else {}
        trajectories.append(
            Trajectory(
                task_id=task_id,
                turns=[],
                messages=[],
                reward=float(reward),
                success=success,
                answer="",
                metadata=metadata,
            )
        )
    return TrajectoryBuffer(trajectories)
