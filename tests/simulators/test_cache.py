import json

import gymnasium as gym
import pytest

import sweetrl_gym  # noqa: F401
from agents import OracleAgent, collect
from sweetrl_gym.simulators import CachedSimulator, RuleBasedSimulator, SimulatorError


class CountingSimulator(RuleBasedSimulator):
    """The rule-based human, counting how often it is really asked."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def reply(self, task, messages):
        self.calls += 1
        return super().reply(task, messages)


def play(tasks, simulator, episodes=4):
    env = gym.make("ColBench-Backend-v0", tasks=tasks, simulator=simulator)
    return collect(env, OracleAgent(), episodes, seed=3, progress=False)


def test_record_then_replay_without_the_simulator(small_tasks, tmp_path):
    path = tmp_path / "human.jsonl"
    inner = CountingSimulator()
    recorder = CachedSimulator(inner, path)
    first = play(small_tasks, recorder)
    assert inner.calls == recorder.misses > 0 and recorder.hits == 0
    assert len(path.read_text().splitlines()) == inner.calls == len(recorder)
    again = play(small_tasks, recorder)  # same dialogues: every reply from the cache
    assert recorder.hits == inner.calls and again == first
    replayer = CachedSimulator(recorder.name, path)
    assert replayer.name == inner.name and replayer.replay
    assert play(small_tasks, replayer) == first
    assert replayer.misses == 0 and inner.calls == recorder.misses


def test_replay_miss_is_a_clear_error(small_tasks, tmp_path):
    path = tmp_path / "human.jsonl"
    play(small_tasks, CachedSimulator(RuleBasedSimulator(), path), episodes=1)
    replayer = CachedSimulator(RuleBasedSimulator(), path, replay=True)
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "new?"}]
    with pytest.raises(SimulatorError, match="no recorded reply"):
        replayer.reply(small_tasks[0], messages)
    other = CachedSimulator("another-simulator", path)
    assert len(other) == 0  # replies are keyed by simulator name


def test_truncated_tail_is_dropped_and_recording_continues(small_tasks, tmp_path):
    path = tmp_path / "human.jsonl"
    sim = CachedSimulator(RuleBasedSimulator(), path)
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "name?"}]
    sim.reply(small_tasks[0], messages)
    path.write_text(path.read_text() + '{"simulator": "rule')  # crash mid-write
    again = CachedSimulator(RuleBasedSimulator(), path)
    assert len(again) == 1
    again.reply(small_tasks[1], messages)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["task_id"] for r in records] == [small_tasks[0].task_id, small_tasks[1].task_id]


class SeparatorSimulator(RuleBasedSimulator):
    """The rule-based human, its replies carrying Unicode line separators."""

    def reply(self, task, messages):
        return super().reply(task, messages) + "\u2028 and \x85 then \u2029"


def test_replies_with_unicode_line_separators_reload(small_tasks, tmp_path):
    path = tmp_path / "human.jsonl"
    first = play(small_tasks, CachedSimulator(SeparatorSimulator(), path), episodes=2)
    replayer = CachedSimulator(SeparatorSimulator(), path, replay=True)
    assert play(small_tasks, replayer, episodes=2) == first
    assert replayer.misses == 0 and replayer.hits > 0


def test_bad_arguments_and_files(tmp_path):
    with pytest.raises(TypeError, match="Simulator"):
        CachedSimulator(object())
    with pytest.raises(ValueError, match="path"):
        CachedSimulator(RuleBasedSimulator(), replay=True)
    with pytest.raises(FileNotFoundError):
        CachedSimulator("x", tmp_path / "none.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(SimulatorError, match=r"bad.jsonl:1"):
        CachedSimulator(RuleBasedSimulator(), bad)
    sim = CachedSimulator(RuleBasedSimulator())
    with pytest.raises(SimulatorError, match="task_id"):
        sim.reply({"ground_truth": "x"}, [{"role": "user", "content": "x"}])
