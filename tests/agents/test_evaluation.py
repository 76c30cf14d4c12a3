import numpy as np
import pytest

import sweetrl_gym  # noqa: F401
from agents import ImmediateAnswerAgent, OracleAgent, bootstrap_ci, evaluate, summarize
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn


def fake(task_id, reward, turns=1):
    messages, turn_list = [{"role": "user", "content": "q"}], []
    for _ in range(turns):
        turn_list.append(Turn([dict(m) for m in messages], "a"))
        messages += [{"role": "assistant", "content": "a"}]
    turn_list[-1].reward, turn_list[-1].done = reward, True
    return Trajectory(task_id, turn_list, messages, reward, reward == 1.0, "a")


def test_oracle_and_floor_on_the_test_split():
    oracle = evaluate(OracleAgent(), split="test", num_tasks=20, num_envs=4, progress=False)
    floor = evaluate(ImmediateAnswerAgent(), split="test", num_tasks=20, progress=False)
    assert oracle["success_rate"] == oracle["tests_passed"] == 1.0
    assert oracle["success_rate_ci_low"] == oracle["success_rate_ci_high"] == 1.0
    assert floor["success_rate"] == 0.0 and floor["avg_turns"] == 1.0
    assert oracle["avg_turns"] > 2 and oracle["num_tasks"] == 20 == oracle["num_episodes"]
    assert oracle["avg_turns_ci_low"] <= oracle["avg_turns"] <= oracle["avg_turns_ci_high"]


class _AlwaysAsks:
    """An agent that never gives its answer: every episode runs out of turns."""

    def act(self, batch):
        return ["What else should I know?" for _ in batch]


def test_answer_rate_counts_the_episodes_that_gave_an_answer(small_tasks):
    kwargs = {"env_kwargs": {"tasks": small_tasks, "max_turns": 3}, "progress": False}
    answers = evaluate(ImmediateAnswerAgent(), num_tasks=4, **kwargs)
    asks = evaluate(_AlwaysAsks(), num_tasks=4, **kwargs)
    assert answers["answer_rate"] == answers["answer_rate_ci_low"] == 1.0
    assert asks["answer_rate"] == asks["answer_rate_ci_high"] == 0.0
    assert asks["avg_turns"] == 3.0 and asks["success_rate"] == 0.0
    # A task's episodes are averaged first, as for every metric; OUTPUT: is read as the
    # environment reads it.
    answer, question = "OUTPUT: I WANT TO ANSWER: def f(): pass", "I WANT TO ANSWER: later?"
    episodes = [fake("a", 0.0), fake("a", 0.0), fake("b", 0.0)]
    episodes[0].turns[-1].action = answer
    episodes[2].turns[-1].action = f"OUTPUT: {question.split(': ', 1)[1]}"
    assert summarize(TrajectoryBuffer(episodes))["answer_rate"] == pytest.approx(0.25)


def test_evaluate_keeps_episodes_and_checks_num_tasks(small_tasks, tmp_path):
    kwargs = {"env_kwargs": {"tasks": small_tasks}, "progress": False}
    out = tmp_path / "eval.jsonl"
    metrics = evaluate(OracleAgent(), num_tasks=3, samples_per_task=2, out=out, **kwargs)
    assert metrics["num_tasks"] == 3 and metrics["num_episodes"] == 6
    assert len(out.read_text().splitlines()) == 6
    with pytest.raises(ValueError, match=r"1\.\.12"):
        evaluate(OracleAgent(), num_tasks=13, **kwargs)


def test_summarize_averages_repeats_within_a_task_first():
    buffer = TrajectoryBuffer(
        [fake("a", 1.0), fake("a", 0.0), fake("a", 0.0), fake("a", 0.0), fake("b", 1.0, 3)]
    )
    metrics = summarize(buffer)
    assert metrics["success_rate"] == pytest.approx((0.25 + 1.0) / 2)
    assert metrics["tests_passed"] == pytest.approx((0.25 + 1.0) / 2)
    assert metrics["avg_turns"] == pytest.approx((1 + 3) / 2)
    assert metrics["num_tasks"] == 2 and metrics["num_episodes"] == 5
    with pytest.raises(ValueError, match="empty"):
        summarize(TrajectoryBuffer())


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


def test_evaluate_scores_all_episodes_or_none(small_tasks, tmp_path):
    kwargs = {"env_kwargs": {"tasks": small_tasks}, "progress": False}
    with pytest.raises(ValueError, match="shard must be None or 'auto'"):
        evaluate(OracleAgent(), num_tasks=2, shard=(0, 2), **kwargs)
    auto = evaluate(OracleAgent(), num_tasks=2, shard="auto", out=tmp_path / "e.jsonl", **kwargs)
    assert auto == evaluate(OracleAgent(), num_tasks=2, **kwargs)


