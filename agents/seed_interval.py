"""A confidence interval for a mean over seeds x tasks that holds the training's noise too.

A comparison run with several seeds of the whole pipeline (warm start, data, critic,
policy step) gives a paired difference ``d[s, t]`` for every seed ``s`` and held-out task
``t``; every seed is evaluated on the same tasks. Three sources move ``mean(d)``:

- the seed (``a[s]``): the training's noise, shared by all of a seed's tasks (on the quick
  config, up to 22 points between seeds: docs/results.md);
- the task (``b[t]``): which tasks happen to be held out, shared by all seeds;
- the rest (``e[s, t]``).

The model is the crossed two-way random-effects one, ``d = mu + a + b + e``, and
``Var(mean) = var_a / S + var_b / T + var_e / (S T)``. The interval is Student's t with
Satterthwaite's degrees of freedom: with 3 seeds and a large seed spread that is close to
2, so the interval is as wide as three draws of the training honestly allow.

Why not the alternatives: a bootstrap over tasks (each run's, or a task with its results
in every run) treats the seeds as fixed and leaves ``var_a`` out, which is the noise that
flipped the quick config's verdicts; a bootstrap over 3 seeds has 10 distinct resamples
and covers far less than it claims; a t-interval over the seed means leaves out
``var_b / T`` (the seeds share their tasks). The tests check coverage on synthetic data
where the truth is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "MAX_PLANNED_SEEDS",
    "PLANNING_POWER",
    "SeedTaskInterval",
    "seed_task_interval",
    "seeds_needed",
]

#: The power :func:`seeds_needed` plans for by default.
PLANNING_POWER = 0.8
#: The most seeds :func:`seeds_needed` considers by default.
MAX_PLANNED_SEEDS = 200


@dataclass(frozen=True)
class SeedTaskInterval:
    """:func:`seed_task_interval`'s result.

    Attributes:
        mean: The mean over every seed and task.
        low: Lower end of the interval.
        high: Upper end.
        dof: Satterthwaite's degrees of freedom of the t quantile.
        seed_sd: Estimated standard deviation of the seed effect (the training's noise).
        task_sd: Estimated standard deviation of the task effect.
        residual_sd: Estimated standard deviation of what is left.
        standard_error: The standard error of ``mean``.

    """

    mean: float
    low: float
    high: float
    dof: float
    seed_sd: float
    task_sd: float
    residual_sd: float
    standard_error: float


def seed_task_interval(differences: Any, *, confidence: float = 0.95) -> SeedTaskInterval:
    """Return a confidence interval of the mean of a seeds x tasks table of differences.

    Args:
        differences: ``(seeds, tasks)`` array: one paired difference per seed and task
            (each seed evaluated on the same tasks, in the same column order).
        confidence: Coverage, in (0, 1).

    Raises:
        ValueError: With fewer than 2 seeds or 2 tasks, a non-finite value or a bad
            ``confidence``.

    """
    from scipy.stats import t as student_t

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    data = _checked_table(differences)
    seeds, tasks = data.shape
    mean_squares, dofs = _mean_squares(data)
    variance, dof = _variance_and_dof(mean_squares, dofs, seeds, tasks)
    seed_var, task_var, residual_var = _spreads(mean_squares, seeds, tasks)
    grand = float(data.mean())
    if variance > 0:
        half = float(student_t.ppf(0.5 + confidence / 2.0, dof)) * np.sqrt(variance)
    else:  # every difference the same: no spread to estimate
        half = 0.0
    return SeedTaskInterval(
        mean=grand,
        low=float(grand - half),
        high=float(grand + half),
        dof=float(dof),
        seed_sd=float(np.sqrt(seed_var)),
        task_sd=float(np.sqrt(task_var)),
        residual_sd=float(np.sqrt(residual_var)),
        standard_error=float(np.sqrt(max(variance, 0.0))),
    )


def seeds_needed(
    differences: Any,
    *,
    effect: float | None = None,
    confidence: float = 0.95,
    power: float = PLANNING_POWER,
    max_seeds: int = MAX_PLANNED_SEEDS,
) -> int | None:
    """Return how many seeds would make the pooled interval exclude 0, as a plan.

    The seed, task and residual spreads are estimated from ``differences`` (as
    :func:`seed_task_interval` does) and taken as the truth; with the same tasks and
    ``n`` seeds, the interval of :func:`seed_task_interval` excludes 0 with probability
    about ``power`` when ``(t(confidence) + t(power)) * standard_error(n) <= |effect|``.
    With three seeds the spreads themselves are rough, so the answer is a planning figure,
    not a promise.

    Args:
        differences: ``(seeds, tasks)`` array of paired differences, as for
            :func:`seed_task_interval`.
        effect: The true difference to detect; default: the table's mean.
        confidence: The interval's coverage, in (0, 1).
        power: Probability of excluding 0 when the difference is ``effect``, in (0, 1).
        max_seeds: Largest count considered.

    Returns:
        The smallest number of seeds (at least 2) that suffices, or ``None`` when none up
        to ``max_seeds`` does: ``effect`` is 0, the tasks' own spread (which more seeds
        do not shrink) is too wide for it, or the seeds' would need more.

    Raises:
        ValueError: As :func:`seed_task_interval`; also for a bad ``power`` or
            ``max_seeds`` below 2.

    """
    from scipy.stats import t as student_t

    for name, value in (("confidence", confidence), ("power", power)):
        if not 0.0 < value < 1.0:
            raise ValueError(f"{name} must be in (0, 1), got {value}")
    if max_seeds < 2:
        raise ValueError(f"max_seeds must be at least 2, got {max_seeds}")
    data = _checked_table(differences)
    seeds, tasks = data.shape
    target = abs(float(data.mean()) if effect is None else float(effect))
    if target == 0.0:
        return None
    mean_squares, _ = _mean_squares(data)
    seed_var, task_var, residual = _spreads(mean_squares, seeds, tasks)
    for planned in range(2, max_seeds + 1):
        # The mean squares a table of `planned` seeds would have on average.
        expected = np.array([tasks * seed_var + residual, planned * task_var + residual, residual])
        dofs = np.array([planned - 1, tasks - 1, (planned - 1) * (tasks - 1)], dtype=float)
        variance, dof = _variance_and_dof(expected, dofs, planned, tasks)
        if variance <= 0:
            return planned
        quantiles = student_t.ppf(0.5 + confidence / 2.0, dof) + student_t.ppf(power, dof)
        if quantiles * np.sqrt(variance) <= target:
            return planned
    return None


def _checked_table(differences: Any) -> np.ndarray:
    data = np.asarray(differences, dtype=float)
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] < 2:
        raise ValueError(
            f"need a (seeds, tasks) table with at least 2 of each, got shape {data.shape}"
        )
    if not np.isfinite(data).all():
        raise ValueError("the differences hold a non-finite value")
    return data


def _mean_squares(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean squares of seed, task and residual, and their degrees of freedom."""
    seeds, tasks = data.shape
    grand = data.mean()
    seed_means = data.mean(axis=1)
    task_means = data.mean(axis=0)
    residual = data - seed_means[:, None] - task_means[None, :] + grand
    dofs = np.array([seeds - 1, tasks - 1, (seeds - 1) * (tasks - 1)], dtype=float)
    squares = np.array(
        [
            tasks * np.sum((seed_means - grand) ** 2),
            seeds * np.sum((task_means - grand) ** 2),
            np.sum(residual**2),
        ]
    )
    return squares / dofs, dofs


def _spreads(mean_squares: np.ndarray, seeds: int, tasks: int) -> tuple[float, float, float]:
    """Variances of the seed effect, the task effect and the residual (none below 0)."""
    residual = float(mean_squares[2])
    seed_var = max(0.0, (float(mean_squares[0]) - residual) / tasks)
    task_var = max(0.0, (float(mean_squares[1]) - residual) / seeds)
    return seed_var, task_var, residual


def _variance_and_dof(
    mean_squares: np.ndarray, dofs: np.ndarray, seeds: int, tasks: int
) -> tuple[float, float]:
    """Var(mean) and Satterthwaite's degrees of freedom from the three mean squares.

    Var(mean) = (MS_seed + MS_task - MS_res) / (S T), with a component that estimates
    below zero set to zero (its mean square then stands for the residual's).
    """
    seed_part = mean_squares[0] > mean_squares[2]
    task_part = mean_squares[1] > mean_squares[2]
    weights = np.array([float(seed_part), float(task_part), 1.0 - seed_part - task_part])
    terms = weights * mean_squares / (seeds * tasks)
    variance = float(terms.sum())
    if variance <= 0:
        return variance, float(dofs.sum())
    return variance, variance**2 / float(np.sum(terms**2 / dofs))
