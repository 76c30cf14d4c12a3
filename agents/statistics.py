"""The statistics of evaluations and comparisons, as typed results.

Every number a report prints with an interval comes from here:

- :func:`bootstrap_ci`: a percentile-bootstrap interval of a mean (a metric over tasks,
  :func:`agents.summarize`'s intervals); an :class:`Estimate` is a mean with its
  :class:`Interval`.
- :func:`paired_difference`: a method against a baseline on the same tasks, one run
  (:class:`PairedDifference`).
- :func:`pooled_paired_difference`: the same over several runs (seeds) of one comparison
  (:class:`PooledDifference`), with the seeds' spread (:class:`SeedSpread`).
- :func:`seed_task_interval` (:class:`SeedTaskInterval`) and :func:`seeds_needed`
  (:class:`SeedsNeeded`): the seeds x tasks model below.

A comparison keeps its results as JSON (``results.json``, ``pooled.json``), under the
keys each result's ``to_record()`` writes (``success_rate_diff``,
``success_rate_diff_ci_low``, ...); ``from_record()`` reads them back, from files written
today or before, so the harness and its reports read attributes, never a key they build.

Pooling seeds. A comparison run with several seeds of the whole pipeline (warm start,
data, critic, policy step) gives a paired difference ``d[s, t]`` for every seed ``s`` and
held-out task ``t``; every seed is evaluated on the same tasks. Three sources move
``mean(d)``:

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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = [
    "MAX_PLANNED_SEEDS",
    "PLANNING_POWER",
    "SIMILARITY_MARGIN",
    "Estimate",
    "Interval",
    "PairedDifference",
    "PooledDifference",
    "SeedSpread",
    "SeedTaskInterval",
    "SeedsNeeded",
    "bootstrap_ci",
    "finite_number",
    "paired_difference",
    "pooled_paired_difference",
    "seed_task_interval",
    "seeds_needed",
]

SIMILARITY_MARGIN = 0.02
"""Similarity change beyond which a Frontend task counts as gained or lost, and a page as
winning against another; a smaller change counts as a tie."""

#: The power :func:`seeds_needed` plans for by default.
PLANNING_POWER = 0.8
#: The most seeds :func:`seeds_needed` considers by default.
MAX_PLANNED_SEEDS = 200
# The coverage a pooled comparison's plan is made at (pooled_paired_difference's default):
# what a plan read back from a record, which keeps only the seed count, was made with.
_RECORDED_CONFIDENCE = 0.95
# The metrics a paired difference can hold, in the order its record lists them.
_DIFFERENCE_METRICS = ("success_rate", "tests_passed", "similarity")


# --- typed results -----------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A confidence interval.

    Attributes:
        low: Lower end.
        high: Upper end.

    """

    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        """Whether 0 lies outside the interval: a difference it bounds is a real one."""
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class Estimate:
    """A mean and its confidence interval.

    Attributes:
        value: The mean.
        interval: Its interval; ``None`` where a record holds none (or a non-finite one).

    """

    value: float
    interval: Interval | None = None

    def to_record(self, name: str) -> dict[str, float]:
        """Return ``{name: value, name_ci_low: low, name_ci_high: high}`` (JSON keys)."""
        record = {name: self.value}
        if self.interval is not None:
            record[f"{name}_ci_low"] = self.interval.low
            record[f"{name}_ci_high"] = self.interval.high
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any], name: str) -> Estimate | None:
        """Read what :meth:`to_record` wrote under ``name``; ``None`` if there is no value.

        A missing or non-finite bound (a NaN is written as ``null``) leaves no interval.
        """
        value = finite_number(record.get(name))
        if value is None:
            return None
        low = finite_number(record.get(f"{name}_ci_low"))
        high = finite_number(record.get(f"{name}_ci_high"))
        interval = None if low is None or high is None else Interval(low, high)
        return cls(value, interval)


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


