"""`sweetrl eval|collect|play --agent` with your own agent: an import path or an entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents import BACKEND_AGENT_PROMPT
from benchmarks.cli import main
from sweetrl_gym import TrajectoryBuffer
from tests.agents.test_resolve import write_distribution, write_package

ROOT = Path(__file__).resolve().parents[2]

# Answers at once; writes the first conversation it gets to $ECHO_LOG (if set).
ECHO_SOURCE = """
import json
import os


class EchoAgent:
    def act(self, batch):
        log = os.environ.get("ECHO_LOG")
        if log:
            with open(log, "a") as file:
                file.write(json.dumps(list(batch[0])) + "\\n")
        return ["I WANT TO ANSWER: def f(): return None" for _ in batch]


def make_nothing():
    return None


def make_echo(model):
    return EchoAgent()
"""


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("sweetrl: error: "), err
    return lines[0]


def test_eval_with_an_agent_from_a_package_on_the_python_path(tmp_path):
    write_package(tmp_path / "site", "myagents", ECHO_SOURCE)
    log = tmp_path / "conversations.jsonl"
    metrics = tmp_path / "metrics.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)]),
        "ECHO_LOG": str(log),
    }
    command = [sys.executable, "-m", "benchmarks.cli", "eval", "--config", "smoke"]
    command += ["--agent", "myagents:EchoAgent", "--tasks", "2", "--no-progress"]
    done = subprocess.run(
        [*command, "--out", str(metrics)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "myagents:EchoAgent on 2 test tasks of ColBench-Backend-v0, scoring 'ours':" in done.stdout
    record = json.loads(metrics.read_text())
    assert record["agent"] == "myagents:EchoAgent" and record["metrics"]["num_tasks"] == 2
    assert record["metrics"]["avg_turns"] == 1.0 and record["metrics"]["answer_rate"] == 1.0
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert seen and seen[0][0] == {"role": "system", "content": BACKEND_AGENT_PROMPT}


def test_collect_and_play_with_an_installed_entry_point(importable, tmp_path, capsys):
    write_package(importable, "myagents_ep", ECHO_SOURCE)
    write_distribution(importable, "myagents_ep", {"echo": "myagents_ep:EchoAgent"})
    out = tmp_path / "data.jsonl"
    argv = ["collect", "--config", "smoke", "--agent", "echo", "--tasks", "1", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    buffer = TrajectoryBuffer.load(out)
    assert len(buffer) and all(t.num_turns == 1 for t in buffer)
    assert buffer[0].metadata["agent"]["kind"] == "EchoAgent"
    assert main(["play", "--agent", "echo", "--task-index", "0"]) == 0
    assert "=== reward" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "nosuchmodule:EchoAgent",
            "agent 'nosuchmodule:EchoAgent': importing module 'nosuchmodule' failed: "
            "ModuleNotFoundError: No module named 'nosuchmodule'",
        ),
        ("myagents:EchoAgnt", "has no attribute 'EchoAgnt'; did you mean 'EchoAgent'?"),
        ("myagents:make_nothing", "make_nothing() returned None (type NoneType), which is not"),
        ("myagents:make_echo", "cannot be called with no arguments"),
    ],
)
def test_a_bad_agent_is_one_clean_error_before_any_episode(importable, capsys, spec, message):
    write_package(importable, "myagents", ECHO_SOURCE)
    for command in ("eval", "collect", "play"):
        argv = [command, "--config", "smoke", "--agent", spec]
        if command == "collect":
            argv += ["--out", str(importable / "never.jsonl")]
        assert main(argv) == 2
        assert message in one_error_line(capsys.readouterr().err)
    assert not (importable / "never.jsonl").exists()


def test_the_help_names_import_paths_and_entry_points(capsys):
    assert main(["eval", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "package.module:NAME" in text and "sweetrl_gym.agents" in text


def test_a_module_whose_import_fails_says_why(importable, capsys):
    write_package(importable, "mybroken", "raise RuntimeError('needs a GPU')\n")
    assert main(["eval", "--config", "smoke", "--agent", "mybroken:Agent"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "'mybroken'" in line and "RuntimeError: needs a GPU" in line
