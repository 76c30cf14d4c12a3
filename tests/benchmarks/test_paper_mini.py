"""The paper's pipeline end to end at smoke size: ``paper-mini`` with a real loopback human."""

import json
import sys

import pytest

from benchmarks.cli import main
from benchmarks.harness.experiment_config import load_config
from sweetrl_gym import TrajectoryBuffer
from sweetrl_gym.lm import ModelServer
from tests.tiny_lm import make_tiny_lm

SERVE = f"{sys.executable} -m transformers.cli.transformers serve {{model}} --port {{port}}"


def test_paper_mini_differs_from_paper_in_sizes_only():
    paper, mini = load_config("paper"), load_config("paper-mini")
    # One process accumulates the official 8 pairs a step (paper: 1 on each of 8 GPUs).
    assert mini.training == {**paper.training, "gradient_accumulation_steps": 8}
    sizes = {"candidate_max_new_tokens"}
    assert {k: v for k, v in mini.methods.settings["sweet-rl"].items() if k not in sizes} == {
        k: v for k, v in paper.methods.settings["sweet-rl"].items() if k not in sizes
    }
    assert mini.methods.run == paper.methods.run
    for key in ("simulator_prompt_format", "simulator_on_error", "simulator", "scoring"):
        assert getattr(mini.env, key) == getattr(paper.env, key)
    assert mini.policy.eval_temperature == paper.policy.eval_temperature == 1.0


@pytest.mark.slow
def test_paper_mini_runs_the_paper_path_with_a_served_human(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)  # paper-mini reads paper-mini/ where it runs
    assert main(["mini-data", "paper-mini", "--train-tasks", "4", "--test-tasks", "2",
                 "--human-model", "none", "--no-progress"]) == 0  # fmt: skip
    human_model = tmp_path / "human-model"  # a tiny random model plays the human
    model, tokenizer = make_tiny_lm(seed=1)
    model.save_pretrained(str(human_model))
    tokenizer.save_pretrained(str(human_model))
    episodes = TrajectoryBuffer.read("paper-mini/colbench_code_offline_mini.jsonl")
    assert len(episodes) == 12 and any(t.success for t in episodes)

    out = tmp_path / "run"
    with ModelServer(SERVE, str(human_model)) as human:
        sizes = [
            "policy.model='tiny'",
            f"env.simulator_base_url='{human.base_url}'",
            f"env.simulator_model='{human_model}'",
            "env.simulator_max_tokens=8",
            "policy.max_new_tokens=8",
            "methods.sweet-rl.candidate_max_new_tokens=8",
            "eval.test_tasks=2",
        ]
        args = ["compare", "--config", "paper-mini", "--out", str(out), "--no-progress"]
        assert main([*args, *[f"--set={s}" for s in sizes]]) == 0
        log = human.log_path.read_text()
    results = json.loads((out / "results.json").read_text())
    # Every method trained on the file, none collected; each evaluated on the test file.
    assert results["training_data"]["format"] == "official"
    # Scored as the paper is, and the report says so.
    assert results["scoring"] == results["config"]["env"]["scoring"] == "official"
    assert "official evaluator's rules" in (out / "results.md").read_text()
    assert not list(out.glob("data/*.jsonl"))
    for name in load_config("paper").methods.run:
        method = results["methods"][name]
        assert name == "zero-shot" or method["fit"]["status"] == "trained", (name, method)
        assert method["eval"]["num_tasks"] == 2
    # The human answered through the server, in the official format: one chat request each.
    assert "POST /v1/chat/completions" in log
    evaluated = TrajectoryBuffer.load(out / "eval" / "zero-shot.jsonl")
    assert all(len(t.turns) >= 1 for t in evaluated)


def test_a_config_extends_another_by_name_or_path(tmp_path):
    from benchmarks.harness.experiment_config import ConfigError

    base = tmp_path / "base.toml"
    base.write_text('extends = "smoke"\nname = "base"\n[eval]\ntest_tasks = 3\n')
    child = tmp_path / "child.toml"
    child.write_text('extends = "base.toml"\nname = "child"\n[data]\ntrain_tasks = 5\n')
    config = load_config(child)
    smoke = load_config("smoke")
    assert (config.name, config.eval.test_tasks, config.data.train_tasks) == ("child", 3, 5)
    assert config.training == smoke.training and config.policy == smoke.policy
    base.write_text('extends = "child.toml"\n')
    with pytest.raises(ConfigError, match="cycle"):
        load_config(child)


@pytest.mark.slow
def test_a_human_that_dies_mid_evaluation_stops_it_and_a_resume_finishes_it(
    tmp_path, monkeypatch, capsys
):
    import sweetrl_gym.lm
    from tests.fake_openai import FakeOpenAI

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    assert main(["mini-data", "paper-mini", "--train-tasks", "2", "--test-tasks", "3",
                 "--human-model", "none", "--no-progress"]) == 0  # fmt: skip

    class QuickRetries(sweetrl_gym.lm.ChatClient):  # a dead server fails in ms, not 31 s
        def __init__(self, base_url, model, **kwargs):
            super().__init__(base_url, model, **{**kwargs, "backoff_s": 0.001})

    monkeypatch.setattr(sweetrl_gym.lm, "ChatClient", QuickRetries)
    replies = []

    def reply(messages):
        replies.append(messages)
        if len(replies) == 14:  # the probe, one whole episode (9 replies), then 4 more
            human.fail("500", times=10**6)  # the server dies: every later request fails
        return "It is called f."

    out = tmp_path / "run"
    with FakeOpenAI(reply=reply) as human:
        args = ["compare", "--config", "paper-mini", "--out", str(out), "--no-progress",
                "--methods", "zero-shot", "--set", "policy.model='tiny'",
                f"--set=env.simulator_base_url='{human.base_url}'",
                "--set=env.simulator_model='human'", "--set=policy.max_new_tokens=4",
                "--set=eval.test_tasks=3", "--set=eval.num_envs=1"]  # fmt: skip
        assert load_config("paper-mini").env.simulator_on_error == "official"
        capsys.readouterr()
        assert main(args) != 0
        error = capsys.readouterr().err  # names the endpoint and what it answered
        assert f"at {human.base_url} could not reply" in error and "HTTP 500" in error
        assert not (out / "results.json").exists()  # nothing partial looks finished
        finished = TrajectoryBuffer.load(out / "eval" / "zero-shot.jsonl")
        assert len(finished) == 1
        assert "No response." not in json.dumps(finished[0].messages)
        human._state.faults.clear()  # the server is back
        assert main(args) == 0
    evaluated = TrajectoryBuffer.load(out / "eval" / "zero-shot.jsonl")
    assert sorted(t.task_id for t in evaluated) == sorted({t.task_id for t in evaluated})
    assert len(evaluated) == 3 and evaluated[0] == finished[0]
    assert (
        json.loads((out / "results.json").read_text())["methods"]["zero-shot"]["eval"]["num_tasks"]
        == 3
    )
