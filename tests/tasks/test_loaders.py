import gzip
import json

import pytest

from sweetrl_gym.tasks import BackendTask, TaskFormatError, load_backend_tasks

GOOD = {
    "problem_description": "Make a function.",
    "ground_truth": "def f(x):\n    return x\n",
    "test_cases": {"t1": "f(1)", "t2": "f(2)"},
}


def write_jsonl(path, records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_official_jsonl(tmp_path):
    path = write_jsonl(
        tmp_path / "test.jsonl", [GOOD, "", {**GOOD, "problem_description": "Other."}]
    )
    tasks = load_backend_tasks(path, split="test")
    assert len(tasks) == 2
    assert tasks[0].test_cases == GOOD["test_cases"] and tasks[0].facts == ()
    assert tasks[0].split == "test" and tasks[0].task_id.startswith("colbench-backend-")
    assert tasks[0].task_id != tasks[1].task_id
    # ids depend on content, not on the file: the same record gets the same id
    assert load_backend_tasks([GOOD])[0].task_id == tasks[0].task_id


def test_gzip_and_test_cases_as_json_string(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps({**GOOD, "test_cases": json.dumps(GOOD["test_cases"])}) + "\n")
    assert load_backend_tasks(str(path))[0].test_cases == GOOD["test_cases"]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"ground_truth": "x", "test_cases": {"a": "f()"}}, "missing field 'problem_description'"),
        ({**GOOD, "ground_truth": 3}, "'ground_truth' must be a non-empty string"),
        ({**GOOD, "test_cases": []}, "'test_cases' must be a non-empty object"),
        ({**GOOD, "test_cases": {"a": ""}}, "test 'a' must be a non-empty call"),
        ({**GOOD, "test_cases": "{oops"}, "'test_cases' is a string but not JSON"),
        ([1, 2], "expected a JSON object"),
        ({**GOOD, "difficulty": "hard"}, "'difficulty' must be an integer"),
        # Every answer would score 0 against a reference that does not parse.
        ({**GOOD, "ground_truth": "def f(x):\n  return x +"}, "not valid Python .*its line 2"),
        ({**GOOD, "ground_truth": "def f():\x00"}, "'ground_truth' is not valid Python"),
    ],
)
def test_bad_records_name_the_line(tmp_path, record, message):
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD, GOOD, record])
    with pytest.raises(TaskFormatError, match=rf"bad\.jsonl:3: .*{message}"):
        load_backend_tasks(path)


def test_lists_of_records_and_tasks(small_tasks):
    tasks = load_backend_tasks([GOOD, small_tasks[0], GOOD])
    assert tasks[1] is small_tasks[0]
    assert tasks[0].task_id != tasks[2].task_id  # duplicates get distinct ids
    with pytest.raises(TaskFormatError, match="task 1: missing field"):
        load_backend_tasks([GOOD, {"problem_description": "x"}])


def test_difficulty_filter(small_tasks):
    levels = {t.difficulty for t in small_tasks}
    lo = min(levels)
    assert {t.difficulty for t in load_backend_tasks(small_tasks, difficulty=lo)} == {lo}
    assert all(
        lo <= t.difficulty <= lo + 1
        for t in load_backend_tasks(small_tasks, difficulty=(lo, lo + 1))
    )
    with pytest.raises(ValueError, match="no task has difficulty"):
        load_backend_tasks(small_tasks, difficulty=99)
    with pytest.raises(ValueError, match="empty difficulty range"):
        load_backend_tasks(small_tasks, difficulty=(3, 1))


def test_family_filter(small_tasks):
    first, *others = sorted({t.family for t in small_tasks})
    kept = load_backend_tasks(small_tasks, families=first)
    assert kept and {t.family for t in kept} == {first}
    assert kept == [t for t in small_tasks if t.family == first]  # source order kept
    pair = load_backend_tasks(small_tasks, families=[first, others[0]])
    assert {t.family for t in pair} == {first, others[0]}
    both = load_backend_tasks(small_tasks, families=[first], difficulty=kept[0].difficulty)
    assert both and all(t.family == first and t.difficulty == kept[0].difficulty for t in both)
    with pytest.raises(ValueError, match=rf"no task of family \['nope'\].*{first}"):
        load_backend_tasks(small_tasks, families=["nope", first])
    with pytest.raises(ValueError, match="no task of family"):
        load_backend_tasks([GOOD], families="pass_fail")  # official records have none


def test_bad_sources(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_backend_tasks(tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match="split"):
        load_backend_tasks("bundled", split="dev")
    with pytest.raises(TypeError, match="source"):
        load_backend_tasks(42)
    with pytest.raises(ValueError, match="no tasks"):
        load_backend_tasks([])


def test_round_trip_of_our_own_format(small_tasks):
    task = small_tasks[0]
    again = load_backend_tasks([json.loads(json.dumps(task.to_dict()))])[0]
    assert again == task and again.facts == task.facts
    assert isinstance(again, BackendTask) and hash(again) == hash(task)
