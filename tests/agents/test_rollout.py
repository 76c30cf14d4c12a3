import json

import gymnasium as gym
import pytest

import sweetrl_gym  # noqa: F401
from agents import ImmediateAnswerAgent, OracleAgent, RandomAgent, collect, plan_episodes
from agents.rollout import merge_parts, part_path
from sweetrl_gym.trajectory import TrajectoryBuffer


def envs_for(tasks, count):
    return [gym.make("ColBench-Backend-v0", tasks=tasks) for _ in range(count)]


class RecordingAgent:
    """Answers at once and remembers the size of every batch it was given."""

    def __init__(self):
        self.batch_sizes = []
        self.inner = RandomAgent(answer_probability=0.5, seed=3)

    def act(self, batch):
        self.batch_sizes.append(len(batch))
        return self.inner.act(batch)


class FailingAfter(OracleAgent):
    """The oracle, crashing on its n-th call (as a model or endpoint might)."""

    def __init__(self, calls):
        super().__init__()
        self.calls = calls

    def act(self, batch, references):
        self.calls -= 1
        if self.calls < 0:
            raise RuntimeError("boom")
        return super().act(batch, references)


def test_plan_follows_the_official_best_of_k_layout():
    plan = plan_episodes(100, task_indices=[7, 3, 5], samples_per_task=2)
    assert [(e.index, e.task_index, e.sample) for e in plan] == [
        (0, 7, 0), (1, 3, 0), (2, 5, 0), (3, 7, 1), (4, 3, 1), (5, 5, 1),
    ]  # fmt: skip
    drawn = plan_episodes(10, 6, samples_per_task=2, seed=4)
    assert drawn == plan_episodes(10, 6, samples_per_task=2, seed=4)
    assert [e.task_index for e in drawn[:3]] == [e.task_index for e in drawn[3:]]
    assert len({e.task_index for e in drawn}) == 3
    assert plan_episodes(10, 6, seed=5) != plan_episodes(10, 6, seed=4)
    everything = plan_episodes(4, 10, seed=0)  # more episodes than tasks: every task, then again
    assert sorted(e.task_index for e in everything[:4]) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="out of range"):
        plan_episodes(5, task_indices=[5])
    with pytest.raises(ValueError, match="num_episodes or task_indices"):
        plan_episodes(5)
    with pytest.raises(ValueError, match="samples_per_task"):
        plan_episodes(5, 2, samples_per_task=0)


def test_batches_span_the_envs_and_keep_plan_order(small_tasks):
    agent = RecordingAgent()
    buffer = collect(envs_for(small_tasks, 4), agent, 10, seed=2, progress=False)
    assert agent.batch_sizes[0] == 4 and max(agent.batch_sizes) == 4
    assert sum(agent.batch_sizes) == buffer.num_turns
    plan = plan_episodes(len(small_tasks), 10, seed=2)
    assert [t.metadata["episode"] for t in buffer] == list(range(10))
    assert [t.task_id for t in buffer] == [small_tasks[e.task_index].task_id for e in plan]


def test_batched_equals_one_env_at_a_time(small_tasks):
    one = collect(envs_for(small_tasks, 1), OracleAgent(), 8, seed=1, progress=False)
    many = collect(envs_for(small_tasks, 5), OracleAgent(), 8, seed=1, progress=False)
    assert one == many and all(t.success for t in many)


