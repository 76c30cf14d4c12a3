"""The `sweetrl` command, through `main([...])`: help, play, collect -> train -> eval, errors."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.harness.experiment_config import config_names, load_config
from sweetrl_gym import TrajectoryBuffer

COMMANDS = ("play", "collect", "train", "eval", "compare", "configs")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("sweetrl: error: "), err
    return lines[0]


def final_reward(out: str) -> float:
    match = re.search(r"^=== reward (\d+\.\d+): ", out, flags=re.MULTILINE)
    assert match, out
    return float(match.group(1))


# -- help and configs ---------------------------------------------------------------------


def test_top_level_help_lists_every_command(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in (*COMMANDS, "bench"):
        assert re.search(rf"^\s+{command}\s", out, flags=re.MULTILINE), command


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_the_config_options(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert out.startswith(f"usage: sweetrl {command}")
    assert "--config" in out and "--set SECTION.KEY=VALUE" in out


def test_the_command_asks_openmp_threads_to_sleep_before_torch_loads():
    # Importing our packages sets nothing (tests/test_package.py); the command sets the
    # policy itself, first, for the training and generation it runs next to other jobs.
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    code = (
        "import os, sys\n"
        "from benchmarks.cli import main\n"
        "before = os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules\n"
        "main(['--help'])\n"
        "print(before, os.environ.get('OMP_WAIT_POLICY'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "(None, False) PASSIVE"


def test_a_wait_policy_of_the_users_is_kept(monkeypatch):
    from benchmarks.machine import share_cores_politely

    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    share_cores_politely()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    monkeypatch.delenv("OMP_WAIT_POLICY")
    share_cores_politely()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


def test_bench_help_is_the_bench_scripts_own(capsys):
    code, out, _ = run(capsys, "bench", "--help")
    assert code == 0
    assert out.startswith("usage: sweetrl bench") and "--scale" in out


def test_bench_forwards_its_arguments(capsys, monkeypatch):
    seen = []
    fake = types.SimpleNamespace(main=lambda argv: seen.append(argv) or {"rows": []})
    monkeypatch.setitem(sys.modules, "benchmarks.speed.bench", fake)
    assert run(capsys, "bench", "--scale", "smoke", "--only", "sandbox")[0] == 0
    assert seen == [["--scale", "smoke", "--only", "sandbox"]]


def test_configs_lists_the_bundled_configs_with_descriptions(capsys):
    code, out, _ = run(capsys, "configs")
    assert code == 0
    for name in config_names():
        description = load_config(name).description
        assert re.search(rf"^{re.escape(name)}\s+{re.escape(description)}$", out, re.MULTILINE)


def test_configs_shows_one_config_with_overrides(capsys):
    code, out, _ = run(capsys, "configs", "smoke", "--set", "data.train_tasks=7")
    assert code == 0
    shown = json.loads(out)
    assert shown["name"] == "smoke" and shown["data"]["train_tasks"] == 7


# -- play -----------------------------------------------------------------------------------


def test_play_with_the_oracle_prints_the_dialogue_and_a_full_reward(capsys):
    code, out, _ = run(capsys, "play", "--agent", "oracle", "--env", "backend", "--task-index", "0")
    assert code == 0
    assert "[HUMAN]" in out and "[AGENT]" in out and "I WANT TO ANSWER:" in out
    assert final_reward(out) == 1.0
    assert re.search(r"(\d+)/\1 tests passed, success", out)


def test_a_person_plays_from_standard_input(capsys, monkeypatch):
    typed = "What should it return?\n\nI WANT TO ANSWER:\ndef f():\n    return None\n\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(typed))
    code, out, _ = run(capsys, "play", "--agent", "human", "--max-turns", "3")
    assert code == 0
    assert "Your message" in out
    assert final_reward(out) == 0.0 and "turns 2" in out
    # After a wrong answer: which tests failed, with what they expected and got.
    failed = out[out.index("failed tests:") :].splitlines()[1]
    assert "expected" in failed and ", got " in failed


def test_play_streams_a_local_models_replies_with_a_cpu_sized_budget(capsys, monkeypatch):
    import agents

    made = []
    real = agents.TransformersAgent.__init__

    def recording(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(agents.TransformersAgent, "__init__", recording)
    code, out, _ = run(capsys, "play", "--agent", "tiny", "--max-turns", "2")
    assert code == 0
    (agent,) = made
    assert agent.max_new_tokens == 256  # without a config: a reply a CPU serves in seconds
    assert agent.streamer is not None  # shown token by token as it is generated
    agent_lines = [line for line in out.splitlines() if line.startswith("[AGENT] ")]
    assert len(agent_lines) == 2 and all(len(line) > len("[AGENT] ") for line in agent_lines)


def test_play_stops_cleanly_when_the_input_ends(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, _, err = run(capsys, "play")
    assert code == 1
    assert "no input" in one_error_line(err)


def test_play_refuses_a_task_index_out_of_range(capsys):
    code, _, err = run(capsys, "play", "--agent", "oracle", "--task-index", "100000")
    assert code == 2
    assert "--task-index must be in 0.." in one_error_line(err)


@pytest.mark.slow
def test_play_frontend_prints_screenshot_paths(capsys, tmp_path):
    argv = ["play", "--agent", "oracle", "--env", "frontend", "--screenshots", str(tmp_path)]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert final_reward(out) == 1.0
    shots = re.findall(r"\[screenshot of the agent's page\] (\S+)", out)
    target = re.search(r"target page: (\S+)", out)
    assert shots and target
    for path in [*shots, target.group(1)]:
        assert Path(path).is_file() and Path(path).parent == tmp_path


# -- collect -> train -> eval -----------------------------------------------------------------


@pytest.fixture
def restores_library_progress_bars():
    """The commands turn transformers' bars off process-wide: on before and after."""
    from huggingface_hub.utils import enable_progress_bars
    from transformers.utils import logging as transformers_logging

    enable_progress_bars()
    transformers_logging.enable_progress_bar()
    yield
    enable_progress_bars()
    transformers_logging.enable_progress_bar()


