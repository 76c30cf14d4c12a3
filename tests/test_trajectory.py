import gzip
import json
import re

import pytest

import sweetrl_gym  # noqa: F401
from agents import OracleAgent, RandomAgent, collect
from sweetrl_gym.tasks import load_backend_tasks
from sweetrl_gym.trajectory import (
    Trajectory,
    TrajectoryBuffer,
    TrajectoryFormatError,
    Turn,
    trajectory_file_format,
)


class PromptingOracle(OracleAgent):
    """The oracle, reporting a made-up formatted prompt the way model agents do."""

    def act(self, batch, references):
        self.last_prompts = [f"<prompt {len(m)}>{m[-1]['content']}" for m in batch]
        return super().act(batch, references)


@pytest.fixture(scope="module")
def collected(small_tasks):
    import gymnasium as gym

    envs = [gym.make("ColBench-Backend-v0", tasks=small_tasks) for _ in range(3)]
    good = collect(envs, PromptingOracle(), 6, progress=False)
    bad = collect(envs, RandomAgent(seed=1), 4, seed=1, progress=False)
    return good + bad


def test_collected_turns_are_structured(collected):
    trajectory = collected[0]
    assert trajectory.success and trajectory.reward == 1.0
    assert trajectory.turns[-1].done and not any(t.done for t in trajectory.turns[:-1])
    assert [t.reward for t in trajectory.turns[:-1]] == [0.0] * (trajectory.num_turns - 1)
    for turn in trajectory.turns:
        # each turn's messages are the chat before the action; the action follows them
        assert trajectory.messages[: len(turn.messages)] == turn.messages
        assert trajectory.messages[len(turn.messages)] == {
            "role": "assistant",
            "content": turn.action,
        }
        assert turn.prompt.startswith(f"<prompt {len(turn.messages)}>")
    assert trajectory.answer.strip() == trajectory.reference["ground_truth"].strip()


def test_save_load_round_trip(collected, tmp_path):
    for name in ("buffer.jsonl", "buffer.jsonl.gz"):
        path = collected.save(tmp_path / name)
        assert TrajectoryBuffer.load(path) == collected
    with gzip.open(tmp_path / "buffer.jsonl.gz", "rt") as file:
        assert json.loads(file.readline())["format"] == "sweetrl-gym/trajectory/v1"


class SeparatorOracle(OracleAgent):
    """The oracle, its questions carrying the Unicode line separators models emit."""

    def act(self, batch, references):
        actions = super().act(batch, references)
        return [a if "I WANT TO ANSWER" in a else f"{a}\u2028\u2029\x85" for a in actions]


def test_unicode_line_separators_in_text_round_trip(small_tasks, tmp_path):
    import gymnasium as gym

    env = gym.make("ColBench-Backend-v0", tasks=small_tasks)
    buffer = collect(env, SeparatorOracle(), 2, progress=False)
    assert any("\u2028" in turn.action for t in buffer for turn in t.turns)
    for name in ("buffer.jsonl", "buffer.jsonl.gz"):
        assert TrajectoryBuffer.load(buffer.save(tmp_path / name)) == buffer
    official = buffer.to_official_jsonl(tmp_path / "official.jsonl")
    assert len(TrajectoryBuffer.from_official_jsonl(official)) == len(buffer)


