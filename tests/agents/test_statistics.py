"""agents.statistics: intervals, paired and pooled differences, seeds needed, as typed results."""

import json

import numpy as np
import pytest
from scipy.stats import t as student_t

from agents import (
    SIMILARITY_MARGIN,
    Estimate,
    Interval,
    PairedDifference,
    PooledDifference,
    SeedsNeeded,
    SeedSpread,
    bootstrap_ci,
    paired_difference,
    pooled_paired_difference,
    seed_task_interval,
    seeds_needed,
    summarize,
)
from sweetrl_gym.trajectory import TrajectoryBuffer
from tests.agents.test_evaluation import fake


def _page(task_id, similarity):
    """A Frontend episode: its reward is the final page's similarity."""
    trajectory = fake(task_id, similarity)
    trajectory.metadata["similarity"] = similarity
    return trajectory


# --- the same numbers as before the typed results ------------------------------------------

# Fixed inputs: per task the rewards of its samples (a backend task succeeds at 1.0).
BASE = [[1.0], [0.0], [0.5], [1.0], [0.25], [0.0], [0.75], [1.0], [0.0], [0.5], [1.0], [0.0]]
RUNS = [
    [[1.0], [1.0], [0.5], [1.0], [0.5], [0.0], [1.0], [1.0], [0.0], [0.75], [1.0], [0.25]],
    [[1.0], [0.0], [1.0], [0.5], [0.25], [0.0], [0.75], [1.0], [1.0], [0.5], [1.0], [0.0]],
    [[1.0], [0.0], [0.25], [1.0], [0.0], [1.0], [0.5], [1.0], [0.0], [0.5], [1.0], [0.0]],
]
PAGES_BASE = [0.50, 0.40, 0.62, 0.71, 0.30, 0.55, 0.45, 0.80]
PAGES = [
    [0.60, 0.41, 0.50, 0.75, 0.35, 0.55, 0.40, 0.81],
    [0.45, 0.30, 0.60, 0.70, 0.25, 0.50, 0.47, 0.72],
]
TABLE = [[0.1, 0.0, 0.3, -0.2, 0.25], [-0.05, -0.1, 0.1, -0.2, 0.05], [0.3, 0.2, 0.4, 0.1, 0.3]]


def _backend(rewards):
    return TrajectoryBuffer(
        [
            fake(f"t{i}", reward, turns=1 + (i + j) % 3)
            for i, samples in enumerate(rewards)
            for j, reward in enumerate(samples)
        ]
    )


def _pages(similarities):
    return TrajectoryBuffer([_page(f"p{i}", s) for i, s in enumerate(similarities)])


