import pytest

import sweetrl_gym  # noqa: F401
from agents import Estimate, ImmediateAnswerAgent, Interval, OracleAgent, evaluate, summarize
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
    # Each metric with its interval reads back as one estimate.
    low, high = metrics["avg_turns_ci_low"], metrics["avg_turns_ci_high"]
    assert Estimate.from_record(metrics, "avg_turns") == Estimate(2.0, Interval(low, high))
    with pytest.raises(ValueError, match="empty"):
        summarize(TrajectoryBuffer())


def test_evaluate_scores_all_episodes_or_none(small_tasks, tmp_path):
    kwargs = {"env_kwargs": {"tasks": small_tasks}, "progress": False}
    with pytest.raises(ValueError, match="shard must be None or 'auto'"):
        evaluate(OracleAgent(), num_tasks=2, shard=(0, 2), **kwargs)
    auto = evaluate(OracleAgent(), num_tasks=2, shard="auto", out=tmp_path / "e.jsonl", **kwargs)
    assert auto == evaluate(OracleAgent(), num_tasks=2, **kwargs)