@dataclass(frozen=True)
class SeedsNeeded:
    """:func:`seeds_needed`'s plan: how many seeds would show a difference.

    Attributes:
        seeds: The smallest number of seeds (at least 2) whose interval would exclude 0
            with probability ``power``; ``None`` when none up to ``max_seeds`` would.
        effect: The difference planned for.
        confidence: The interval's coverage.
        power: The probability planned for.
        max_seeds: The largest count considered.

    """

    seeds: int | None
    effect: float
    confidence: float = _RECORDED_CONFIDENCE
    power: float = PLANNING_POWER
    max_seeds: int = MAX_PLANNED_SEEDS


@dataclass(frozen=True)
class SeedSpread:
    """How a difference pooled over several seeds varies between them.

    Attributes:
        seed_sd: Estimated standard deviation of the difference between seeds (the
            training's noise).
        dof: The degrees of freedom of the interval's t quantile.
        seeds_needed: The seeds that would show a difference of the observed size at this
            spread; ``None`` in a record written before plans were made.

    """

    seed_sd: float
    dof: float
    seeds_needed: SeedsNeeded | None


@dataclass(frozen=True, kw_only=True)
class PairedDifference:
    """:func:`paired_difference`'s result: a method against a baseline on the same tasks.

    Attributes:
        differences: Per metric (``success_rate``, and ``tests_passed`` or, on frontend
            tasks, ``similarity``), the mean paired difference and its interval.
        gained: Tasks solved by only the method (frontend: whose similarity rose by more
            than :data:`SIMILARITY_MARGIN`); ``None`` where a record holds no count.
        lost: Tasks solved by only the baseline (frontend: fell by more than the margin).
        num_tasks: The paired units (tasks; pooled: every run's tasks).
        win_rate: Frontend tasks: the share of tasks the method's page wins, a change
            within the margin counting as a tie (half), with its interval.

    """

    differences: Mapping[str, Estimate]
    gained: int | None = None
    lost: int | None = None
    num_tasks: int | None = None
    win_rate: Estimate | None = None

    def difference(self, metric: str) -> Estimate | None:
        """Return the difference in ``metric``, or ``None`` when it was not measured."""
        return self.differences.get(metric)

    def to_record(self) -> dict[str, float | int | None]:
        """Return the result as ``results.json`` keeps it (``<metric>_diff``, ...)."""
        return _difference_record(self, {})

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PairedDifference:
        """Read what :meth:`to_record` wrote (now or in an older ``results.json``)."""
        return cls(**_difference_fields(record))


@dataclass(frozen=True, kw_only=True)
class PooledDifference(PairedDifference):
    """:func:`pooled_paired_difference`'s result: a paired difference over several runs.

    Attributes:
        num_runs: The runs (seeds) pooled.
        spreads: With several runs, for ``success_rate`` (frontend: also ``similarity``)
            the seeds' spread of the difference; empty for one run.

    """

    num_runs: int
    spreads: Mapping[str, SeedSpread] = field(default_factory=dict)

    def spread(self, metric: str) -> SeedSpread | None:
        """Return the seeds' spread of the difference in ``metric``, if it was estimated."""
        return self.spreads.get(metric)

    def to_record(self) -> dict[str, float | int | None]:
        """Return the result as ``pooled.json`` keeps it (``<metric>_seed_sd``, ...)."""
        record = _difference_record(self, self.spreads)
        record["num_runs"] = float(self.num_runs)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PooledDifference:
        """Read what :meth:`to_record` wrote (now or in an older ``pooled.json``).

        A plan read back keeps its seed count; it was made at the defaults of
        :func:`seeds_needed` (80% power, at most 200 seeds, 95% coverage).
        """
        fields = _difference_fields(record)
        spreads = {}
        for metric, difference in fields["differences"].items():
            seed_sd = finite_number(record.get(f"{metric}_seed_sd"))
            dof = finite_number(record.get(f"{metric}_dof"))
            if seed_sd is None or dof is None:
                continue
            needed = None
            key = f"{metric}_seeds_needed"
            if key in record:
                seeds = finite_number(record[key])
                needed = SeedsNeeded(None if seeds is None else int(seeds), difference.value)
            spreads[metric] = SeedSpread(seed_sd=seed_sd, dof=dof, seeds_needed=needed)
        runs = finite_number(record.get("num_runs"))
        return cls(**fields, num_runs=1 if runs is None else int(runs), spreads=spreads)