# What the code before issue 58 (agents/evaluation.py and agents/seed_interval.py, whose
# functions returned dicts with string-built keys) returned on the inputs above, printed
# with json.dumps (exact floats). The typed results' records must be these, key order too:
# results.json and pooled.json keep them.
BEFORE = {
    "paired_backend": {"success_rate_diff": 0.16666666666666666, "success_rate_diff_ci_low": 0.0, "success_rate_diff_ci_high": 0.4166666666666667, "tests_passed_diff": 0.16666666666666666, "tests_passed_diff_ci_low": 0.041666666666666664, "tests_passed_diff_ci_high": 0.3541666666666667, "gained": 2.0, "lost": 0.0, "num_tasks": 12.0},
    "paired_two_samples": {"success_rate_diff": 0.125, "success_rate_diff_ci_low": -0.25, "success_rate_diff_ci_high": 0.5, "tests_passed_diff": 0.21875, "tests_passed_diff_ci_low": -0.0625, "tests_passed_diff_ci_high": 0.5, "gained": 2.0, "lost": 1.0, "num_tasks": 4.0},
    "pooled_backend": {"success_rate_diff": 0.1111111111111111, "success_rate_seed_sd": 0.0, "success_rate_dof": 21.999999999999996, "success_rate_seeds_needed": 10, "success_rate_diff_ci_low": -0.0352455532129792, "success_rate_diff_ci_high": 0.2574677754352014, "tests_passed_diff": 0.09027777777777778, "tests_passed_diff_ci_low": -0.029982172245112307, "tests_passed_diff_ci_high": 0.21053772780066787, "gained": 5.0, "lost": 1.0, "num_tasks": 36.0, "num_runs": 3.0},
    "pooled_backend_one_run": {"success_rate_diff": 0.16666666666666666, "success_rate_diff_ci_low": 0.0, "success_rate_diff_ci_high": 0.4166666666666667, "tests_passed_diff": 0.16666666666666666, "tests_passed_diff_ci_low": 0.041666666666666664, "tests_passed_diff_ci_high": 0.3333333333333333, "gained": 2.0, "lost": 0.0, "num_tasks": 12.0, "num_runs": 1.0},
    "paired_frontend": {"success_rate_diff": 0.0, "success_rate_diff_ci_low": 0.0, "success_rate_diff_ci_high": 0.0, "similarity_diff": 0.0049999999999999975, "similarity_diff_ci_low": -0.039999999999999994, "similarity_diff_ci_high": 0.04624999999999999, "win_rate": 0.5625, "win_rate_ci_low": 0.3125, "win_rate_ci_high": 0.8125, "gained": 3.0, "lost": 2.0, "num_tasks": 8.0},
    "pooled_frontend": {"success_rate_diff": 0.0, "success_rate_seed_sd": 0.0, "success_rate_dof": 15.0, "success_rate_seeds_needed": None, "success_rate_diff_ci_low": 0.0, "success_rate_diff_ci_high": 0.0, "similarity_diff": -0.018750000000000013, "similarity_seed_sd": 0.02531938839252303, "similarity_dof": 1.0, "similarity_seeds_needed": 28, "similarity_diff_ci_low": -0.3205223624841491, "similarity_diff_ci_high": 0.28302236248414914, "win_rate": 0.34375, "win_rate_ci_low": 0.0, "win_rate_ci_high": 1.0, "gained": 3.0, "lost": 8.0, "num_tasks": 16.0, "num_runs": 2.0},
    "summarize_backend": {"success_rate": 0.375, "success_rate_ci_low": 0.0, "success_rate_ci_high": 0.75, "tests_passed": 0.53125, "tests_passed_ci_low": 0.21875, "tests_passed_ci_high": 0.875, "avg_turns": 1.875, "avg_turns_ci_low": 1.5, "avg_turns_ci_high": 2.25, "answer_rate": 0.0, "answer_rate_ci_low": 0.0, "answer_rate_ci_high": 0.0, "num_tasks": 4.0, "num_episodes": 8.0},
    "summarize_frontend": {"success_rate": 0.0, "success_rate_ci_low": 0.0, "success_rate_ci_high": 0.0, "similarity": 0.49874999999999997, "similarity_ci_low": 0.3899687500000001, "similarity_ci_high": 0.6075312499999997, "avg_turns": 1.0, "avg_turns_ci_low": 1.0, "avg_turns_ci_high": 1.0, "answer_rate": 0.0, "answer_rate_ci_low": 0.0, "answer_rate_ci_high": 0.0, "num_tasks": 8.0, "num_episodes": 8.0},
    "seeds_needed": [None, None, 6],
    "seed_task_interval": {"mean": 0.10333333333333333, "low": -0.19338960258124677, "high": 0.40005626924791343, "dof": 4.021359129007966, "seed_sd": 0.14846436160461765, "task_sd": 0.14008925726121899, "residual_sd": 0.05439056290693574, "standard_error": 0.10709549217611565},
}  # fmt: skip