def test_a_random_agents_episodes_depend_only_on_the_seed_and_the_plan(small_tasks, tmp_path):
    plan = {"task_indices": range(4), "samples_per_task": 3, "seed": 7, "progress": False}

    def random_episodes(num_envs, **kwargs):
        agent = RandomAgent(answer_probability=0.3, seed=1)
        return collect(envs_for(small_tasks, num_envs), agent, **plan, **kwargs)

    one = random_episodes(1)
    assert random_episodes(5) == one
    # The repeats of a task differ: each episode draws from its own seed.
    groups = one.group_by_task().values()
    assert all(len({tuple(turn.action for turn in t.turns) for t in g}) > 1 for g in groups)
    # Interrupted after a few episodes, then resumed: the same episodes.
    out = tmp_path / "random.jsonl"

    class Crashing(RandomAgent):
        calls = 0

        def act(self, batch, seeds=None):
            self.calls += 1
            if self.calls > 4:
                raise RuntimeError("boom")
            return super().act(batch, seeds)

    with pytest.raises(RuntimeError, match="boom"):
        collect(envs_for(small_tasks, 3), Crashing(answer_probability=0.3, seed=1), **plan, out=out)
    assert 0 < len(TrajectoryBuffer.load(out)) < len(one)
    assert random_episodes(2, out=out, resume=True) == one


def test_references_go_only_to_privileged_agents(small_tasks):
    class Sneaky:
        privileged = False

        def act(self, batch, references=None):
            assert references is None
            return ["I WANT TO ANSWER: pass"] * len(batch)

    buffer = collect(envs_for(small_tasks, 2), Sneaky(), 3, progress=False)
    assert all(t.num_turns == 1 and t.reward == 0.0 for t in buffer)
    assert buffer[0].reference["ground_truth"]  # kept for critics, in the buffer only


def test_agent_prompts_are_recorded(small_tasks):
    class Prompting(ImmediateAnswerAgent):
        def act(self, batch):
            self.last_prompts = [f"prompt:{m[0]['content'][:10]}" for m in batch]
            return super().act(batch)

    buffer = collect(envs_for(small_tasks, 2), Prompting(), 3, progress=False)
    for trajectory in buffer:
        assert trajectory.turns[0].prompt == f"prompt:{trajectory.messages[0]['content'][:10]}"
    plain = collect(envs_for(small_tasks, 2), ImmediateAnswerAgent(), 1, progress=False)
    assert plain[0].turns[0].prompt is None


def test_env_id_with_kwargs_and_samples_per_task(small_tasks):
    buffer = collect(
        "ColBench-Backend-v0",
        OracleAgent(max_turns=3),
        task_indices=[0, 1],
        samples_per_task=3,
        num_envs=3,
        env_kwargs={"tasks": small_tasks, "max_turns": 3},
        progress=False,
    )
    assert len(buffer) == 6 and all(t.num_turns <= 3 for t in buffer)
    groups = buffer.group_by_task()
    assert list(groups) == [small_tasks[0].task_id, small_tasks[1].task_id]
    assert [t.metadata["sample"] for t in groups[small_tasks[0].task_id]] == [0, 1, 2]


def test_crash_loses_nothing_and_resume_finishes_the_plan(small_tasks, tmp_path):
    out = tmp_path / "episodes.jsonl"
    with pytest.raises(RuntimeError, match="boom"):
        collect(envs_for(small_tasks, 3), FailingAfter(12), 9, seed=5, out=out, progress=False)
    saved = TrajectoryBuffer.load(out)
    assert 0 < len(saved) < 9
    # a crash mid-write leaves a partial last line: resume drops it
    with out.open("a") as file:
        file.write('{"format": "sweetrl-gym/traj')
    resumed = collect(
        envs_for(small_tasks, 3), OracleAgent(), 9, seed=5, out=out, resume=True, progress=False
    )
    clean = collect(envs_for(small_tasks, 2), OracleAgent(), 9, seed=5, progress=False)
    assert resumed == clean
    assert sorted(t.metadata["episode"] for t in TrajectoryBuffer.load(out)) == list(range(9))
    assert resumed[: len(saved)] == TrajectoryBuffer(
        sorted(saved, key=lambda t: t.metadata["episode"])
    )


