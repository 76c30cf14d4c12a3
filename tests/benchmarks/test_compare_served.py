"""The comparison with its policies served by a real OpenAI-compatible server."""

import json
import sys

import pytest

from agents import evaluate
from benchmarks.cli import main
from benchmarks.harness.compare import env_kwargs
from benchmarks.harness.experiment_config import ConfigError, load_config
from benchmarks.harness.policies import saved_policy
from sweetrl_gym import TrajectoryBuffer

SERVE = f"{sys.executable} -m transformers.cli.transformers serve {{model}} --port {{port}}"


@pytest.mark.slow
def test_a_comparison_generates_through_a_real_server(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "served"
    overrides = [f'policy.server_command="{SERVE}"', "methods.run=['zero-shot','sweet-rl']"]
    args = ["compare", "--config", "smoke", "--out", str(out), "--no-progress"]
    assert main([*args, *[f"--set={o}" for o in overrides]]) == 0
    results = json.loads((out / "results.json").read_text())
    assert all(results["methods"][m]["eval"]["num_tasks"] == 4 for m in results["methods"])

    # Every stage that samples from a saved policy served it; the rest started no server.
    logs = {p.stem: p.read_text() for p in (out / "servers").glob("*.log")}
    assert set(logs) == {"collect", "sweet-rl", "eval-warm-start", "eval-sweet-rl"}
    assert all("POST /v1/completions" in log for log in logs.values())

    # Served sampling samples: a task's three training episodes at temperature 1.0 differ
    # (`transformers serve` had answered every one greedily, the same dialogue thrice).
    first_actions: dict[str, set[str]] = {}
    for episode in TrajectoryBuffer.load(out / "data" / "train.jsonl"):
        first_actions.setdefault(episode.task_id, set()).add(episode.turns[0].action)
    assert all(len(actions) > 1 for actions in first_actions.values())

    # Served greedy evaluation is the local one: the same episodes from the same weights.
    config = load_config("smoke", overrides)
    served = TrajectoryBuffer.load(out / "eval" / "warm-start.jsonl")
    local = evaluate(
        saved_policy(out / "methods" / "warm-start" / "model", config, evaluation=True),
        "ColBench-Backend-v0",
        split="test",
        num_tasks=4,
        num_envs=8,
        seed=config.seed,
        env_kwargs=env_kwargs(config, "test"),
        out=tmp_path / "local.jsonl",
        progress=False,
    )
    assert local["success_rate"] == results["methods"]["warm-start"]["eval"]["success_rate"]
    local_episodes = TrajectoryBuffer.load(tmp_path / "local.jsonl")
    assert [t.messages for t in local_episodes] == [t.messages for t in served]


def test_server_settings_are_checked_before_any_work():
    with pytest.raises(ConfigError, match=r"policy.server_command: .*needs \{port\}"):
        load_config("smoke", ["policy.server_command='vllm serve {model}'"])
    with pytest.raises(ConfigError, match=r"policy\.server_base_url: base_url must start with"):
        load_config("smoke", ["policy.server_base_url='localhost:8000'"])
    with pytest.raises(ConfigError, match="not both"):
        load_config(
            "smoke",
            [
                "policy.server_base_url='http://localhost:8000/v1'",
                "policy.server_command='vllm serve {model} --port {port}'",
            ],
        )
    with pytest.raises(ConfigError, match="server_concurrency must be >= 1"):
        load_config("smoke", ["policy.server_concurrency=0"])