def test_the_typed_results_keep_the_numbers_and_records_of_before():
    base = _backend(BASE)
    runs = [(_backend(r), base) for r in RUNS]
    two = _backend([[1.0, 0.0], [0.5, 0.5], [1.0, 1.0], [0.0, 0.25]])
    two_base = _backend([[0.0, 0.0], [0.5, 1.0], [1.0, 0.0], [0.0, 0.0]])
    pages = [(_pages(p), _pages(PAGES_BASE)) for p in PAGES]
    now = {
        "paired_backend": paired_difference(*runs[0], seed=3),
        "paired_two_samples": paired_difference(two, two_base, seed=1),
        "pooled_backend": pooled_paired_difference(runs, seed=0),
        "pooled_backend_one_run": pooled_paired_difference(runs[:1], seed=5),
        "paired_frontend": paired_difference(*pages[0], seed=0),
        "pooled_frontend": pooled_paired_difference(pages, seed=0),
    }
    for name, result in now.items():
        record = result.to_record()
        assert json.dumps(record) == json.dumps(BEFORE[name]), name  # values and key order
        assert type(result).from_record(json.loads(json.dumps(record))) == result, name
    assert summarize(two, seed=2) == BEFORE["summarize_backend"]
    assert list(summarize(two, seed=2)) == list(BEFORE["summarize_backend"])
    assert summarize(_pages(PAGES[1])) == BEFORE["summarize_frontend"]
    plans = [
        seeds_needed(TABLE),
        seeds_needed(TABLE, effect=0.02),
        seeds_needed(TABLE, effect=0.3, power=0.9, confidence=0.9),
    ]
    assert [plan.seeds for plan in plans] == BEFORE["seeds_needed"]
    assert plans[2] == SeedsNeeded(6, effect=0.3, confidence=0.9, power=0.9, max_seeds=200)
    assert seed_task_interval(TABLE).__dict__ == BEFORE["seed_task_interval"]


def test_the_seeds_x_tasks_interval_is_the_two_way_random_effects_one():
    """Closed form: Var(mean) = (MS_seed + MS_task - MS_residual) / (S T), Satterthwaite."""
    data = np.array(TABLE)
    seeds, tasks = data.shape
    grand = data.mean()
    by_seed, by_task = data.mean(axis=1), data.mean(axis=0)
    ms_seed = tasks * ((by_seed - grand) ** 2).sum() / (seeds - 1)
    ms_task = seeds * ((by_task - grand) ** 2).sum() / (tasks - 1)
    residual = data - by_seed[:, None] - by_task[None, :] + grand
    ms_residual = (residual**2).sum() / ((seeds - 1) * (tasks - 1))
    assert ms_seed > ms_residual and ms_task > ms_residual  # every component is counted
    variance = (ms_seed + ms_task - ms_residual) / (seeds * tasks)
    terms = np.array([ms_seed, ms_task, -ms_residual]) / (seeds * tasks)
    dof = variance**2 / np.sum(terms**2 / [seeds - 1, tasks - 1, (seeds - 1) * (tasks - 1)])
    half = student_t.ppf(0.975, dof) * np.sqrt(variance)
    interval = seed_task_interval(TABLE)
    assert interval.mean == pytest.approx(grand)
    assert (interval.low, interval.high) == pytest.approx((grand - half, grand + half))
    assert interval.dof == pytest.approx(dof)
    assert interval.seed_sd == pytest.approx(np.sqrt((ms_seed - ms_residual) / tasks))
    assert interval.task_sd == pytest.approx(np.sqrt((ms_task - ms_residual) / seeds))
    assert interval.standard_error == pytest.approx(np.sqrt(variance))
    # Pooled runs: the same table of paired differences, the same interval.
    base = _backend(BASE)
    pooled = pooled_paired_difference([(_backend(r), base) for r in RUNS])
    differences = [[r[0] - b[0] for r, b in zip(run, BASE)] for run in RUNS]
    assert pooled.difference("tests_passed").value == pytest.approx(np.mean(differences))
    expected = seed_task_interval(differences)  # tasks in another column order
    interval = pooled.difference("tests_passed").interval
    assert (interval.low, interval.high) == pytest.approx((expected.low, expected.high))


