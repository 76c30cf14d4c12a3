"""Evaluate an agent on a split with the paper's metrics and bootstrap confidence intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agents.base import Agent, PrivilegedAgent
from agents.rollout import collect
from sweetrl_gym.actions import parse_action
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

__all__ = [
    "SIMILARITY_MARGIN",
    "bootstrap_ci",
    "evaluate",
    "paired_difference",
    "pooled_paired_difference",
    "summarize",
]


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
        ``<metric>_ci_low`` / ``<metric>_ci_high``, plus ``num_tasks`` and
        ``num_episodes``.

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
        low, high = bootstrap_ci(values, confidence=confidence, resamples=resamples, rng=rng)
        metrics[name] = float(np.mean(values))
        metrics[f"{name}_ci_low"] = low
        metrics[f"{name}_ci_high"] = high
    metrics["num_tasks"] = float(len(groups))
    metrics["num_episodes"] = float(len(buffer))
    return metrics


def _answered(trajectory: Trajectory) -> bool:
    """Whether the agent's last message gave its final answer (``I WANT TO ANSWER:``)."""
    return bool(trajectory.turns) and parse_action(trajectory.turns[-1].action).is_answer


SIMILARITY_MARGIN = 0.02
"""Similarity change beyond which a Frontend task counts as gained or lost, and a page as
winning against another; a smaller change counts as a tie."""


def _win(change: float, margin: float) -> float:
    return 1.0 if change > margin else 0.0 if change < -margin else 0.5