def _difference_record(
    difference: PairedDifference, spreads: Mapping[str, SeedSpread]
) -> dict[str, float | int | None]:
    # Key order as results.json has always had it: a metric's difference, its spread
    # (pooled over seeds), its interval; the win rate; the counts.
    record: dict[str, float | int | None] = {}
    for metric, estimate in difference.differences.items():
        record[f"{metric}_diff"] = estimate.value
        spread = spreads.get(metric)
        if spread is not None:
            record[f"{metric}_seed_sd"] = spread.seed_sd
            record[f"{metric}_dof"] = spread.dof
            if spread.seeds_needed is not None:
                record[f"{metric}_seeds_needed"] = spread.seeds_needed.seeds
        if estimate.interval is not None:
            record[f"{metric}_diff_ci_low"] = estimate.interval.low
            record[f"{metric}_diff_ci_high"] = estimate.interval.high
    if difference.win_rate is not None:
        record.update(difference.win_rate.to_record("win_rate"))
    for name in ("gained", "lost", "num_tasks"):
        count = getattr(difference, name)
        if count is not None:
            record[name] = float(count)
    return record


def _difference_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(record, Mapping):
        raise TypeError(f"a paired difference's record is a mapping, got {type(record).__name__}")
    differences = {}
    for metric in _DIFFERENCE_METRICS:
        estimate = Estimate.from_record(record, f"{metric}_diff")
        if estimate is not None:
            differences[metric] = estimate

    def count(name: str) -> int | None:
        value = finite_number(record.get(name))
        return None if value is None else int(value)

    return {
        "differences": differences,
        "gained": count("gained"),
        "lost": count("lost"),
        "num_tasks": count("num_tasks"),
        "win_rate": Estimate.from_record(record, "win_rate"),
    }


def finite_number(value: Any) -> float | None:
    """Return the value as a finite float, else ``None`` (missing, NaN, not a number)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


# --- a mean's interval ---------------------------------------------------------------------


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

    Returns:
        ``(low, high)`` (``Interval(*bootstrap_ci(...))`` makes it an :class:`Interval`).

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


# --- paired differences ------------------------------------------------------------------


def _win(change: float, margin: float) -> float:
    return 1.0 if change > margin else 0.0 if change < -margin else 0.5


def paired_difference(
    buffer: TrajectoryBuffer,
    baseline: TrajectoryBuffer,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> PairedDifference:
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
        The differences in ``success_rate`` and ``tests_passed`` (``similarity`` on
        frontend tasks), the tasks gained and lost, and on frontend tasks the win rate,
        as :class:`~sweetrl_gym.judges.SimilarityJudge` with ``tie_margin``
        :data:`SIMILARITY_MARGIN` would judge the two final pages.

    Raises:
        ValueError: If either buffer is empty or they hold different tasks.

    """
    pooled = pooled_paired_difference(
        [(buffer, baseline)], confidence=confidence, resamples=resamples, seed=seed
    )
    return PairedDifference(
        differences=pooled.differences,
        gained=pooled.gained,
        lost=pooled.lost,
        num_tasks=pooled.num_tasks,
        win_rate=pooled.win_rate,
    )