def test_records_read_back_from_older_files():
    # A results.json entry as the report's tests keep it: no tests_passed difference.
    old = {"success_rate_diff": 0.1, "success_rate_diff_ci_low": 0.03, "gained": 14, "lost": 4}
    versus = PairedDifference.from_record(old)
    assert versus.difference("success_rate") == Estimate(0.1)  # half an interval is none
    assert versus.difference("tests_passed") is None and versus.win_rate is None
    assert (versus.gained, versus.lost, versus.num_tasks) == (14, 4, None)
    # A NaN written as null is no value.
    assert PairedDifference.from_record({"success_rate_diff": None}).differences == {}
    # pooled.json before the seeds' plan was kept (the recorded quick runs 9-27).
    pooled = PooledDifference.from_record(
        {
            "success_rate_diff": 0.036,
            "success_rate_seed_sd": 0.06,
            "success_rate_dof": 2.1,
            "success_rate_diff_ci_low": -0.12,
            "success_rate_diff_ci_high": 0.19,
            "gained": 120.0,
            "lost": 97.0,
            "num_tasks": 960.0,
            "num_runs": 3.0,
        }
    )
    assert pooled.spread("success_rate") == SeedSpread(seed_sd=0.06, dof=2.1, seeds_needed=None)
    assert pooled.num_runs == 3 and not pooled.difference("success_rate").interval.excludes_zero
    with pytest.raises(TypeError, match="mapping"):
        PairedDifference.from_record([0.1])


# --- intervals ---------------------------------------------------------------------------


def test_bootstrap_interval_covers_the_mean_and_shrinks_with_data():
    rng = np.random.default_rng(1)
    small = rng.random(20) < 0.4
    large = rng.random(2000) < 0.4
    low_s, high_s = bootstrap_ci(small)
    low_l, high_l = bootstrap_ci(large)
    assert low_s <= small.mean() <= high_s and low_l <= large.mean() <= high_l
    assert (high_l - low_l) < (high_s - low_s) / 5
    # the normal-approximation width for p=0.4, n=2000 is about 2 * 1.96 * 0.011 = 0.043
    assert high_l - low_l == pytest.approx(0.043, abs=0.006)
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0], confidence=1.0)