def test_paired_difference_pairs_tasks_and_counts_gains():
    from agents import paired_difference

    base = TrajectoryBuffer([fake(f"t{i}", 1.0 if i < 10 else 0.0) for i in range(40)])
    # The method solves the base's 10 tasks plus 10 more, and loses one.
    better = TrajectoryBuffer(
        [fake(f"t{i}", 1.0 if (1 <= i < 20) else 0.0) for i in reversed(range(40))]
    )
    diff = paired_difference(better, base, seed=0)
    assert diff["success_rate_diff"] == pytest.approx(9 / 40)
    assert diff["gained"] == 10 and diff["lost"] == 1 and diff["num_tasks"] == 40
    # Paired: the interval excludes 0 although the two rates' own intervals overlap.
    assert 0 < diff["success_rate_diff_ci_low"] < diff["success_rate_diff"]
    assert diff["success_rate_diff"] < diff["success_rate_diff_ci_high"]
    own_better, own_base = summarize(better), summarize(base)
    assert own_better["success_rate_ci_low"] < own_base["success_rate_ci_high"]
    assert diff["tests_passed_diff"] == pytest.approx(9 / 40)
    same = paired_difference(base, base)
    assert same["success_rate_diff_ci_low"] == same["success_rate_diff_ci_high"] == 0.0


def test_paired_difference_refuses_different_tasks():
    from agents import paired_difference

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
    return result["success_rate_diff_ci_high"] - result["success_rate_diff_ci_low"]


def _shifted_run(extra, solved=10, prefix="t"):
    """40 tasks; the method solves the base's ``solved`` and ``extra`` more (a seed's draw)."""
    base = TrajectoryBuffer([fake(f"{prefix}{i}", 1.0 if i < solved else 0.0) for i in range(40)])
    method = TrajectoryBuffer(
        [fake(f"{prefix}{i}", 1.0 if i < solved + extra else 0.0) for i in range(40)]
    )
    return method, base


def test_pooled_difference_over_seeds_counts_the_seeds_spread():
    from agents import paired_difference, pooled_paired_difference

    runs = [_gain_run(3), _gain_run(5), _gain_run(1)]
    pooled = pooled_paired_difference(runs, seed=0)
    assert pooled["success_rate_diff"] == pytest.approx(9 / 120)
    assert pooled["num_tasks"] == 120 and pooled["num_runs"] == 3 and pooled["gained"] == 9
    assert pooled["success_rate_seed_sd"] > 0 and 1.5 < pooled["success_rate_dof"] < 10
    # Seeds that disagree (3, 5, 1 more tasks solved, none lost) leave the sign in doubt;
    # a bootstrap over the tasks, each with its results in every seed, would not.
    assert pooled["success_rate_diff_ci_low"] < 0 < pooled["success_rate_diff_ci_high"]
    units = [1.0 if i < gain else 0.0 for gain in (3, 5, 1) for i in range(40)]
    assert bootstrap_ci(units, clusters=[i for _ in range(3) for i in range(40)])[0] > 0
    # One run pooled is the plain paired difference, interval and all.
    alone = pooled_paired_difference(runs[:1], seed=0)
    assert {k: v for k, v in alone.items() if k != "num_runs"} == paired_difference(
        *runs[0], seed=0
    )
    with pytest.raises(ValueError, match="different tasks in run 1"):
        pooled_paired_difference([_gain_run(1), (TrajectoryBuffer([fake("x", 1.0)]), runs[0][1])])
    with pytest.raises(ValueError, match="same tasks"):
        pooled_paired_difference([_gain_run(1), _gain_run(1, "other")])
    with pytest.raises(ValueError, match="no runs"):
        pooled_paired_difference([])


def test_pooled_runs_that_agree_are_not_counted_as_new_evidence():
    from agents import paired_difference, pooled_paired_difference

    # Seeds of one comparison share their held-out tasks: three runs that agree task by
    # task carry the evidence of one, and get about its interval (not a narrower one).
    one = paired_difference(*_gain_run(4), seed=0)
    same = pooled_paired_difference([_gain_run(4)] * 3, seed=0)
    assert same["num_tasks"] == 120 and same["success_rate_seed_sd"] == 0.0
    assert same["success_rate_diff"] == pytest.approx(one["success_rate_diff"])
    assert _width(same) == pytest.approx(_width(one), rel=0.3)
    assert same["success_rate_diff_ci_low"] > 0  # 4 of 40 gained, none lost, in every seed


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
    from agents import seed_task_interval

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
    from agents import seed_task_interval

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
    from agents import seed_task_interval

    with pytest.raises(ValueError, match="at least 2"):
        seed_task_interval(np.zeros((1, 10)))
    with pytest.raises(ValueError, match="non-finite"):
        seed_task_interval(np.array([[0.0, np.nan], [1.0, 0.0]]))
    flat = seed_task_interval(np.full((3, 5), 0.25))
    assert (flat.low, flat.mean, flat.high) == (0.25, 0.25, 0.25)