def test_output_file_rules(small_tasks, tmp_path):
    out = tmp_path / "episodes.jsonl"
    collect(envs_for(small_tasks, 2), OracleAgent(), 2, seed=0, out=out, progress=False)
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["metadata"]["episode"] in (0, 1)
    with pytest.raises(FileExistsError, match="resume=True"):
        collect(envs_for(small_tasks, 2), OracleAgent(), 2, seed=0, out=out, progress=False)
    with pytest.raises(ValueError, match="same arguments"):
        collect(
            envs_for(small_tasks, 2), OracleAgent(), 2, seed=9, out=out, resume=True,
            progress=False,
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"plain \.jsonl"):
        collect(envs_for(small_tasks, 1), OracleAgent(), 1, out=tmp_path / "x.jsonl.gz")


@pytest.mark.parametrize(
    ("replies", "message"),
    [
        (lambda batch: ["hi"], "list of 2 strings, got 1"),
        (lambda batch: "hi", "list of 2 strings, got str"),
        (lambda batch: ["hi", 3], "non-str reply for conversation 1"),
    ],
)
def test_bad_agent_replies_get_clear_errors(small_tasks, replies, message):
    class Bad:
        def act(self, batch):
            return replies(batch)

    with pytest.raises(TypeError, match=message):
        collect(envs_for(small_tasks, 2), Bad(), 2, progress=False)


def test_bad_arguments(small_tasks):
    with pytest.raises(TypeError, match="act"):
        collect(envs_for(small_tasks, 1), object(), 1)
    with pytest.raises(ValueError, match="same task list"):
        envs = envs_for(small_tasks, 1) + envs_for(small_tasks[:3], 1)
        collect(envs, OracleAgent(), 1)
    with pytest.raises(ValueError, match="env_kwargs"):
        collect(envs_for(small_tasks, 1), OracleAgent(), 1, env_kwargs={"max_turns": 2})


def test_shards_split_the_plan_disjointly_and_merge_in_plan_order(small_tasks, tmp_path):
    out = tmp_path / "episodes.jsonl"
    whole = collect(envs_for(small_tasks, 2), OracleAgent(), 7, seed=3, progress=False)
    shares = [
        collect(envs_for(small_tasks, 2), OracleAgent(), 7, seed=3, out=out, shard=(i, 3),
                progress=False)
        for i in range(3)
    ]  # fmt: skip
    assert not out.exists()  # each process writes only its own part file
    played = [sorted(t.metadata["episode"] for t in share) for share in shares]
    assert played == [[0, 3, 6], [1, 4], [2, 5]]
    assert [len(TrajectoryBuffer.load(part_path(out, i))) for i in range(3)] == [3, 2, 2]
    assert merge_parts(out) == 3
    assert not any(part_path(out, i).exists() for i in range(3))
    assert [t.metadata["episode"] for t in TrajectoryBuffer.load(out)] == list(range(7))
    resumed = collect(
        envs_for(small_tasks, 1), FailingAfter(0), 7, seed=3, out=out, resume=True, progress=False
    )  # nothing left to play: the agent is never called
    assert resumed == whole


def test_a_shard_resumes_from_its_part_and_skips_what_out_holds(small_tasks, tmp_path):
    out = tmp_path / "episodes.jsonl"
    plan = {"task_indices": range(4), "samples_per_task": 2, "seed": 1, "progress": False}
    collect(envs_for(small_tasks, 2), ImmediateAnswerAgent(), 3, out=out, **plan)  # 3 of 8

    class AnswersOnceThenCrashes(ImmediateAnswerAgent):
        calls = 0

        def act(self, batch):
            self.calls += 1
            if self.calls > 1:
                raise RuntimeError("boom")
            return super().act(batch)

    with pytest.raises(RuntimeError, match="boom"):
        collect(envs_for(small_tasks, 1), AnswersOnceThenCrashes(), out=out, resume=True,
                shard=(0, 2), **plan)  # fmt: skip
    assert len(TrajectoryBuffer.load(part_path(out, 0))) == 1
    share = collect(
        envs_for(small_tasks, 1), ImmediateAnswerAgent(), out=out, resume=True, shard=(0, 2), **plan
    )
    mine = [t.metadata["episode"] for t in TrajectoryBuffer.load(part_path(out, 0))]
    assert sorted(mine) == [3, 5, 7] and len(share) == 6  # out's 3, then every 2nd of 3..7
    assert merge_parts(out) == 1
    assert [t.metadata["episode"] for t in TrajectoryBuffer.load(out)] == [0, 1, 2, 3, 5, 7]