def test_clustered_bootstrap_draws_a_cluster_whole():
    values = [0.0] * 50 + [1.0] * 50
    low, high = bootstrap_ci(values)
    # Two clusters, each of equal values: a resample holds 0, 1 or 2 copies of either.
    assert bootstrap_ci(values, clusters=[0] * 50 + [1] * 50) == (0.0, 1.0)
    # Pairs of equal values: half the units, so a wider interval (about sqrt(2) times).
    pairs = [i // 2 for i in range(100)]
    wide_low, wide_high = bootstrap_ci(sorted(values), clusters=pairs)
    assert (wide_high - wide_low) > 1.2 * (high - low)
    with pytest.raises(ValueError, match="cluster labels"):
        bootstrap_ci(values, clusters=[0, 1])


def test_an_interval_excludes_zero_only_when_both_ends_are_on_one_side():
    assert Interval(0.01, 0.2).excludes_zero and Interval(-0.2, -0.01).excludes_zero
    assert not Interval(-0.01, 0.2).excludes_zero and not Interval(0.0, 0.2).excludes_zero


# --- paired differences ------------------------------------------------------------------


def test_paired_difference_pairs_tasks_and_counts_gains():
    base = TrajectoryBuffer([fake(f"t{i}", 1.0 if i < 10 else 0.0) for i in range(40)])
    # The method solves the base's 10 tasks plus 10 more, and loses one.
    better = TrajectoryBuffer(
        [fake(f"t{i}", 1.0 if (1 <= i < 20) else 0.0) for i in reversed(range(40))]
    )
    diff = paired_difference(better, base, seed=0)
    success = diff.difference("success_rate")
    assert success.value == pytest.approx(9 / 40)
    assert diff.gained == 10 and diff.lost == 1 and diff.num_tasks == 40
    # Paired: the interval excludes 0 although the two rates' own intervals overlap.
    assert 0 < success.interval.low < success.value < success.interval.high
    own_better, own_base = summarize(better), summarize(base)
    assert own_better["success_rate_ci_low"] < own_base["success_rate_ci_high"]
    assert diff.difference("tests_passed").value == pytest.approx(9 / 40)
    same = paired_difference(base, base).difference("success_rate")
    assert same.interval == Interval(0.0, 0.0)
    assert not isinstance(diff, PooledDifference)


def test_paired_difference_refuses_different_tasks():
    with pytest.raises(ValueError, match="different tasks"):
        paired_difference(TrajectoryBuffer([fake("a", 1.0)]), TrajectoryBuffer([fake("b", 1.0)]))
    with pytest.raises(ValueError, match="empty"):
        paired_difference(TrajectoryBuffer(), TrajectoryBuffer([fake("b", 1.0)]))


def _gain_run(gain, prefix="t"):
    """40 tasks; the method solves ``gain`` more than the base's 10."""
    base = TrajectoryBuffer([fake(f"{prefix}{i}", 1.0 if i < 10 else 0.0) for i in range(40)])
    method = TrajectoryBuffer(
        [fake(f"{prefix}{i}", 1.0 if i < 10 + gain else 0.0) for i in range(40)]
    )
    return method, base


def _width(result):
    interval = result.difference("success_rate").interval
    return interval.high - interval.low


def test_pooled_difference_over_seeds_counts_the_seeds_spread():
    runs = [_gain_run(3), _gain_run(5), _gain_run(1)]
    pooled = pooled_paired_difference(runs, seed=0)
    success = pooled.difference("success_rate")
    assert success.value == pytest.approx(9 / 120)
    assert pooled.num_tasks == 120 and pooled.num_runs == 3 and pooled.gained == 9
    spread = pooled.spread("success_rate")
    assert spread.seed_sd > 0 and 1.5 < spread.dof < 10
    assert spread.seeds_needed == seeds_needed(
        [[1.0 if 10 <= i < 10 + g else 0.0 for i in range(40)] for g in (3, 5, 1)]
    )
    assert pooled.spread("tests_passed") is None  # planned for the judged metric only
    # Seeds that disagree (3, 5, 1 more tasks solved, none lost) leave the sign in doubt;
    # a bootstrap over the tasks, each with its results in every seed, would not.
    assert success.interval.low < 0 < success.interval.high
    units = [1.0 if i < gain else 0.0 for gain in (3, 5, 1) for i in range(40)]
    assert bootstrap_ci(units, clusters=[i for _ in range(3) for i in range(40)])[0] > 0
    # One run pooled is the plain paired difference, interval and all.
    alone = pooled_paired_difference(runs[:1], seed=0)
    assert alone.num_runs == 1 and alone.spreads == {}
    assert {k: v for k, v in alone.to_record().items() if k != "num_runs"} == paired_difference(
        *runs[0], seed=0
    ).to_record()
    with pytest.raises(ValueError, match="different tasks in run 1"):
        pooled_paired_difference([_gain_run(1), (TrajectoryBuffer([fake("x", 1.0)]), runs[0][1])])
    with pytest.raises(ValueError, match="same tasks"):
        pooled_paired_difference([_gain_run(1), _gain_run(1, "other")])
    with pytest.raises(ValueError, match="no runs"):
        pooled_paired_difference([])


def test_pooled_runs_that_agree_are_not_counted_as_new_evidence():
    # Seeds of one comparison share their held-out tasks: three runs that agree task by
    # task carry the evidence of one, and get about its interval (not a narrower one).
    one = paired_difference(*_gain_run(4), seed=0)
    same = pooled_paired_difference([_gain_run(4)] * 3, seed=0)
    assert same.num_tasks == 120 and same.spread("success_rate").seed_sd == 0.0
    success = same.difference("success_rate")
    assert success.value == pytest.approx(one.difference("success_rate").value)
    assert _width(same) == pytest.approx(_width(one), rel=0.3)
    assert success.interval.excludes_zero  # 4 of 40 gained, none lost, in every seed


def test_frontend_tasks_are_gained_or_lost_beyond_a_margin_and_give_a_win_rate():
    base = TrajectoryBuffer([_page(f"p{i}", 0.5) for i in range(40)])
    # 10 pages clearly better, 5 clearly worse, 25 within the margin (ties).
    changes = [0.1] * 10 + [-0.1] * 5 + [SIMILARITY_MARGIN / 2] * 25
    method = TrajectoryBuffer([_page(f"p{i}", 0.5 + c) for i, c in enumerate(changes)])
    diff = paired_difference(method, base, seed=0)
    assert diff.gained == 10 and diff.lost == 5
    assert diff.difference("similarity").value == pytest.approx(np.mean(changes))
    assert diff.difference("tests_passed") is None
    win = diff.win_rate
    assert win.value == pytest.approx((10 + 25 / 2) / 40)
    assert win.interval.low < win.value < win.interval.high
    same = paired_difference(base, base)
    assert same.win_rate == Estimate(0.5, Interval(0.5, 0.5))
    assert same.gained == same.lost == 0
    # Over seeds: the win rate's interval holds the seeds' spread, as the similarity's does.
    worse = TrajectoryBuffer([_page(f"p{i}", 0.5 - abs(c)) for i, c in enumerate(changes)])
    pooled = pooled_paired_difference([(method, base), (worse, base)], seed=0)
    assert pooled.win_rate.value == pytest.approx(((10 + 12.5) + (25 / 2)) / 80)
    assert pooled.win_rate.interval.low < 0.5 < pooled.win_rate.interval.high
    assert pooled.spread("similarity").seed_sd > 0 and pooled.gained == 10 and pooled.lost == 20
    # Two seeds that disagree wholly: the t interval (one degree of freedom) reaches far
    # past [0, 1]; a share's interval stays within it.
    better = TrajectoryBuffer([_page(f"p{i}", 0.6) for i in range(40)])
    split = pooled_paired_difference([(better, base), (worse, base)], seed=0)
    assert split.win_rate == Estimate((40 + 12.5) / 80, Interval(0.0, 1.0))
    # Backend results carry no win rate: a task is gained only when it is solved.
    backend = paired_difference(
        TrajectoryBuffer([fake("t", 1.0)]), TrajectoryBuffer([fake("t", 0.0)])
    )
    assert backend.win_rate is None and "win_rate" not in backend.to_record()


# --- seeds x tasks -------------------------------------------------------------------------


def _synthetic_table(rng, *, mean, seed_sd, task_sd, noise_sd, seeds=3, tasks=320):
    """Differences of known mean: a seed effect, a task effect shared by seeds, and noise."""
    return (
        mean
        + rng.normal(0, seed_sd, (seeds, 1))
        + rng.normal(0, task_sd, (1, tasks))
        + rng.normal(0, noise_sd, (seeds, tasks))
    )


@pytest.mark.parametrize("seed_sd", [0.0, 0.03, 0.08])
def test_seed_task_interval_covers_the_truth(seed_sd):
    rng = np.random.default_rng(7)
    draws = [
        seed_task_interval(
            _synthetic_table(rng, mean=0.05, seed_sd=seed_sd, task_sd=0.3, noise_sd=0.3)
        )
        for _ in range(600)
    ]
    coverage = np.mean([d.low <= 0.05 <= d.high for d in draws])
    # Nominal 95%; Satterthwaite's t with 3 seeds runs a little under it when the seed's
    # spread dominates (about 92% at 0.08 in 3,000 draws).
    assert 0.89 <= coverage <= 0.99
    assert np.mean([d.seed_sd for d in draws]) == pytest.approx(seed_sd, abs=0.025)


def test_a_bootstrap_over_tasks_misses_the_seeds_spread():
    """The interval this replaced: tasks resampled with their results in every seed."""
    rng = np.random.default_rng(3)
    tasks = np.tile(np.arange(320), 3)
    covered = {"seeds x tasks": 0, "task bootstrap": 0}
    for _ in range(150):
        table = _synthetic_table(rng, mean=0.0, seed_sd=0.08, task_sd=0.3, noise_sd=0.3)
        interval = seed_task_interval(table)
        covered["seeds x tasks"] += interval.low <= 0.0 <= interval.high
        low, high = bootstrap_ci(table.ravel(), resamples=400, rng=rng, clusters=tasks)
        covered["task bootstrap"] += low <= 0.0 <= high
    # With no true difference, the task bootstrap calls most seeds' draws "real".
    assert covered["task bootstrap"] / 150 < 0.6
    assert covered["seeds x tasks"] / 150 > 0.88


def test_seed_task_interval_refuses_bad_tables():
    with pytest.raises(ValueError, match="at least 2"):
        seed_task_interval(np.zeros((1, 10)))
    with pytest.raises(ValueError, match="non-finite"):
        seed_task_interval(np.array([[0.0, np.nan], [1.0, 0.0]]))
    flat = seed_task_interval(np.full((3, 5), 0.25))
    assert (flat.low, flat.mean, flat.high) == (0.25, 0.25, 0.25)


def test_seeds_needed_plans_the_power_it_promises():
    """The planned seeds make the interval exclude 0 about 80% of the time, fewer less."""
    rng = np.random.default_rng(11)
    truth = {"mean": 0.04, "seed_sd": 0.05, "task_sd": 0.1, "noise_sd": 0.3}
    pilot = _synthetic_table(rng, seeds=60, **truth)  # spreads estimated near the truth
    plan = seeds_needed(pilot, effect=truth["mean"])
    assert (plan.effect, plan.power, plan.max_seeds) == (0.04, 0.8, 200)
    planned = plan.seeds
    assert planned is not None and 5 <= planned <= 40

    def power(seeds: int) -> float:
        tables = (_synthetic_table(rng, seeds=seeds, **truth) for _ in range(300))
        return float(np.mean([seed_task_interval(t).low > 0 for t in tables]))

    assert 0.68 <= power(planned) <= 0.92
    assert power(max(2, planned // 3)) < 0.6
    # A larger effect needs fewer seeds; more power, more.
    larger = seeds_needed(pilot, effect=0.08).seeds
    assert larger < planned < seeds_needed(pilot, effect=0.04, power=0.95).seeds


def test_seeds_needed_says_when_no_number_of_seeds_would_do():
    rng = np.random.default_rng(5)
    table = _synthetic_table(rng, mean=0.0, seed_sd=0.0, task_sd=0.3, noise_sd=0.3)
    assert seeds_needed(table, effect=0.0).seeds is None
    # Tasks shared by every seed: their spread (0.3 / sqrt(320) = 0.017) stays whatever
    # the seeds, so an effect well inside it is out of reach.
    assert seeds_needed(table, effect=0.01).seeds is None
    assert seeds_needed(table, effect=0.2).seeds == 2
    with pytest.raises(ValueError, match="power"):
        seeds_needed(table, power=1.0)
    with pytest.raises(ValueError, match="max_seeds"):
        seeds_needed(table, max_seeds=1)
    with pytest.raises(ValueError, match="at least 2"):
        seeds_needed(np.zeros((1, 10)))