def bootstrap_ci(
    values: Any,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    rng: np.random.Generator | None = None,
    clusters: Any = None,
) -> tuple[float, float]:
    """Return a percentile-bootstrap confidence interval of the mean of ``values``.

    Args:
        values: One number per unit (a task, or a task in one run).
        confidence: Coverage, in (0, 1).
        resamples: Bootstrap resamples.
        rng: Random generator (default: seeded with 0).
        clusters: A label per value: values with the same label (one task's results in
            several runs) are correlated, so a resample draws them together, as one
            unit. ``None``: every value is its own unit.

    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("no values")
    labels = np.arange(data.size) if clusters is None else np.asarray(clusters)
    if labels.shape != data.shape:
        raise ValueError(f"{labels.size} cluster labels for {data.size} values")
    rng = rng if rng is not None else np.random.default_rng(0)
    _, unit = np.unique(labels, return_inverse=True)
    sums = np.bincount(unit, weights=data)
    sizes = np.bincount(unit).astype(float)
    drawn = rng.integers(0, sums.size, size=(resamples, sums.size))
    means = sums[drawn].sum(axis=1) / sizes[drawn].sum(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def paired_difference(
    buffer: TrajectoryBuffer,
    baseline: TrajectoryBuffer,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, float]:
    """Compare two evaluations of the same tasks: mean differences with paired intervals.

    Each task's score (its samples averaged) is paired with the baseline's score on the
    same task; the interval is a percentile bootstrap over tasks of the mean paired
    difference. It is much tighter than comparing two separate intervals, because the
    tasks' own difficulty cancels out.

    Args:
        buffer: Episodes of the method.
        baseline: Episodes of the baseline, on the same tasks.
        confidence: Coverage of the intervals.
        resamples: Bootstrap resamples.
        seed: Seed of the bootstrap.

    Returns:
        For ``success_rate`` and ``tests_passed`` (``similarity`` on frontend tasks):
        ``<metric>_diff`` with ``<metric>_diff_ci_low`` / ``_ci_high``; plus ``gained``
        and ``lost`` (tasks solved by only the method / only the baseline; on frontend
        tasks, whose similarity rose / fell by more than :data:`SIMILARITY_MARGIN`) and
        ``num_tasks``. Frontend tasks also give ``win_rate`` with ``win_rate_ci_low`` /
        ``_ci_high``: the share of tasks the method's page wins, a change within the
        margin counting as a tie (half), as :class:`~sweetrl_gym.judges.SimilarityJudge`
        with that ``tie_margin`` would judge the two final pages.

    Raises:
        ValueError: If either buffer is empty or they hold different tasks.

    """
    out = pooled_paired_difference(
        [(buffer, baseline)], confidence=confidence, resamples=resamples, seed=seed
    )
    del out["num_runs"]
    return out


def pooled_paired_difference(
    runs: Sequence[tuple[TrajectoryBuffer, TrajectoryBuffer]],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, float | None]:
    """:func:`paired_difference` over several runs (seeds) of the same comparison.

    Every (run, task) is one paired unit and the mean difference is over all of them.
    One run: a percentile bootstrap over tasks (the evaluation's noise only). Several
    runs, each a seed of the whole pipeline evaluated on the same tasks: a Student t
    interval from the crossed seeds x tasks model (:func:`agents.seed_task_interval`),
    which holds the seed-to-seed spread of the training as well as the tasks' sampling.

    Args:
        runs: ``(method's episodes, baseline's episodes)`` per run.
        confidence: Coverage of the intervals.
        resamples: Bootstrap resamples (one run).
        seed: Seed of the bootstrap (one run).

    Returns:
        As :func:`paired_difference` (``num_tasks`` counts every run's tasks), plus
        ``num_runs``; with several runs also ``success_rate_seed_sd`` (the estimated
        spread of the difference between seeds: the training's noise) and
        ``success_rate_dof`` (the t quantile's degrees of freedom) and
        ``success_rate_seeds_needed`` (:func:`agents.seeds_needed` at the observed
        difference: the seeds that would make its interval exclude 0 with 80% power at
        this spread; ``None`` where none would), and on frontend tasks the same for
        ``similarity`` (the win rate's interval is a t interval too, cut to [0, 1]).

    Raises:
        ValueError: If there is no run, a buffer is empty, a run's two buffers hold
            different tasks, or several runs do not all hold the same tasks.

    """
    from agents.seed_interval import seed_task_interval, seeds_needed

    if not runs:
        raise ValueError("no runs to pool")
    tables: dict[str, list[dict[str, float]]] = {}
    wins: list[dict[str, float]] = []
    gained = lost = 0
    for run, (buffer, baseline) in enumerate(runs):
        if len(buffer) == 0 or len(baseline) == 0:
            raise ValueError("cannot compare an empty buffer")
        mine, theirs = buffer.group_by_task(), baseline.group_by_task()
        if set(mine) != set(theirs):
            only = sorted(set(mine) ^ set(theirs))[:3]
            where = f" in run {run}" if len(runs) > 1 else ""
            raise ValueError(f"the two evaluations hold different tasks{where} (e.g. {only})")
        frontend = buffer.similarities() is not None
        score = "similarity" if frontend else "tests_passed"
        values = {
            "success_rate": lambda g: np.mean([t.success for t in g]),
            score: lambda g: np.mean([t.reward for t in g]),
        }
        for name, of in values.items():
            tables.setdefault(name, []).append(
                {t: float(of(mine[t]) - of(theirs[t])) for t in theirs}
            )
        # Frontend: a task is gained (lost) when its similarity moves by more than the margin.
        measure = values[score] if frontend else values["success_rate"]
        margin = SIMILARITY_MARGIN if frontend else 0.0
        moved = [measure(mine[t]) - measure(theirs[t]) for t in theirs]
        gained += sum(change > margin for change in moved)
        lost += sum(change < -margin for change in moved)
        if frontend:
            wins.append({t: _win(change, SIMILARITY_MARGIN) for t, change in zip(theirs, moved)})
    tasks = sorted(tables["success_rate"][0])
    if any(set(run) != set(tasks) for run in tables["success_rate"][1:]):
        raise ValueError(
            "pooling needs every run evaluated on the same tasks (seeds of one comparison); "
            "these runs differ in their held-out tasks"
        )
    rng = np.random.default_rng(seed)
    out: dict[str, float | None] = {}
    for name, per_run in tables.items():
        data = np.array([[run[t] for t in tasks] for run in per_run])
        out[f"{name}_diff"] = float(data.mean())
        if len(runs) == 1:
            low, high = bootstrap_ci(data[0], confidence=confidence, resamples=resamples, rng=rng)
        else:
            interval = seed_task_interval(data, confidence=confidence)
            low, high = interval.low, interval.high
            if name in ("success_rate", "similarity"):
                out[f"{name}_seed_sd"] = interval.seed_sd
                out[f"{name}_dof"] = interval.dof
                out[f"{name}_seeds_needed"] = seeds_needed(data, confidence=confidence)
        out[f"{name}_diff_ci_low"] = low
        out[f"{name}_diff_ci_high"] = high
    if wins:
        data = np.array([[run[t] for t in tasks] for run in wins])
        out["win_rate"] = float(data.mean())
        if len(runs) == 1:
            low, high = bootstrap_ci(data[0], confidence=confidence, resamples=resamples, rng=rng)
        else:
            interval = seed_task_interval(data - 0.5, confidence=confidence)
            # A t interval over few seeds can reach past a share's bounds; a share lies
            # in [0, 1], so cutting it there loses no coverage.
            low, high = max(interval.low + 0.5, 0.0), min(interval.high + 0.5, 1.0)
        out["win_rate_ci_low"], out["win_rate_ci_high"] = low, high
    out["gained"] = float(gained)
    out["lost"] = float(lost)
    out["num_tasks"] = float(len(tasks) * len(runs))
    out["num_runs"] = float(len(runs))
    return out