def test_collect_train_eval_with_the_tiny_model(capsys, tmp_path, restores_library_progress_bars):
    data = tmp_path / "data.jsonl"
    collect = ["collect", "--agent", "oracle", "--config", "smoke", "--tasks", "2"]
    code, out, _ = run(capsys, *collect, "--out", str(data), "--no-progress")
    assert code == 0
    samples = load_config("smoke").data.samples_per_task
    buffer = TrajectoryBuffer.load(data)
    assert len(buffer) == 2 * samples and all(t.success for t in buffer)
    assert f"{2 * samples} episodes of 2 train tasks" in out
    assert re.search(r"success_rate\s+1\.000\s+95% CI \[1\.000, 1\.000\]", out)

    # The same command again: refused without --resume, a no-op with it.
    code, _, err = run(capsys, *collect, "--out", str(data), "--no-progress")
    assert code == 1 and "--resume" in one_error_line(err)
    assert run(capsys, *collect, "--out", str(data), "--no-progress", "--resume")[0] == 0
    assert len(TrajectoryBuffer.load(data)) == 2 * samples

    out_dir = tmp_path / "rft"
    train = ["train", "--algo", "rft", "--buffer", str(data), "--config", "smoke"]
    code, out, _ = run(capsys, *train, "--out", str(out_dir), "--set", "training.progress=false")
    assert code == 0
    saved = json.loads((out_dir / "model" / "algorithm.json").read_text())
    assert saved["algorithm"] == "rft"
    assert re.search(r"train/loss\s+\d", out)
    assert f"sweetrl eval --agent {out_dir / 'model'} --config smoke" in out
    code, _, err = run(capsys, *train, "--out", str(out_dir))
    assert code == 1 and "--resume" in one_error_line(err)

    metrics_file = tmp_path / "metrics.json"
    evaluate = ["eval", "--agent", str(out_dir / "model"), "--config", "smoke", "--tasks", "2"]
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars
    from transformers.utils.logging import enable_progress_bar, is_progress_bar_enabled

    enable_progress_bars()  # the commands above ran with --no-progress
    enable_progress_bar()
    code, _, err = run(capsys, *evaluate)
    assert code == 0 and "episodes" in err and "Loading weights" not in err
    # Our bars only: transformers' own ("Loading weights") off, the hub's downloads left on
    assert not is_progress_bar_enabled() and not are_progress_bars_disabled()
    code, out, err = run(capsys, *evaluate, "--out", str(metrics_file), "--no-progress")
    assert code == 0 and "episodes" not in err
    # transformers' own bars ("Loading weights") and downloads' are off too
    assert not is_progress_bar_enabled() and are_progress_bars_disabled()
    record = json.loads(metrics_file.read_text())
    assert record["metrics"]["num_tasks"] == 2 and record["config"] == "smoke"
    assert 0.0 <= record["metrics"]["tests_passed"] <= 1.0
    assert "tests_passed" in out and "95% CI" in out


