"""Evaluate an agent on a split with the paper's metrics and bootstrap confidence intervals.

The intervals, and the paired comparisons of two evaluations, are :mod:`agents.statistics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agents.base import Agent, PrivilegedAgent
from agents.rollout import collect
from agents.statistics import Estimate, Interval, bootstrap_ci
from sweetrl_gym.actions import parse_action
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

__all__ = ["evaluate", "summarize"]


def evaluate(
    agent: Agent | PrivilegedAgent,
    env_id: str = "ColBench-Backend-v0",
    split: str = "test",
    num_tasks: int | None = None,
    *,
    samples_per_task: int = 1,
    num_envs: int = 8,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    progress: bool = True,
    shard: Literal["auto"] | None = None,
) -> dict[str, float]:
    """Play the first ``num_tasks`` tasks of a split and score the agent.

    Every agent evaluated with the same arguments plays the same tasks in the same
    order, so scores compare fairly.

    Args:
        agent: The agent to evaluate.
        env_id: A registered environment id.
        split: ``"test"`` (default) or ``"train"``.
        num_tasks: The first this many tasks of the split (default: all of them).
        samples_per_task: Episodes per task; a task's score is their mean.
        num_envs: Environments stepped in lockstep.
        seed: Seeds the resets and the bootstrap.
        env_kwargs: Extra keyword arguments for ``gym.make`` (e.g. ``simulator=``).
        out: Also keep the episodes in this ``.jsonl`` file (see :func:`collect`).
        resume: Continue an evaluation whose episodes ``out`` already holds.
        progress: Show a progress bar.
        shard: ``"auto"``: under ``accelerate launch``/``torchrun``, split the episodes
            across the processes (every one must make the same call); each returns the
            metrics of all of them (see :func:`~agents.rollout.collect`).

    Returns:
        See :func:`summarize`.

    Raises:
        ValueError: If ``num_tasks`` is out of range or ``shard`` is not ``"auto"``/``None``.

    """
    import gymnasium as gym

    if shard not in (None, "auto"):  # a share of the episodes alone would be mis-scored
        raise ValueError(f"shard must be None or 'auto', got {shard!r}")
    probe = gym.make(env_id, split=split, **dict(env_kwargs or {}))
    try:
        available = len(probe.unwrapped.tasks)
    finally:
        probe.close()
    if num_tasks is None:
        num_tasks = available
    if not 1 <= num_tasks <= available:
        raise ValueError(f"num_tasks must be in 1..{available} for the {split} split")
    buffer = collect(
        env_id,
        agent,
        task_indices=range(num_tasks),
        samples_per_task=samples_per_task,
        num_envs=min(num_envs, num_tasks * samples_per_task),
        split=split,
        seed=seed,
        env_kwargs=env_kwargs,
        out=out,
        resume=resume,
        progress=progress,
        shard=shard,
    )
    return summarize(buffer, seed=seed)


def summarize(
    buffer: TrajectoryBuffer, *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> dict[str, float]:
    """Score a buffer of evaluation episodes.

    Metrics are means over tasks (a task's repeats are averaged first); intervals come
    from a percentile bootstrap over tasks.

    Args:
        buffer: Episodes to score.
        confidence: Coverage of the intervals.
        resamples: Bootstrap resamples.
        seed: Seed of the bootstrap.

    Returns:
        ``success_rate`` (all tests pass), ``tests_passed`` (mean fraction of tests
        passed; for frontend tasks ``similarity``), ``avg_turns``, ``answer_rate``
        (share of episodes the agent ended with ``I WANT TO ANSWER:``; the others ran
        out of turns, their last message scored as it was), each with
        ``<metric>_ci_low`` / ``<metric>_ci_high`` (read back as an
        :class:`~agents.statistics.Estimate` by ``Estimate.from_record(metrics, name)``),
        plus ``num_tasks`` and ``num_episodes``.

    Raises:
        ValueError: If the buffer is empty.

    """
    if len(buffer) == 0:
        raise ValueError("cannot summarize an empty buffer")
    groups = list(buffer.group_by_task().values())
    score_name = "tests_passed" if buffer.similarities() is None else "similarity"
    per_task = {
        "success_rate": [np.mean([t.success for t in g]) for g in groups],
        score_name: [np.mean([t.reward for t in g]) for g in groups],
        "avg_turns": [np.mean([t.num_turns for t in g]) for g in groups],
        "answer_rate": [np.mean([_answered(t) for t in g]) for g in groups],
    }
    metrics: dict[str, float] = {}
    rng = np.random.default_rng(seed)
    for name, values in per_task.items():
        interval = Interval(
            *bootstrap_ci(values, confidence=confidence, resamples=resamples, rng=rng)
        )
        metrics.update(Estimate(float(np.mean(values)), interval).to_record(name))
    metrics["num_tasks"] = float(len(groups))
    metrics["num_episodes"] = float(len(buffer))
    return metrics


def _answered(trajectory: Trajectory) -> bool:
    """Whether the agent's last message gave its final answer (``I WANT TO ANSWER:``)."""
    return bool(trajectory.turns) and parse_action(trajectory.turns[-1].action).is_answer
