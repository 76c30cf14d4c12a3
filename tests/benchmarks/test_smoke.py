"""Each benchmark script runs end to end on a tiny budget."""

from benchmarks import demo, sandbox_speed, task_quality


def test_demo_runs(capsys):
    demo.main(["--show", "1", "--score", "5"])
    out = capsys.readouterr().out
    assert "[HUMAN]" in out and "oracle (privileged)    success 100.0%" in out


def test_task_quality_on_a_few_tasks(tmp_path):
    summary = task_quality.main(["--limit", "25", "--out", str(tmp_path / "q.json")])
    assert summary["tasks"] == 25
    assert summary["reference_passes_own_tests"] == 1.0
    assert summary["description_only_conventional_success"] == 0.0
    assert summary["all_facts_answer_success"] == 1.0
    assert summary["one_wrong_detail_caught"] == 1.0 and summary["one_wrong_detail_variants"] > 25
    assert (tmp_path / "q.json").exists()


def test_sandbox_speed_on_a_few_tasks():
    result = sandbox_speed.main(["--tasks", "3"])
    assert result["candidates"] == 6 and result["passed"] == 3
    assert result["verdicts_agree"]
    assert all(rate > 0 for rate in result["candidates_per_s"].values())