def test_official_export_round_trip(collected, tmp_path):
    path = collected.to_official_jsonl(tmp_path / "official.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == len(collected)
    for record, trajectory in zip(records, collected):
        assert set(record) == {"task", "dialogue_history", "answer", "reward"}
        assert record["task"]["ground_truth"] == trajectory.reference["ground_truth"]
        agent = [m for m in record["dialogue_history"] if m["role"] == "assistant"]
        assert [m["output"] for m in agent] == [t.action for t in trajectory.turns]
        assert [m.get("input") for m in agent] == [t.prompt for t in trajectory.turns]
    back = TrajectoryBuffer.from_official_jsonl(path)
    for original, read in zip(collected, back):
        assert read.task_id == original.task_id
        assert read.turns == original.turns
        assert read.messages == original.messages
        assert (read.reward, read.success, read.answer) == (
            original.reward,
            original.success,
            original.answer,
        )
    again = back.to_official_jsonl(tmp_path / "again.jsonl")
    assert again.read_text() == path.read_text()


def official_record(task, *, rows=None):
    return rows or {
        "task": task,
        "dialogue_history": [
            {"role": "user", "content": task["problem_description"]},
            {
                "role": "assistant",
                "content": "What is the name?",
                "input": "<|user|>...",
                "output": "What is the name?",
            },
            {"role": "user", "content": "It is f.", "note": "kept"},
            {
                "role": "assistant",
                "content": "def f(): pass",  # logged apart from the raw output
                "input": "<|user|>... It is f.",
                "output": "I WANT TO ANSWER: def f(): pass",
                "logprob": -3.5,
            },
        ],
        "answer": "def f(): pass",
        "reward": 0.3,
        "extra_top_level": [1, 2],
    }


def test_official_import_is_lossless_and_ids_match_the_task_loader(tmp_path):
    tasks = [
        {
            "problem_description": f"Write f number {i}",
            "ground_truth": f"def f():\n    return {i}",
            "test_cases": {"test1": "f()"},
        }
        for i in range(3)
    ]
    # best-of-2 layout: repeat j of task i at row num_tasks * j + i
    records = [official_record(tasks[i]) for _ in range(2) for i in range(3)]
    path = tmp_path / "official.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    buffer = TrajectoryBuffer.from_official_jsonl(path)
    ids = [t.task_id for t in load_backend_tasks(tasks, split="train")]
    assert [t.task_id for t in buffer] == ids * 2
    assert list(buffer.group_by_task()) == ids
    assert all(len(group) == 2 for group in buffer.group_by_task().values())
    first = buffer[0]
    assert [t.prompt for t in first.turns] == ["<|user|>...", "<|user|>... It is f."]
    assert first.turns[1].action == "I WANT TO ANSWER: def f(): pass"
    assert first.turns[1].messages[-1] == {"role": "user", "content": "It is f."}
    assert (first.turns[1].reward, first.turns[0].reward, first.success) == (0.3, 0.0, False)
    assert first.reference["ground_truth"] == tasks[0]["ground_truth"]
    out = buffer.to_official_jsonl(tmp_path / "out.jsonl")
    assert [json.loads(line) for line in out.read_text().splitlines()] == records


def test_an_unknown_role_or_a_non_utf8_file_is_an_error_naming_the_file(tmp_path):
    task = {"problem_description": "Write f", "ground_truth": "def f():\n    return 1"}
    record = official_record({**task, "test_cases": {"test1": "f()"}})
    record["dialogue_history"][2]["role"] = "tool"
    path = tmp_path / "official.jsonl"
    path.write_text(json.dumps(official_record(record["task"])) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(TrajectoryFormatError, match=r"official\.jsonl:2: .*unknown role 'tool'"):
        TrajectoryBuffer.from_official_jsonl(path)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes("caf\u00e9 \n".encode("latin-1"))
    for read in (TrajectoryBuffer.load, TrajectoryBuffer.from_official_jsonl):
        with pytest.raises(TrajectoryFormatError, match=r"latin\.jsonl: not a UTF-8 JSONL"):
            read(latin)


def test_a_buffer_round_trips_through_a_hugging_face_dataset(collected, tmp_path):
    from datasets import load_from_disk

    task = {"problem_description": "Write f", "ground_truth": "def f():\n    return 1"}
    path = tmp_path / "official.jsonl"
    path.write_text(json.dumps(official_record({**task, "test_cases": {"test1": "f()"}})) + "\n")
    buffer = collected + TrajectoryBuffer.from_official_jsonl(path)  # turn extras, task records
    dataset = buffer.to_dataset()
    assert len(dataset) == len(buffer)
    assert (
        dataset[0]["messages"] == buffer[0].messages and dataset[0]["task_id"] == buffer[0].task_id
    )
    dataset.save_to_disk(str(tmp_path / "hf"))  # as a user shares it
    assert TrajectoryBuffer.from_dataset(load_from_disk(str(tmp_path / "hf"))) == buffer
    with pytest.raises(TrajectoryFormatError, match="dataset row 0: not a trajectory"):
        TrajectoryBuffer.from_dataset(dataset.remove_columns("turns"))


def test_buffer_is_list_like(collected):
    assert len(collected) == 10 and isinstance(collected[2:4], TrajectoryBuffer)
    assert len(collected[2:4]) == 2 and collected[2:4][0] is collected[2]
    assert len(collected + collected[:3]) == 13
    assert collected.num_turns == sum(len(t.turns) for t in collected)
    assert sum(1 for _ in collected.turns()) == collected.num_turns
    winners = collected.filter(lambda t: t.success)
    assert len(winners) == 6 and all(t.success for t in winners)
    with pytest.raises(TypeError, match="Trajectory"):
        collected.append({"task_id": "x"})


def test_inconsistent_trajectory_is_rejected():
    with pytest.raises(TrajectoryFormatError, match="1 turns but 0 assistant"):
        Trajectory("t", [Turn([], "hi")], [{"role": "user", "content": "x"}], 0.0, False, "")


def test_bad_files_name_file_and_line(tmp_path, collected):
    path = tmp_path / "bad.jsonl"
    good = json.dumps(collected[0].to_dict())
    path.write_text(good + "\n{not json\n")
    with pytest.raises(TrajectoryFormatError, match=r"bad.jsonl:2: not valid JSON"):
        TrajectoryBuffer.load(path)
    path.write_text(json.dumps({"task": {}, "dialogue_history": []}) + "\n")
    with pytest.raises(TrajectoryFormatError, match="from_official_jsonl"):
        TrajectoryBuffer.load(path)
    with pytest.raises(TrajectoryFormatError, match=r"bad.jsonl:1: missing official fields"):
        TrajectoryBuffer.from_official_jsonl(path)
    record = official_record({"problem_description": "p", "ground_truth": "g", "test_cases": {}})
    record["reward"] = "high"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(TrajectoryFormatError, match="reward must be a finite number"):
        TrajectoryBuffer.from_official_jsonl(path)
    with pytest.raises(FileNotFoundError):
        TrajectoryBuffer.load(tmp_path / "missing.jsonl")


def test_similarities_are_given_only_when_every_episode_has_one(collected):
    def page(task_id, similarity):
        return Trajectory(
            task_id=task_id,
            turns=[],
            messages=[],
            reward=similarity,
            success=False,
            answer="",
            metadata={"similarity": similarity},
        )

    pages = TrajectoryBuffer([page("a", 0.25), page("b", 0.5)])
    assert pages.similarities() == [0.25, 0.5]
    assert collected.similarities() is None  # Backend episodes are scored by their tests
    assert TrajectoryBuffer([*pages, collected[0]]).similarities() is None
    assert TrajectoryBuffer().similarities() is None


def test_read_tells_the_two_formats_apart(collected, tmp_path):
    ours = collected.save(tmp_path / "ours.jsonl.gz")
    official = collected.to_official_jsonl(tmp_path / "official.jsonl")
    assert TrajectoryBuffer.read(ours) == collected
    assert trajectory_file_format(ours) == "sweetrl-gym"
    assert trajectory_file_format(official) == "official"
    from_file = TrajectoryBuffer.read(official)
    assert from_file == TrajectoryBuffer.from_official_jsonl(official)
    # Each turn keeps what the official training reads: the exact prompt and the raw output.
    assert [t.prompt for t in from_file[0].turns] == [t.prompt for t in collected[0].turns]
    assert [t.action for t in from_file[0].turns] == [t.action for t in collected[0].turns]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert len(TrajectoryBuffer.read(empty)) == 0 and trajectory_file_format(empty) is None


@pytest.mark.parametrize(
    ("line", "found"),
    [
        (
            {"prompt": "p", "chosen": "c", "rejected": "r"},
            r"keys \['chosen', 'prompt', 'rejected'\]",
        ),
        (
            {"format": "sweetrl-gym/trajectory/v0", "turns": []},
            "format 'sweetrl-gym/trajectory/v0'",
        ),
        ([1, 2], "a JSON list, not an object"),
    ],
)
def test_a_file_in_neither_format_names_file_line_and_both_formats(tmp_path, line, found):
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n" + json.dumps(line) + "\n")
    with pytest.raises(TrajectoryFormatError) as caught:
        TrajectoryBuffer.read(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: a trajectory record in neither accepted format")
    assert re.search(found, message)
    assert '"format": "sweetrl-gym/trajectory/v1"' in message  # what ours has
    assert "task, dialogue_history, answer, reward" in message  # what the official has


def test_read_names_the_line_of_a_bad_record_after_a_good_one(tmp_path):
    task = {"problem_description": "Write f", "ground_truth": "def f():\n    return 1"}
    good = official_record({**task, "test_cases": {"test1": "f()"}})
    unscored = {k: v for k, v in good.items() if k != "reward"}
    path = tmp_path / "official.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(unscored) + "\n")
    with pytest.raises(
        TrajectoryFormatError, match=r"official\.jsonl:2: missing .*'reward'.*score"
    ):
        TrajectoryBuffer.read(path)
    with pytest.raises(FileNotFoundError, match="no trajectory file"):
        TrajectoryBuffer.read(tmp_path / "missing.jsonl")


def test_an_unscored_official_file_is_scored_on_load_with_the_scoring_given(tmp_path):
    task = {
        "problem_description": "Write f",
        "ground_truth": "import math\ndef f():\n    return math.floor(1.5)\n",
        "test_cases": {"test1": "f()"},
    }
    record = {k: v for k, v in official_record(task).items() if k != "reward"}
    # The answer as the official env cuts it: unstripped, on the marker's line.
    answers = ["\ndef f():\n    return 1\n", " def f():\n    return 1\n"]
    path = tmp_path / "simulated.jsonl"
    path.write_text("".join(json.dumps({**record, "answer": a}) + "\n" for a in answers))
    with pytest.raises(TrajectoryFormatError, match=r"scoring='official'"):
        TrajectoryBuffer.read(path)
    ours = TrajectoryBuffer.read(path, scoring="ours")
    assert [t.reward for t in ours] == [1.0, 1.0]
    assert ours[0].success and ours[0].turns[-1].reward == 1.0
    assert ours[0].metadata["scored_on_load"] == "ours"
    # Officially the reference's top-level import is not seen inside f: nobody passes.
    assert [t.reward for t in TrajectoryBuffer.read(path, scoring="official")] == [0.0, 0.0]
    with pytest.raises(ValueError, match="did you mean 'official'"):
        TrajectoryBuffer.read(path, scoring="oficial")


def test_an_official_html_record_whose_page_failed_to_render_reads_as_no_page(tmp_path):
    task = {"problem_description": "A bakery page", "ground_truth": "<html></html>"}
    record = {**official_record(task), "answer": None, "reward": 0.0}
    path = tmp_path / "html.jsonl"
    path.write_text(json.dumps(record) + "\n")
    (trajectory,) = TrajectoryBuffer.read(path)
    assert trajectory.answer == "" and trajectory.reward == 0.0
