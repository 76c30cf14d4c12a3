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


def test_pooled_difference_over_runs_of_other_tasks_is_tighter():
    from agents import paired_difference, pooled_paired_difference

    runs = [_gain_run(3, "a"), _gain_run(5, "b"), _gain_run(1, "c")]
    pooled = pooled_paired_difference(runs, seed=0)
    assert pooled["success_rate_diff"] == pytest.approx(9 / 120)
    assert pooled["num_tasks"] == 120 and pooled["num_runs"] == 3 and pooled["gained"] == 9
    one = paired_difference(*runs[0], seed=0)
    assert _width(pooled) < _width(one)
    # One run pooled is the plain paired difference, interval and all.
    alone = pooled_paired_difference(runs[:1], seed=0)
    assert {k: v for k, v in alone.items() if k != "num_runs"} == one
    with pytest.raises(ValueError, match="different tasks in run 1"):
        pooled_paired_difference([_gain_run(1), (TrajectoryBuffer([fake("x", 1.0)]), runs[0][1])])
    with pytest.raises(ValueError, match="no runs"):
        pooled_paired_difference([])


def test_pooled_runs_on_the_same_tasks_are_not_counted_as_new_evidence():
    from agents import paired_difference, pooled_paired_difference

    # Seeds of one comparison share their held-out tasks: three runs that agree task by
    # task carry the evidence of one, and get its interval (not a narrower one).
    one = paired_difference(*_gain_run(4), seed=0)
    same = pooled_paired_difference([_gain_run(4)] * 3, seed=0)
    assert same["num_tasks"] == 120
    assert same["success_rate_diff"] == pytest.approx(one["success_rate_diff"])
    assert (same["success_rate_diff_ci_low"], same["success_rate_diff_ci_high"]) == (
        pytest.approx(one["success_rate_diff_ci_low"]),
        pytest.approx(one["success_rate_diff_ci_high"]),
    )
    # The same three runs on tasks of their own are three times the evidence.
    apart = pooled_paired_difference([_gain_run(4, p) for p in "abc"], seed=0)
    assert _width(apart) < 0.75 * _width(same)


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