def pooled_paired_difference(
    runs: Sequence[tuple[TrajectoryBuffer, TrajectoryBuffer]],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> PooledDifference:
    """:func:`paired_difference` over several runs (seeds) of the same comparison.

    Every (run, task) is one paired unit and the mean difference is over all of them.
    One run: a percentile bootstrap over tasks (the evaluation's noise only). Several
    runs, each a seed of the whole pipeline evaluated on the same tasks: a Student t
    interval from the crossed seeds x tasks model (:func:`seed_task_interval`), which
    holds the seed-to-seed spread of the training as well as the tasks' sampling.

    Args:
        runs: ``(method's episodes, baseline's episodes)`` per run.
        confidence: Coverage of the intervals.
        resamples: Bootstrap resamples (one run).
        seed: Seed of the bootstrap (one run).

    Returns:
        As :func:`paired_difference` (``num_tasks`` counts every run's tasks), plus
        ``num_runs``; with several runs also the seeds' spread of the ``success_rate``
        difference (and on frontend tasks of the ``similarity`` one): its ``seed_sd``, the
        t quantile's ``dof`` and :func:`seeds_needed` at the observed difference (the seeds
        that would make its interval exclude 0 with 80% power at this spread). The win
        rate's interval is then a t interval too, cut to [0, 1].

    Raises:
        ValueError: If there is no run, a buffer is empty, a run's two buffers hold
            different tasks, or several runs do not all hold the same tasks.

    """
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
    differences: dict[str, Estimate] = {}
    spreads: dict[str, SeedSpread] = {}
    for name, per_run in tables.items():
        data = np.array([[run[t] for t in tasks] for run in per_run])
        if len(runs) == 1:
            low, high = bootstrap_ci(data[0], confidence=confidence, resamples=resamples, rng=rng)
        else:
            interval = seed_task_interval(data, confidence=confidence)
            low, high = interval.low, interval.high
            if name in ("success_rate", "similarity"):
                spreads[name] = SeedSpread(
                    seed_sd=interval.seed_sd,
                    dof=interval.dof,
                    seeds_needed=seeds_needed(data, confidence=confidence),
                )
        differences[name] = Estimate(float(data.mean()), Interval(low, high))
    win_rate = None
    if wins:
        data = np.array([[run[t] for t in tasks] for run in wins])
        if len(runs) == 1:
            low, high = bootstrap_ci(data[0], confidence=confidence, resamples=resamples, rng=rng)
        else:
            interval = seed_task_interval(data - 0.5, confidence=confidence)
            # A t interval over few seeds can reach past a share's bounds; a share lies
            # in [0, 1], so cutting it there loses no coverage.
            low, high = max(interval.low + 0.5, 0.0), min(interval.high + 0.5, 1.0)
        win_rate = Estimate(float(data.mean()), Interval(low, high))
    return PooledDifference(
        differences=differences,
        gained=int(gained),
        lost=int(lost),
        num_tasks=len(tasks) * len(runs),
        win_rate=win_rate,
        num_runs=len(runs),
        spreads=spreads,
    )


# --- seeds x tasks -------------------------------------------------------------------------


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
) -> SeedsNeeded:
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
        The plan; its ``seeds`` is the smallest number of seeds (at least 2) that
        suffices, or ``None`` when none up to ``max_seeds`` does: ``effect`` is 0, the
        tasks' own spread (which more seeds do not shrink) is too wide for it, or the
        seeds' would need more.

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
    planned_effect = float(data.mean()) if effect is None else float(effect)

    def plan(count: int | None) -> SeedsNeeded:
        return SeedsNeeded(count, planned_effect, confidence, power, max_seeds)

    target = abs(planned_effect)
    if target == 0.0:
        return plan(None)
    mean_squares, _ = _mean_squares(data)
    seed_var, task_var, residual = _spreads(mean_squares, seeds, tasks)
    for planned in range(2, max_seeds + 1):
        # The mean squares a table of `planned` seeds would have on average.
        expected = np.array([tasks * seed_var + residual, planned * task_var + residual, residual])
        dofs = np.array([planned - 1, tasks - 1, (planned - 1) * (tasks - 1)], dtype=float)
        variance, dof = _variance_and_dof(expected, dofs, planned, tasks)
        if variance <= 0:
            return plan(planned)
        quantiles = student_t.ppf(0.5 + confidence / 2.0, dof) + student_t.ppf(power, dof)
        if quantiles * np.sqrt(variance) <= target:
            return plan(planned)
    return plan(None)


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