def test_resume_refuses_a_file_of_another_agent_or_other_settings(small_tasks, tmp_path):
    out = tmp_path / "episodes.jsonl"
    plan = {"task_indices": range(3), "seed": 1, "progress": False, "out": out}
    collect(envs_for(small_tasks, 1), RandomAgent(answer_probability=0.5, seed=1), **plan)
    for other, differs in [
        (RandomAgent(answer_probability=0.5, seed=2), "seed: 1 then, 2 now"),
        (OracleAgent(), "kind: 'RandomAgent' then, 'OracleAgent' now"),
    ]:
        with pytest.raises(ValueError, match=f"another agent or other settings .*{differs}"):
            collect(envs_for(small_tasks, 1), other, **plan, resume=True)
    same = RandomAgent(answer_probability=0.5, seed=1)
    assert len(collect(envs_for(small_tasks, 2), same, **plan, resume=True)) == 3


def test_merge_without_parts_leaves_out_alone_and_shard_auto_runs_in_one_process(
    small_tasks, tmp_path
):
    out = tmp_path / "episodes.jsonl"
    auto = collect(
        envs_for(small_tasks, 2), OracleAgent(), 3, out=out, shard="auto", progress=False
    )
    stamp = out.stat().st_mtime_ns
    assert merge_parts(out) == 0 and out.stat().st_mtime_ns == stamp
    assert auto == collect(envs_for(small_tasks, 2), OracleAgent(), 3, progress=False)
    for bad in [(2, 2), (0, 0), (-1, 2), "all", [0, 2]]:
        with pytest.raises(ValueError, match="shard must be"):
            collect(envs_for(small_tasks, 1), OracleAgent(), 1, shard=bad)


def test_no_more_envs_are_made_than_episodes_left(small_tasks):
    agent = RecordingAgent()
    collect(
        "ColBench-Backend-v0", agent, 2, num_envs=8, env_kwargs={"tasks": small_tasks},
        progress=False,
    )  # fmt: skip
    assert max(agent.batch_sizes) <= 2


def without_agent(buffer):
    return [
        {**t.to_dict(), "metadata": {k: v for k, v in t.metadata.items() if k != "agent"}}
        for t in buffer
    ]


class Hidden:
    """Passes calls on to an agent but hides its ``prefix_caching``."""

    def __init__(self, agent):
        self.agent = agent

    def act(self, batch):
        replies = self.agent.act(batch)
        self.last_prompts = self.agent.last_prompts
        return replies


def test_collect_reuses_a_local_models_states_without_changing_episodes(small_tasks):
    from agents import TransformersAgent
    from agents.tiny_model import make_tiny_lm

    model, tokenizer = make_tiny_lm(seed=0)
    agent = TransformersAgent(model, tokenizer, temperature=0, max_new_tokens=10, batch_size=3)
    plan = {"task_indices": range(5), "seed": 4, "progress": False}
    cached = collect(envs_for(small_tasks, 3), agent, **plan)
    reused = agent.stats.reused_tokens
    plain = collect(envs_for(small_tasks, 3), Hidden(agent), **plan)
    # The same episodes (the wrapper is another agent kind: only that record differs).
    assert without_agent(cached) == without_agent(plain) and cached.num_turns > len(cached)
    assert reused > agent.stats.prompt_tokens / 4  # collect turned caching on ...
    assert agent.stats.reused_tokens == reused  # ... only for itself
    assert agent._prefix_cache is None
