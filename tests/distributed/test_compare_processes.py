"""``sweetrl compare`` on 2 CPU processes (torchrun, gloo): episodes split, merged once each."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks.harness.experiment_config import load_config
from sweetrl_gym import TrajectoryBuffer
from tests.distributed.launch import run_on_processes

pytestmark = pytest.mark.slow

# Odd counts, so that the 2 processes get unequal shares.
TRAIN_TASKS, SAMPLES, TEST_TASKS = 3, 3, 3


def compare(out: Path, *, fsdp: bool, extra: tuple[str, ...] = (), cpu_flag: bool = True) -> str:
    """Run the smoke comparison on 2 processes (``extra``: more arguments); return its output.

    ``cpu_flag=False`` starts them as a bare ``torchrun`` does (no ``ACCELERATE_USE_CPU``).
    """
    args = [
        "tests.distributed.run_compare",
        "--debug",  # a failure shows its traceback (run_on_processes prints the output)
        "compare",
        "--config",
        "smoke",
        "--out",
        str(out),
        "--no-progress",
        "--train-tasks",
        str(TRAIN_TASKS),
        "--samples",
        str(SAMPLES),
        "--test-tasks",
        str(TEST_TASKS),
        *extra,
    ]
    return run_on_processes(args, nproc=2, fsdp=fsdp, timeout=900, cpu_flag=cpu_flag).stdout


def played(path: Path) -> list[tuple[int, int]]:
    """``(task_index, sample)`` of every episode of a collection file, in file order."""
    buffer = TrajectoryBuffer.load(path)
    return [(t.metadata["task_index"], t.metadata["sample"]) for t in buffer]


def check_run(out: Path, stdout: str) -> dict:
    # The warm start's demonstrations take the first training tasks; RL data the next ones.
    warm = load_config("smoke").warm_start.tasks
    assert played(out / "data" / "warm-start-demonstrations.jsonl") == [(i, 0) for i in range(warm)]
    train = played(out / "data" / "train.jsonl")
    assert train == [
        (warm + i, j) for j in range(SAMPLES) for i in range(TRAIN_TASKS)
    ]  # plan order
    assert played(out / "data" / "demonstrations-oracle.jsonl") == [
        (warm + i, 0) for i in range(TRAIN_TASKS)
    ]
    results = json.loads((out / "results.json").read_text())
    assert results["processes"] == 2
    evaluated = [name for name, record in results["methods"].items() if record["eval"]]
    assert "zero-shot" in evaluated
    for name in evaluated:
        assert played(out / "eval" / f"{name}.jsonl") == [(i, 0) for i in range(TEST_TASKS)]
        assert results["methods"][name]["eval"]["num_episodes"] == TEST_TASKS
        assert (out / "eval" / f"{name}.metrics.json").is_file()
    for name, record in results["methods"].items():
        if name != "zero-shot":
            assert record["fit"]["status"] in ("trained", "skipped"), name
            assert (out / "methods" / name / "fit.json").is_file()
    assert not list(out.rglob("*.part*.jsonl"))  # every share was merged
    for path in [*out.glob("data/*.jsonl"), *out.glob("eval/*.jsonl")]:
        indices = [t.metadata["episode"] for t in TrajectoryBuffer.load(path)]
        assert indices == sorted(set(indices)), path  # each episode written once
    assert (out / "results.md").is_file() and (out / "config.json").is_file()
    assert stdout.count("results: ") == 1  # only the main process reports
    return results


def test_compare_on_two_processes_ddp_and_resume(tmp_path):
    """Bare ``torchrun`` (no ACCELERATE_USE_CPU): every method, then a resume.

    Each process once took itself for the only one there and wrote every shared file
    itself, so some files held every episode twice (which files varied from run to run).
    """
    out = tmp_path / "ddp"
    results = check_run(out, compare(out, fsdp=False, cpu_flag=False))
    statuses = {n: r["fit"]["status"] for n, r in results["methods"].items() if r["fit"]}
    # sweet-rl-env trains only when the environment tells some of SWEET-RL's pairs apart.
    assert {n for n, status in statuses.items() if status != "trained"} <= {"sweet-rl-env"}
    assert statuses["sweet-rl-random"] == statuses["sweet-rl-nll"] == "trained"
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.suffix in (".jsonl", ".json")}
    stamps = {p: s for p, s in stamps.items() if p.name != "results.json"}
    # Resumed: nothing is played, trained or evaluated again.
    compare(out, fsdp=False, cpu_flag=False)
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_compare_on_two_processes_fsdp2(tmp_path):
    # One method of each kind of model (the policy; a critic beside it; a control reusing
    # SWEET-RL's critic): every algorithm's fit under FSDP2 is test_fit_processes'.
    out = tmp_path / "fsdp"
    methods = "methods.run=['zero-shot', 'rft', 'archer', 'sweet-rl', 'sweet-rl-random']"
    results = check_run(out, compare(out, fsdp=True, extra=("--set", methods)))
    assert [n for n, r in results["methods"].items() if r["fit"]] == [
        "warm-start",
        "rft",
        "archer",
        "sweet-rl",
        "sweet-rl-random",
    ]


def test_compare_on_two_processes_serves_each_process_its_own_server(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "served"
    serve = f"{sys.executable} -m transformers.cli.transformers serve {{model}} --port {{port}}"
    served = ("--set", f'policy.server_command="{serve}"', "--set", "methods.run=['rft']")
    compare(out, fsdp=False, extra=served)
    results = json.loads((out / "results.json").read_text())
    assert results["processes"] == 2
    assert results["methods"]["rft"]["eval"]["num_tasks"] == TEST_TASKS
    logs = {p.stem: p.read_text() for p in (out / "servers").glob("*.log")}
    stages = ("collect", "eval-warm-start", "eval-rft")
    assert set(logs) == {f"{stage}-{rank}" for stage in stages for rank in (0, 1)}
    assert all("POST /v1/completions" in log for log in logs.values())