def test_train_says_when_the_buffer_gives_nothing_to_learn(capsys, tmp_path):
    data = tmp_path / "data.jsonl"
    collect = ["collect", "--agent", "immediate", "--config", "smoke", "--tasks", "2"]
    assert run(capsys, *collect, "--out", str(data), "--no-progress")[0] == 0
    out_dir = tmp_path / "dpo"
    train = ["train", "--algo", "mt-dpo", "--config", "smoke", "--buffer", str(data)]
    code, _, err = run(capsys, *train, "--out", str(out_dir))
    assert code == 1
    assert "mt-dpo cannot learn from" in one_error_line(err)
    assert not (out_dir / "run").exists() and not (out_dir / "fit.json").exists()


# -- errors ------------------------------------------------------------------------------------


def test_missing_buffer_file(capsys, tmp_path):
    missing = tmp_path / "none.jsonl"
    argv = ["train", "--algo", "rft", "--buffer", str(missing), "--out", str(tmp_path / "o")]
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert f"buffer file not found: {missing}" in one_error_line(err)


def test_bad_override(capsys, tmp_path):
    argv = ["eval", "--config", "smoke", "--set", "eval.test_taks=2"]
    code, _, err = run(capsys, *argv)
    assert code == 2
    line = one_error_line(err)
    assert "unknown setting 'eval.test_taks'" in line and "test_tasks" in line


def test_bad_training_setting_is_refused_before_any_work(capsys, tmp_path):
    out = tmp_path / "o"
    argv = ["train", "--algo", "rft", "--buffer", str(tmp_path / "none.jsonl"), "--out", str(out)]
    code, _, err = run(capsys, *argv, "--set", "training.lerning_rate=1e-6")
    assert code == 2
    assert "did you mean 'learning_rate'" in one_error_line(err)
    assert not out.exists()


def test_every_command_checks_every_setting_before_any_work(capsys, tmp_path):
    # eval trains nothing, yet a training value of the wrong type is refused by name.
    code, _, err = run(capsys, "eval", "--config", "smoke", "--set", "training.learning_rate=abc")
    assert code == 2 and "learning_rate must be a number, got 'abc'" in one_error_line(err)
    # A typo in the settings of a method the run leaves out is found too.
    out = tmp_path / "run"
    argv = ["compare", "--config", "smoke", "--out", str(out)]
    code, _, err = run(capsys, *argv, "--set", "methods.archer.critic_epoch=2")
    assert code == 2 and "[methods.archer]" in err and "'critic_epochs'" in one_error_line(err)
    assert not out.exists()
    code, _, err = run(capsys, "eval", "--config", "smoke", "--set", "policy.temperature=hot")
    assert code == 2 and "policy.temperature must be a number, got 'hot'" in one_error_line(err)
    code, _, err = run(capsys, "eval", "--config", "smoke", "--set", "env.max_turn=3")
    assert code == 2 and "did you mean 'env.max_turns'?" in one_error_line(err)


def test_more_tasks_than_the_split_has_says_so(capsys, tmp_path):
    out = tmp_path / "random.jsonl"
    argv = ["collect", "--config", "smoke", "--agent", "random", "--out", str(out)]
    narrow = ["env.families=['pass_fail']", "env.difficulty=[1, 1]", "data.samples_per_task=1"]
    code, _, err = run(capsys, *argv, "--tasks", "100000", *(f"--set={x}" for x in narrow))
    assert code == 0
    available = len(TrajectoryBuffer.load(out).group_by_task())
    assert f"100000 tasks asked for, but the train split has {available}" in err
    assert 0 < available < 100000


def test_override_without_equals(capsys):
    code, _, err = run(capsys, "configs", "smoke", "--set", "data.train_tasks")
    assert code == 2 and "section.key=value" in one_error_line(err)


def test_unknown_algorithm(capsys, tmp_path):
    argv = ["train", "--algo", "ppo", "--buffer", "x.jsonl", "--out", str(tmp_path)]
    code, _, err = run(capsys, *argv)
    assert code == 2
    line = one_error_line(err)
    assert (
        "unknown algorithm 'ppo'" in line and "sweet-rl" in line and "package.module:Class" in line
    )
    code, _, err = run(capsys, "train", "--algo", "sweet_rl", *argv[3:])
    assert code == 2 and "did you mean 'sweet-rl'?" in one_error_line(err)


def test_unknown_config_name(capsys):
    code, _, err = run(capsys, "eval", "--config", "nope")
    assert code == 2
    line = one_error_line(err)
    assert "no config named 'nope'" in line and "smoke" in line