def test_seeds_needed_plans_the_power_it_promises():
    """The planned seeds make the interval exclude 0 about 80% of the time, fewer less."""
    from agents import seed_task_interval, seeds_needed

    rng = np.random.default_rng(11)
    truth = {"mean": 0.04, "seed_sd": 0.05, "task_sd": 0.1, "noise_sd": 0.3}
    pilot = _synthetic_table(rng, seeds=60, **truth)  # spreads estimated near the truth
    planned = seeds_needed(pilot, effect=truth["mean"])
    assert planned is not None and 5 <= planned <= 40

    def power(seeds: int) -> float:
        tables = (_synthetic_table(rng, seeds=seeds, **truth) for _ in range(300))
        return float(np.mean([seed_task_interval(t).low > 0 for t in tables]))

    assert 0.68 <= power(planned) <= 0.92
    assert power(max(2, planned // 3)) < 0.6
    # A larger effect needs fewer seeds; more power, more.
    assert seeds_needed(pilot, effect=0.08) < planned < seeds_needed(pilot, effect=0.04, power=0.95)


def test_seeds_needed_says_when_no_number_of_seeds_would_do():
    from agents import seeds_needed

    rng = np.random.default_rng(5)
    table = _synthetic_table(rng, mean=0.0, seed_sd=0.0, task_sd=0.3, noise_sd=0.3)
    assert seeds_needed(table, effect=0.0) is None
    # Tasks shared by every seed: their spread (0.3 / sqrt(320) = 0.017) stays whatever
    # the seeds, so an effect well inside it is out of reach.
    assert seeds_needed(table, effect=0.01) is None
    assert seeds_needed(table, effect=0.2) == 2
    with pytest.raises(ValueError, match="power"):
        seeds_needed(table, power=1.0)
    with pytest.raises(ValueError, match="max_seeds"):
        seeds_needed(table, max_seeds=1)
    with pytest.raises(ValueError, match="at least 2"):
        seeds_needed(np.zeros((1, 10)))


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


def _page(task_id, similarity):
    """A Frontend episode: its reward is the final page's similarity."""
    trajectory = fake(task_id, similarity)
    trajectory.metadata["similarity"] = similarity
    return trajectory


def test_frontend_tasks_are_gained_or_lost_beyond_a_margin_and_give_a_win_rate():
    from agents import SIMILARITY_MARGIN, paired_difference, pooled_paired_difference

    base = TrajectoryBuffer([_page(f"p{i}", 0.5) for i in range(40)])
    # 10 pages clearly better, 5 clearly worse, 25 within the margin (ties).
    changes = [0.1] * 10 + [-0.1] * 5 + [SIMILARITY_MARGIN / 2] * 25
    method = TrajectoryBuffer([_page(f"p{i}", 0.5 + c) for i, c in enumerate(changes)])
    diff = paired_difference(method, base, seed=0)
    assert diff["gained"] == 10 and diff["lost"] == 5
    assert diff["similarity_diff"] == pytest.approx(np.mean(changes))
    assert diff["win_rate"] == pytest.approx((10 + 25 / 2) / 40)
    assert diff["win_rate_ci_low"] < diff["win_rate"] < diff["win_rate_ci_high"]
    same = paired_difference(base, base)
    assert same["win_rate"] == same["win_rate_ci_low"] == same["win_rate_ci_high"] == 0.5
    assert same["gained"] == same["lost"] == 0
    # Over seeds: the win rate's interval holds the seeds' spread, as the similarity's does.
    worse = TrajectoryBuffer([_page(f"p{i}", 0.5 - abs(c)) for i, c in enumerate(changes)])
    pooled = pooled_paired_difference([(method, base), (worse, base)], seed=0)
    assert pooled["win_rate"] == pytest.approx(((10 + 12.5) + (25 / 2)) / 80)
    assert pooled["win_rate_ci_low"] < 0.5 < pooled["win_rate_ci_high"]
    assert pooled["similarity_seed_sd"] > 0 and pooled["gained"] == 10 and pooled["lost"] == 20
    # Two seeds that disagree wholly: the t interval (one degree of freedom) reaches far
    # past [0, 1]; a share's interval stays within it.
    better = TrajectoryBuffer([_page(f"p{i}", 0.6) for i in range(40)])
    split = pooled_paired_difference([(better, base), (worse, base)], seed=0)
    assert split["win_rate"] == pytest.approx((40 + 12.5) / 80)
    assert split["win_rate_ci_low"] == 0.0 and split["win_rate_ci_high"] == 1.0
    # Backend results carry no win rate: a task is gained only when it is solved.
    assert "win_rate" not in paired_difference(
        TrajectoryBuffer([fake("t", 1.0)]), TrajectoryBuffer([fake("t", 0.0)])
    )
