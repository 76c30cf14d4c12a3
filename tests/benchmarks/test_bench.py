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

from benchmarks import bench, env_speed

SMOKE = ["--tiny", "--scale", "smoke"]


def _renderer_ready() -> bool:
    return env_speed.renderer_missing() is None


def _check_ok_row(row: dict) -> None:
    assert row["status"] == "ok"
    ours, baseline = row["ours"], row["baseline"]
    assert ours["unit"] == baseline["unit"] and ours["label"] != baseline["label"]
    assert baseline["value"] >= 0 and ours["value"] >= 0
    if row["ratio"] is not None:  # None only where the baseline measured zero
        assert row["ratio"] > 0
        assert row["ratio"] == pytest.approx(ours["value"] / baseline["value"], rel=1e-2)
    else:
        assert baseline["value"] == 0


@pytest.mark.slow
def test_the_whole_report_runs_with_a_tiny_model(tmp_path, capsys):
    report = bench.main([*SMOKE, "--out", str(tmp_path)])
    assert json.loads((tmp_path / "bench.json").read_text()) == report

    by_name = {row["name"]: row for row in report["rows"]}
    assert {row["benchmark"] for row in report["rows"]} == set(bench.BENCHMARKS)
    expected_ok = ["sandbox", "env", "rollout", "logprobs"]
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
        if row["status"] == "ok" and row["ratio"] is not None:
            assert f"| {row['ratio']:.2f}x |" in line
    out = capsys.readouterr().out
    assert "[1/6] sandbox" in out and "[5/6] dpo" in out and "bench.md" in out


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
    def broken(argv, raw_dir, tiny):
        raise RuntimeError("the benchmark broke\nsecond line")

    monkeypatch.setitem(bench.BENCHMARKS, "render", (broken, "a broken benchmark"))
    report = bench.main([*SMOKE, "--only", "render,sandbox", "--out", str(tmp_path)])
    rows = {row["benchmark"]: row for row in report["rows"]}
    assert rows["render"]["status"] == "error: RuntimeError: the benchmark broke"
    _check_ok_row(rows["sandbox"])


def test_unknown_benchmarks_are_refused(tmp_path):
    with pytest.raises(SystemExit):
        bench.main(["--only", "sandbox,warp-drive", "--out", str(tmp_path)])


def test_env_speed_plays_the_same_episodes_in_both_modes(tmp_path):
    out = tmp_path / "env.json"
    result = env_speed.main(["--tasks", "2", "--envs", "backend", "--out", str(out)])
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


def test_env_speed_skips_the_frontend_without_a_browser(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEETRL_CHROMIUM", str(tmp_path / "missing"))
    result = env_speed.main(["--tasks", "1", "--envs", "frontend", "--out", str(tmp_path / "e")])
    assert result["frontend"]["skipped"].startswith("renderer not set up")
    assert "backend" not in result


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
        end = time.time() + 1.5
        while time.time() < end:  # our own work: not counted
            pass
    assert load["by_process"].get(other, 0.0) >= 0.3
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
