"""`sweetrl bench`: every benchmark side by side in one report; missing pieces are skipped."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict

import pytest

from benchmarks.speed import bench, env_speed

SMOKE = ["--tiny", "--scale", "smoke"]


def _renderer_ready() -> bool:
    return env_speed.renderer_missing() is None


def _check_ok_row(row: dict) -> None:
    assert row["status"] == "ok"
    ours, baseline = row["ours"], row["baseline"]
    assert ours["unit"] == baseline["unit"] and ours["label"] != baseline["label"]
    assert baseline["value"] >= 0 and ours["value"] >= 0
    if row["ratio"] is not None:  # None only where a side measured zero (said in the notes)
        assert row["ratio"] > 0
        # The report rounds the ratio to 3 decimals: under 0.05 that is more than 1%.
        expected = ours["value"] / baseline["value"]
        assert row["ratio"] == pytest.approx(expected, rel=1e-2, abs=5e-4)
    else:
        assert min(baseline["value"], ours["value"]) == 0
        assert baseline["value"] == 0 or "too small to measure" in row["notes"]


@pytest.mark.slow
def test_the_whole_report_runs_with_a_tiny_model(tmp_path, capsys):
    report = bench.main([*SMOKE, "--out", str(tmp_path)])
    assert json.loads((tmp_path / "bench.json").read_text()) == report

    by_name = {row["name"]: row for row in report["rows"]}
    assert {row["benchmark"] for row in report["rows"]} == set(bench.BENCHMARKS)
    expected_ok = ["sandbox", "env", "rollout", "sampling", "logprobs", "critic"]
    if _renderer_ready():
        expected_ok.append("render")
    if importlib.util.find_spec("trl") is not None:
        expected_ok.append("dpo")
    for row in report["rows"]:
        frontend = "Frontend" in row["name"]
        if row["benchmark"] in expected_ok and (not frontend or _renderer_ready()):
            _check_ok_row(row)
        else:
            assert row["status"].startswith("skipped: ")
    # Every benchmark expected to run measured something: a row with both sides above zero
    # and their ratio (a report of skipped rows, or of rows that measured nothing, fails).
    measured = {
        row["benchmark"]
        for row in report["rows"]
        if row["status"] == "ok"
        and row["ratio"] is not None
        and min(row["ours"]["value"], row["baseline"]["value"]) > 0
    }
    assert measured == set(expected_ok)
    assert by_name["ColBench-Backend-v0 steps/s, offline simulator"]["ours"]["unit"] == "steps/s"
    assert by_name["agent turns/s, local model"]["notes"].startswith("tiny-lm")

    # Both env modes played the same episodes: the same rewards.
    for part in ("backend", "frontend"):
        result = report["results"]["env"][part]
        if "skipped" not in result:
            assert result["same_rewards"]
            assert result["one_env"]["mean_reward"] == result["parallel"]["mean_reward"]
            assert result["one_env"]["steps"] == result["parallel"]["steps"]

    machine = report["machine"]
    assert machine["cores"] == os.cpu_count() and machine["cpu"]
    assert machine["python"] and "torch" in machine["versions"]

    markdown = (tmp_path / "bench.md").read_text()
    assert "| benchmark | ours | baseline | ratio | notes |" in markdown
    assert machine["cpu"] in markdown
    table = [line for line in markdown.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(table) == 1 + len(report["rows"])
    for row in report["rows"]:
        line = next(line for line in table if line.startswith(f"| {row['name']} |"))
        if row["status"] == "ok":  # the measured values and their ratio, as measured
            ours, baseline = bench.Measure(**row["ours"]), bench.Measure(**row["baseline"])
            ratio = "n/a" if row["ratio"] is None else f"{row['ratio']:.2f}x"
            assert f"| {ours} | {baseline} | {ratio} |" in line
        else:
            assert line.startswith(f"| {row['name']} | — | — | — | {row['status'][:20]}")
    out = capsys.readouterr().out
    count, dpo = len(bench.BENCHMARKS), list(bench.BENCHMARKS).index("dpo") + 1
    assert f"[1/{count}] sandbox" in out and f"[{dpo}/{count}] dpo" in out and "bench.md" in out

    # Each benchmark's own result, written beside the report as its script writes it.
    results = report["results"]
    assert json.loads((tmp_path / "raw" / "logprob_memory.json").read_text()) == results["logprobs"]
    _check_logprob_memory(results["logprobs"], turns=bench.SCALES["smoke"]["logprobs"]["turns"])
    assert json.loads((tmp_path / "raw" / "critic_speed.json").read_text()) == results["critic"]
    _check_critic_speed(results["critic"])
    if "dpo" in expected_ok:
        assert json.loads((tmp_path / "raw" / "dpo_speed.json").read_text()) == results["dpo"]
        _check_dpo_speed(results["dpo"])


def _check_logprob_memory(result: dict, turns: int) -> None:
    """The old scoring (a row a turn) and the new (a row a dialogue) agree, in less room."""
    from benchmarks.speed import logprob_memory

    runs = result["variants"]
    assert set(runs) == set(logprob_memory.VARIANTS)
    for mode in logprob_memory.MODES:
        old, new = runs[f"old_{mode}"], runs[f"new_{mode}"]
        assert old["rows"] == turns and new["rows"] == 1
        assert new["padded_tokens"] == result["dialogue_tokens"] < old["padded_tokens"]
        assert len(old["turn_logprob_sums"]) == len(new["turn_logprob_sums"]) == turns
        assert new["seconds"] > 0 and new["peak_memory_mb"] >= 0  # a tiny model may add none
        compared = result[mode]
        assert compared["equal"] and compared["max_difference_means"] <= 1e-4
        assert compared["ratio_peak_memory"] is None or compared["ratio_peak_memory"] > 0
    assert result["equal_within_tolerance"]
    assert result["settings"]["memory_limit_gb"] > 0  # the default guard is on


def _check_critic_speed(result: dict) -> None:
    """Both sides trained the same critic on the same samples; branches read fewer tokens."""
    settings = result["settings"]
    ours, plain = result["branches"], result["plain-rows"]
    steps = settings["trajectories"] // settings["batch_size"]
    assert ours["steps"] == plain["steps"] == len(ours["critic_losses"]) == steps
    assert result["losses_agree"] and result["max_loss_difference"] <= 1e-3
    assert ours["critic_losses"] == pytest.approx(plain["critic_losses"], abs=1e-3)
    assert 0 < ours["target_tokens"] < plain["target_tokens"]
    assert result["ratio_steps_per_s"] == pytest.approx(
        ours["steps_per_s"] / plain["steps_per_s"], rel=1e-2
    )


def _check_dpo_speed(result: dict) -> None:
    """Ours, ours on plain rows and TRL trained the same pairs; the ratios are theirs."""
    assert result["settings"]["steps"] == 2 and result["settings"]["max_length"] == 1024
    for side in ("ours", "ours-plain", "trl"):
        run = result[side]
        assert run["optimizer_steps"] == 2 and run["train_forwards"] == 2
        assert run["pairs_per_s"] > 0 and run["peak_memory_mb"] >= 0  # a tiny model may add none
        # Before the first update the policy is its own reference: the loss is log 2.
        assert run["first_loss"] == pytest.approx(0.693147, abs=1e-4)
    # The trainers tokenized the same sequences; on plain rows ours reads what TRL reads,
    # with a pair in one row it reads each prompt once.
    check = result["trl"]["token_check"]
    assert check["identical_sequences"] == check["sequences"] == 8
    assert result["ours-plain"]["train_tokens"] == result["trl"]["train_tokens"]
    assert result["ours"]["train_tokens"] < result["trl"]["train_tokens"]
    assert result["ratio_pairs_per_s"] == pytest.approx(
        result["ours"]["pairs_per_s"] / result["trl"]["pairs_per_s"], rel=1e-2
    )
    assert result["ratio_pairs_per_s_vs_plain_rows"] == pytest.approx(
        result["ours"]["pairs_per_s"] / result["ours-plain"]["pairs_per_s"], rel=1e-2
    )
    assert result["ratio_peak_memory"] is None or result["ratio_peak_memory"] > 0


def test_a_missing_trl_skips_only_the_dpo_benchmark(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "trl" else real(name, *a)
    )
    report = bench.main([*SMOKE, "--only", "dpo,sandbox", "--out", str(tmp_path)])
    rows = {row["benchmark"]: row for row in report["rows"]}
    assert set(rows) == {"dpo", "sandbox"}
    assert rows["dpo"]["status"].startswith("skipped: TRL is not installed")
    assert 'pip install "sweetrl-gym[bench]"' in rows["dpo"]["status"]
    assert rows["dpo"]["ratio"] is None and "dpo" not in report["results"]
    _check_ok_row(rows["sandbox"])
    markdown = (tmp_path / "bench.md").read_text()
    assert "| — | — | — | skipped: TRL is not installed" in markdown


def test_no_browser_skips_the_renderer_and_the_frontend_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEETRL_CHROMIUM", str(tmp_path / "no-such-chromium"))
    report = bench.main([*SMOKE, "--only", "render,env", "--out", str(tmp_path)])
    rows = {row["name"]: row for row in report["rows"]}
    render = [row for row in report["rows"] if row["benchmark"] == "render"]
    assert len(render) == 1 and render[0]["status"].startswith("skipped: renderer not set up")
    frontend = rows["ColBench-Frontend-v0 steps/s, offline simulator"]
    assert frontend["status"].startswith("skipped: renderer not set up")
    assert "no-such-chromium" in frontend["status"]
    _check_ok_row(rows["ColBench-Backend-v0 steps/s, offline simulator"])


def test_a_failing_benchmark_becomes_an_error_row(tmp_path, monkeypatch):
    def broken(settings, raw_dir, tiny):
        raise RuntimeError("the benchmark broke\nsecond line")

    monkeypatch.setitem(bench.BENCHMARKS, "render", (broken, "a broken benchmark"))
    report = bench.main([*SMOKE, "--only", "render,sandbox", "--out", str(tmp_path)])
    rows = {row["benchmark"]: row for row in report["rows"]}
    assert rows["render"]["status"] == "error: RuntimeError: the benchmark broke"
    _check_ok_row(rows["sandbox"])


def test_unknown_benchmarks_are_refused(tmp_path):
    with pytest.raises(SystemExit):
        bench.main(["--only", "sandbox,warp-drive", "--out", str(tmp_path)])


_MODULES = {
    "sandbox": "sandbox_speed",
    "env": "env_speed",
    "render": "render_speed",
    "rollout": "rollout_speed",
    "sampling": "sampling_speed",
    "dpo": "dpo_speed",
    "logprobs": "logprob_memory",
    "critic": "critic_speed",
}


def test_each_scale_gives_every_benchmark_keyword_arguments_its_run_accepts():
    import inspect

    for scale in bench.SCALES.values():
        assert set(scale) == set(bench.BENCHMARKS)
        for name, settings in scale.items():
            module = importlib.import_module(f"benchmarks.speed.{_MODULES[name]}")
            accepted = inspect.signature(module.run).parameters
            assert set(settings) <= set(accepted) - {"out", "agent", "model"}, name


def test_the_runners_pass_each_scale_to_run_and_report_the_settings(tmp_path, monkeypatch):
    from benchmarks.speed import sandbox_speed

    calls = []

    def fake_run(**kwargs):
        calls.append(kwargs)
        rates = {"fresh_interpreter": 2.0, "official_in_process": 8.0}
        rates |= {"sandbox_sequential": 3.0, "sandbox_batched": 4.0}
        return {
            "candidates": 4,
            "passed": 2,
            "verdicts_agree": True,
            "isolation": "test",
            "candidates_per_s": rates,
        }

    monkeypatch.setattr(sandbox_speed, "run", fake_run)
    report = bench.main(["--scale", "quick", "--only", "sandbox", "--out", str(tmp_path)])
    assert calls == [{"tasks": 30}]
    assert report["arguments"] == {"sandbox": {"tasks": 30}}
    assert json.loads((tmp_path / "bench.json").read_text())["arguments"] == report["arguments"]
    rows = report["rows"]
    assert [row["ratio"] for row in rows] == [2.0, 0.5]
    assert "4 candidates (2 pass)" in rows[0]["notes"]


def test_env_speed_plays_the_same_episodes_in_both_modes(tmp_path, capsys):
    out = tmp_path / "env.json"
    result = env_speed.run(tasks=2, envs=["backend"], out=out)
    assert capsys.readouterr().out == ""  # run returns the result; only main prints it
    assert json.loads(out.read_text()) == result and "frontend" not in result
    backend = result["backend"]
    one, parallel = backend["one_env"], backend["parallel"]
    assert one["envs"] == 1 and parallel["envs"] == backend["num_envs"] == 2
    assert one["episodes"] == parallel["episodes"] == 2
    assert one["steps"] == parallel["steps"] > 2  # the oracle asks before it answers
    assert one["mean_reward"] == parallel["mean_reward"] and backend["same_rewards"]
    assert one["steps_per_s"] > 0 and parallel["steps_per_s"] > 0
    assert backend["speedup_steps_per_s"] == pytest.approx(
        parallel["steps_per_s"] / one["steps_per_s"], rel=1e-2
    )


def test_env_speed_skips_the_frontend_without_a_browser_from_the_command_line(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SWEETRL_CHROMIUM", str(tmp_path / "missing"))
    out = tmp_path / "e.json"
    result = env_speed.main(["--tasks", "1", "--envs", "frontend", "--out", str(out)])
    assert result["frontend"]["skipped"].startswith("renderer not set up")
    assert "backend" not in result
    assert json.loads(capsys.readouterr().out) == result == json.loads(out.read_text())


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"envs": "backend,warp"}, r"unknown \['warp'\]"),
        ({"envs": " , "}, "unknown empty"),
        ({"num_envs": 0}, "must be >= 1"),
        ({"frontend_tasks": 0}, "must be >= 1"),
        ({"envs": "frontend", "max_turns": 2, "drafts": 2}, "below max_turns"),
    ],
)
def test_env_speed_refuses_bad_arguments_before_running(tmp_path, arguments, message):
    out = tmp_path / "e.json"
    with pytest.raises(ValueError, match=message):
        env_speed.run(tasks=1, out=out, **arguments)
    assert not out.exists()


def test_env_speed_command_line_reports_bad_arguments_as_usage_errors(capsys):
    with pytest.raises(SystemExit) as exit_info:
        env_speed.main(["--envs", "warp"])
    assert exit_info.value.code == 2
    assert "unknown ['warp']" in capsys.readouterr().err


def test_the_drafting_designer_shows_its_drafts_then_answers():
    agent = env_speed.DraftingDesigner(
        {"<html>target</html>": ["<html>a</html>", "<html>b</html>"]}
    )
    reference = {"ground_truth": "<html>target</html>"}
    chat = [{"role": "user", "content": "make me a page"}]
    replies = []
    for _ in range(3):
        reply = agent.act([chat], [reference])[0]
        replies.append(reply)
        chat = [*chat, {"role": "assistant", "content": reply}, {"role": "user", "content": "ok"}]
    assert "<html>a</html>" in replies[0] and "<html>b</html>" in replies[1]
    assert replies[2] == "I WANT TO ANSWER:\n<html>target</html>"


def test_the_cpu_meter_counts_other_processes_but_not_ours():
    # An orphaned busy loop (its shell exits at once): another process, started earlier.
    loop = "import time\nend = time.time() + 3\nwhile time.time() < end: pass"
    shell = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -c "{loop}" >/dev/null 2>&1 & echo $!'],
        check=True,
        capture_output=True,
        text=True,
    )
    other = int(shell.stdout.strip())
    time.sleep(0.3)
    with bench.other_cpu_load() as load:
        # Our own work (a third of a core, which the meter would list): not counted. It
        # then sleeps so the other process gets a core even beside a busy test worker.
        end = time.time() + 0.5
        while time.time() < end:
            pass
        time.sleep(1.0)
    # Alone it gets most of a core; beside two busy test workers on two cores, a quarter.
    assert load["by_process"].get(other, 0.0) >= 0.1
    assert os.getpid() not in load["by_process"]
    assert load["cores"] >= load["by_process"][other]


def test_a_busy_machine_is_flagged_in_the_table(tmp_path):
    row = bench.Row(
        "sandbox",
        "a comparison",
        ours=bench.Measure("ours", 4.0, "x/s"),
        baseline=bench.Measure("theirs", 2.0, "x/s"),
        ratio=2.0,
        notes="n",
        other_cores=1.2,
    )
    quiet = bench.Row(**{**row.__dict__, "name": "a quiet one", "other_cores": 0.0})
    machine = bench.describe_machine()
    report = {"argv": [], "started_at": "now", "seconds": 1.0, "machine": machine}
    report["rows"] = [asdict(row), asdict(quiet)]
    bench.write_markdown(report, tmp_path / "bench.md")
    lines = (tmp_path / "bench.md").read_text().splitlines()
    busy = next(line for line in lines if line.startswith("| a comparison |"))
    calm = next(line for line in lines if line.startswith("| a quiet one |"))
    assert "| 2.00x |" in busy and "BUSY MACHINE: other processes used 1.2 of" in busy
    assert "BUSY" not in calm


def test_sampling_speed_times_both_samplers_on_the_same_work(tmp_path):
    from agents import TransformersAgent
    from benchmarks.speed import sampling_speed
    from tests.tiny_lm import make_tiny_lm

    agent = TransformersAgent(*make_tiny_lm(seed=0), batch_size=3)
    out = tmp_path / "sampling.json"
    result = sampling_speed.run(prompts=5, new_tokens=3, repeats=2, out=out, agent=agent)
    assert json.loads(out.read_text()) == result
    assert result["prompts"] == 5 and result["batch_size"] == 3 and result["new_tokens"] == 3
    rates = result["tokens_per_s"]
    assert all(len(result["tokens_per_s_each_repeat"][side]) == 2 for side in rates)
    assert min(rates.values()) > 0
    assert result["speedup"] == pytest.approx(rates["ours"] / rates["multinomial"], rel=1e-2)
    with pytest.raises(ValueError, match="temperature > 0"):
        sampling_speed.run(temperature=0, agent=agent)
