"""The task-quality analysis runs end to end on a few bundled tasks."""

from research.analyses import task_quality


def test_task_quality_on_a_few_tasks(tmp_path):
    summary = task_quality.main(["--limit", "25", "--out", str(tmp_path / "q.json")])
    assert summary["tasks"] == 25
    assert summary["reference_passes_own_tests"] == 1.0
    assert summary["description_only_conventional_success"] == 0.0
    assert summary["all_facts_answer_success"] == 1.0
    assert summary["one_wrong_detail_caught"] == 1.0 and summary["one_wrong_detail_variants"] > 25
    assert (tmp_path / "q.json").exists()
