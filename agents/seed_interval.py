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

__all__ = ["SeedTaskInterval", "seed_task_interval"]


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
    data = np.asarray(differences, dtype=float)
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] < 2:
        raise ValueError(
            f"need a (seeds, tasks) table with at least 2 of each, got shape {data.shape}"
        )
    if not np.isfinite(data).all():
        raise ValueError("the differences hold a non-finite value")
    seeds, tasks = data.shape
    grand = data.mean()
    seed_means = data.mean(axis=1)
    task_means = data.mean(axis=0)
    residual = data - seed_means[:, None] - task_means[None, :] + grand
    # Mean squares and their degrees of freedom: seed, task, residual.
    dofs = np.array([seeds - 1, tasks - 1, (seeds - 1) * (tasks - 1)], dtype=float)
    squares = np.array(
        [
            tasks * np.sum((seed_means - grand) ** 2),
            seeds * np.sum((task_means - grand) ** 2),
            np.sum(residual**2),
        ]
    )
    mean_squares = squares / dofs
    # Var(mean) = (MS_seed + MS_task - MS_res) / (S T), with a component that estimates
    # below zero set to zero (its mean square then stands for the residual's).
    seed_part = mean_squares[0] > mean_squares[2]
    task_part = mean_squares[1] > mean_squares[2]
    weights = np.array([float(seed_part), float(task_part), 1.0 - seed_part - task_part])
    terms = weights * mean_squares / (seeds * tasks)
    variance = float(terms.sum())
    if variance > 0:
        dof = variance**2 / float(np.sum(terms**2 / dofs))
        half = float(student_t.ppf(0.5 + confidence / 2.0, dof)) * np.sqrt(variance)
    else:  # every difference the same: no spread to estimate
        dof, half = float(dofs.sum()), 0.0
    return SeedTaskInterval(
        mean=float(grand),
        low=float(grand - half),
        high=float(grand + half),
        dof=float(dof),
        seed_sd=float(np.sqrt(max(0.0, (mean_squares[0] - mean_squares[2]) / tasks))),
        task_sd=float(np.sqrt(max(0.0, (mean_squares[1] - mean_squares[2]) / seeds))),
        residual_sd=float(np.sqrt(mean_squares[2])),
        standard_error=float(np.sqrt(max(variance, 0.0))),
    )