def test_unknown_flag_names_the_subcommands_help(capsys):
    code, _, err = run(capsys, "play", "--agnet", "oracle")
    assert code == 2
    assert "unrecognized arguments: --agnet" in one_error_line(err)
    assert "sweetrl play --help" in err


def test_bad_number(capsys):
    code, _, err = run(capsys, "eval", "--tasks", "0")
    assert code == 2 and "positive integer" in one_error_line(err)


def test_unknown_agent(capsys, tmp_path):
    missing = tmp_path / "no-such-model"
    code, _, err = run(capsys, "eval", "--config", "smoke", "--agent", str(missing))
    assert code == 1 and "neither a known agent" in one_error_line(err)


def test_openai_agent_needs_its_server(capsys):
    code, _, err = run(capsys, "play", "--agent", "openai")
    assert code == 2 and "--openai-url" in one_error_line(err)


def test_debug_shows_the_traceback(tmp_path):
    argv = ["train", "--algo", "rft", "--buffer", str(tmp_path / "none.jsonl")]
    with pytest.raises(FileNotFoundError, match="buffer file not found"):
        main([*argv, "--out", str(tmp_path / "o"), "--debug"])


def test_missing_optional_dependency(capsys, monkeypatch):
    def needs_trl(argv):
        import trl  # noqa: F401

    monkeypatch.setitem(sys.modules, "trl", None)  # import trl -> ModuleNotFoundError
    monkeypatch.setitem(
        sys.modules, "benchmarks.speed.bench", types.SimpleNamespace(main=needs_trl)
    )
    code, _, err = run(capsys, "bench")
    assert code == 1
    assert one_error_line(err) == (
        "sweetrl: error: missing optional dependency 'trl': pip install 'sweetrl-gym[bench]'"
    )


def test_interrupt(capsys, monkeypatch):
    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setitem(
        sys.modules, "benchmarks.speed.bench", types.SimpleNamespace(main=interrupted)
    )
    code, _, err = run(capsys, "bench")
    assert code == 130 and one_error_line(err) == "sweetrl: error: interrupted"


def test_eval_of_a_saved_method_plays_the_comparisons_own_evaluation(capsys, tmp_path):
    # Sampling in bf16, as the CPU configs do: the saved policy must be evaluated in the
    # config's dtype (and batch, token budget, history) by `sweetrl eval` as by the comparison.
    settings = ["--set", "policy.dtype='bfloat16'"]
    run = tmp_path / "run"
    command = ["compare", "--config", "smoke", "--methods", "rft", "--out", str(run)]
    assert main([*command, *settings, "--no-progress"]) == 0
    episodes = tmp_path / "rft-eval.jsonl"
    model = run / "methods" / "rft" / "model"
    command = ["eval", "--config", "smoke", "--agent", str(model), "--episodes", str(episodes)]
    assert main([*command, *settings, "--no-progress"]) == 0
    capsys.readouterr()
    ours = {t.task_id: [turn.action for turn in t.turns] for t in TrajectoryBuffer.load(episodes)}
    compared = TrajectoryBuffer.load(run / "eval" / "rft.jsonl")
    theirs = {t.task_id: [turn.action for turn in t.turns] for t in compared}
    assert ours == theirs and len(ours) == 4


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("eval", ["--tasks", "1"]),
        ("collect", ["--tasks", "1", "--samples", "1", "--out", "EPISODES"]),
        ("play", []),
    ],
)
def test_the_sampling_flags_reach_an_openai_agent(command, extra, capsys, tmp_path):
    from tests.fake_openai import FakeOpenAI

    extra = [str(tmp_path / "e.jsonl") if arg == "EPISODES" else arg for arg in extra]
    with FakeOpenAI() as server:
        argv = [command, "--config", "smoke", "--agent", "openai", "--no-progress", *extra]
        argv += ["--openai-url", server.base_url, "--openai-model", "m", "--max-turns", "1"]
        assert main([*argv, "--temperature", "0.7", "--max-new-tokens", "5"]) == 0
        bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    capsys.readouterr()
    assert bodies and all((b["temperature"], b["max_tokens"]) == (0.7, 5) for b in bodies)


@pytest.mark.parametrize("value", ["-1", "nan", "warm"])
def test_a_bad_temperature_is_a_usage_error(value, capsys):
    code = main(["eval", "--config", "smoke", "--agent", "oracle", "--temperature", value])
    assert code == 2 and "expected a number >= 0" in capsys.readouterr().err
