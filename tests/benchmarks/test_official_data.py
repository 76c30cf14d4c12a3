"""The official data as input: `sweetrl train --buffer` and `data.trajectories` read the
official sweet_rl trajectory file; bad files and missing task files fail before any work."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.harness.compare import env_kwargs
from benchmarks.harness.experiment_config import ConfigError, load_config
from sweetrl_gym.tasks import load_backend_tasks

# A file in the trajectories' place, as collected data; the smoke config's warm start and
# demonstrations collect, so a run on a file turns them off.
ON_A_FILE = ["--set", 'warm_start.demonstrator=""', "--set", "data.demonstrations=[]"]


def official_file(path: Path, num_tasks: int = 2, repeats: int = 3) -> Path:
    """Write a small file in the official offline format (best-of-k row order)."""
    tasks = [
        {key: task.to_dict()[key] for key in ("problem_description", "ground_truth", "test_cases")}
        for task in load_backend_tasks("bundled", split="train")[:num_tasks]
    ]
    rows = []
    for repeat in range(repeats):  # repeat j of task i at row num_tasks * j + i
        for task in tasks:
            answer = task["ground_truth"] if repeat == 0 else "def f():\n    return None"
            question = "What should it return when the input is empty?"
            first = (
                f"<|im_start|>system\nAsk, then answer.<|im_end|>\n{task['problem_description']}"
            )
            rows.append(
                {
                    "task": task,
                    "dialogue_history": [
                        {"role": "user", "content": task["problem_description"]},
                        {
                            "role": "assistant",
                            "content": question,
                            "input": first,
                            "output": question,
                        },
                        {"role": "user", "content": "I don't know."},
                        {
                            "role": "assistant",
                            "content": f"I WANT TO ANSWER:\n{answer}",
                            "input": f"{first}{question}I don't know.",
                            "output": f"I WANT TO ANSWER:\n{answer}",
                        },
                    ],
                    "answer": answer,
                    "reward": [1.0, 0.0, 0.5][repeat % 3],
                }
            )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def error_line(capsys) -> str:
    """The one error line the CLI printed (library warnings may precede it)."""
    lines = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in lines if line.startswith("sweetrl: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines
    return errors[0]


def test_train_sweet_rl_on_an_official_trajectory_file(tmp_path, capsys):
    data = official_file(tmp_path / "colbench_code_offline.jsonl")
    out = tmp_path / "sweet"
    argv = ["train", "--algo", "sweet-rl", "--config", "smoke", "--buffer", str(data)]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"training sweet-rl on 6 episodes from {data}" in printed
    assert json.loads((out / "model" / "algorithm.json").read_text())["algorithm"] == "sweet-rl"
    fit = json.loads((out / "fit.json").read_text())
    assert fit["status"] == "trained" and fit["metrics"]["critic/train_pair_accuracy"] >= 0


def test_a_bad_trajectory_file_fails_before_any_training(tmp_path, capsys):
    data = official_file(tmp_path / "pairs.jsonl", num_tasks=1, repeats=1)
    data.write_text(data.read_text() + json.dumps({"chosen": "a", "rejected": "b"}) + "\n")
    out = tmp_path / "sweet"
    argv = ["train", "--algo", "sweet-rl", "--config", "smoke", "--buffer", str(data)]
    assert main([*argv, "--out", str(out)]) == 1
    line = error_line(capsys)
    assert f"{data}:2: missing official fields ['task', 'dialogue_history'" in line
    assert "the record has keys ['chosen', 'rejected']" in line
    assert not out.exists()
    data.write_text(json.dumps({"chosen": "a", "rejected": "b"}) + "\n")  # now the first record
    assert main([*argv, "--out", str(out)]) == 1
    line = error_line(capsys)
    assert f"{data}:1: a trajectory record in neither accepted format" in line
    assert "dialogue_history" in line and "sweetrl-gym/trajectory/v1" in line
    assert not out.exists()

    # The same file as a comparison's training data: refused before the folder is made.
    compare = ["compare", "--config", "smoke", *ON_A_FILE, "--out", str(out), "--no-progress"]
    assert main([*compare, "--set", f"data.trajectories={json.dumps(str(data))}"]) == 1
    assert f"{data}:1: a trajectory record in neither accepted format" in error_line(capsys)
    assert not out.exists()
    # A record whose task lacks a field the Backend needs: named with its file, line and field.
    rows = official_file(tmp_path / "offline.jsonl").read_text().splitlines()
    second = json.loads(rows[1])
    del second["task"]["test_cases"]
    data.write_text("\n".join([rows[0], json.dumps(second), *rows[2:]]) + "\n")
    assert main([*compare, "--set", f"data.trajectories={json.dumps(str(data))}"]) == 1
    line = error_line(capsys)
    assert f"{data}:2: not a Backend episode: its task: missing field 'test_cases'" in line
    assert not out.exists()
    missing = tmp_path / "colbench_code_offline_15k_llama8b.jsonl"
    assert main([*compare, "--set", f"data.trajectories={json.dumps(str(missing))}"]) == 1
    err = capsys.readouterr().err  # the launch lists every missing prerequisite
    assert f"- data.trajectories = {missing}: no file at {missing}" in err
    assert "fix: hf download facebook/collaborative_agent_bench" in err
    assert not out.exists()


def test_compare_trains_every_method_on_the_file_without_collecting(tmp_path, capsys):
    data = official_file(tmp_path / "offline.jsonl")
    out = tmp_path / "run"
    argv = ["compare", "--config", "smoke", *ON_A_FILE, "--methods", "zero-shot,sweet-rl"]
    argv += ["--set", f"data.trajectories={json.dumps(str(data))}", "--test-tasks", "2"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["training_data"] == {
        "source": "file",
        "path": str(data.resolve()),
        "format": "official",
        "sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
        "episodes": 6,
        "tasks": 2,
    }
    assert results["buffer"]["episodes"] == 6 and results["task_sets"]["train"]["tasks"] == 2
    assert "collect" not in results["seeds"] and results["warm_start"] is None
    assert not list(out.glob("data/*.jsonl")) and not list(out.glob("servers/collect*"))
    assert not any(stage.startswith("collect") for stage in results["stage_seconds"])
    assert results["methods"]["sweet-rl"]["fit"]["status"] == "trained"
    assert results["methods"]["sweet-rl"]["eval"]["num_tasks"] == 2
    assert (
        f"Trained on the episodes of `{data.resolve()}` (official format"
        in (out / "results.md").read_text()
    )

    # Resuming with a file whose content changed since would mix two data sets: refused.
    data.write_text(data.read_text().replace('"reward": 0.5', '"reward": 0.25'))
    assert main([*argv, "--out", str(out), "--no-progress"]) == 1
    assert "is not the file this run began with" in error_line(capsys)


def test_trajectories_refuse_what_would_collect_beside_them():
    with pytest.raises(ConfigError, match=r'set warm_start\.demonstrator = ""'):
        load_config("smoke", ["data.trajectories=x.jsonl", "data.demonstrations=[]"])
    with pytest.raises(ConfigError, match=r"set data\.demonstrations = \[\]"):
        load_config("smoke", ["data.trajectories=x.jsonl", 'warm_start.demonstrator=""'])
    assert load_config("smoke").data.trajectories == ""


@pytest.mark.parametrize(("env", "split"), [("backend", "test"), ("frontend", "train")])
def test_a_missing_task_file_names_the_official_file(tmp_path, env, split):
    missing = tmp_path / f"{split}.jsonl"
    key = "test_tasks" if split == "test" else "tasks"
    overrides = [f"env.{key}={json.dumps(str(missing))}"]
    if env == "frontend":
        overrides.append('env.id="ColBench-Frontend-v0"')
    config = load_config("smoke", overrides)
    with pytest.raises(FileNotFoundError) as caught:
        env_kwargs(config, split)
    message = str(caught.value)
    assert message.startswith(f"task file not found: {missing}")
    if env == "backend":
        assert "backend_tasks/test.jsonl of the hub dataset facebook/collaborative_agent_bench" in (
            message
        )
        assert "hf download facebook/collaborative_agent_bench" in message
    else:
        assert "frontend_tasks/train.jsonl" in message and "WebSight" in message


def test_a_missing_test_task_file_fails_a_comparison_before_any_work(tmp_path, capsys):
    out = tmp_path / "run"
    missing = tmp_path / "backend_tasks" / "test.jsonl"
    argv = ["compare", "--config", "smoke", "--out", str(out), "--no-progress"]
    assert main([*argv, "--set", f"env.test_tasks={json.dumps(str(missing))}"]) == 1
    err = capsys.readouterr().err
    assert f"- env.test_tasks = {missing}: no file at {missing}" in err
    assert "sweetrl: error: 1 prerequisite(s) missing" in err.strip().splitlines()[-1]
    assert not out.exists()


def test_the_agent_prompt_can_be_a_file(tmp_path):
    from benchmarks.harness.policies import build_policy, system_prompt

    prompt = tmp_path / "agent_prompt.txt"
    prompt.write_text("You collaborate with a user.\n{dialogue_history}\n", "utf-8")
    config = load_config("smoke", [f"policy.system_prompt_file='{prompt}'"])
    assert system_prompt(config) == prompt.read_text("utf-8")  # as it is, placeholder too
    assert build_policy(config).system_prompt == prompt.read_text("utf-8")
    missing = load_config("smoke", [f"policy.system_prompt_file='{tmp_path / 'none.txt'}'"])
    with pytest.raises(FileNotFoundError, match=r"llm_agent_code_prompt\.txt"):
        system_prompt(missing)
