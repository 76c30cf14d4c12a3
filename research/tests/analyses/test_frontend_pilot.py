import json

import pytest

from research.analyses.frontend_pilot import VARIANTS, main, summarize_pilot


def test_the_summary_gives_means_and_paired_spreads():
    rows = [
        {"task_id": f"t{i}", "sections": 4, "blank": 0.3, "default": 0.4 + 0.01 * i,
         "facts_but_sizes": 0.55 + 0.01 * i, "all_facts": 0.6 + 0.01 * i,
         "collaborator(ask=1, apply=1)": 0.35 + 0.01 * i}
        for i in range(20)
    ]  # fmt: skip
    summary = summarize_pilot(rows)
    assert summary["num_tasks"] == 20
    assert summary["means"]["default"]["mean"] == pytest.approx(0.495)
    low, high = summary["means"]["default"]["ci_low"], summary["means"]["default"]["ci_high"]
    assert low < 0.495 < high
    spread = summary["spreads"]["all_facts_minus_default"]
    # Every task is 0.2 above its default: the paired interval has no width.
    assert spread["mean"] == pytest.approx(0.2)
    assert spread["ci_low"] == pytest.approx(0.2) and spread["ci_high"] == pytest.approx(0.2)
    assert spread["share_positive"] == 1.0
    worse = summary["spreads"]["collaborator(ask=1, apply=1)_minus_default"]
    assert worse["mean"] == pytest.approx(-0.05) and worse["share_positive"] == 0.0
    assert "blank_minus_default" not in summary["spreads"]
    with pytest.raises(ValueError):
        summarize_pilot([])


def test_the_pilot_runs_on_rendered_tasks(tmp_path, capsys):
    out = tmp_path / "pilot.json"
    assert (
        main(["--tasks", "3", "--collaborator", "1:1", "--output", str(out), "--no-progress"]) == 0
    )
    report = json.loads(out.read_text())
    assert report["num_tasks"] == 3 and len(report["tasks"]) == 3
    collaborator = "collaborator(ask=1, apply=1)"
    for row in report["tasks"]:
        assert set(VARIANTS) | {collaborator} <= set(row)
        assert all(0.0 <= row[name] <= 1.0 for name in (*VARIANTS, collaborator))
        # Knowing the design beats knowing nothing on every one of these targets.
        assert row["all_facts"] > row["default"] and row["all_facts"] > row["blank"]
    assert "all_facts_minus_default" in capsys.readouterr().out


@pytest.mark.parametrize(
    "bad", [["--tasks", "0"], ["--collaborator", "0.5"], ["--collaborator", "2:1"]]
)
def test_bad_arguments_are_refused(bad, tmp_path):
    with pytest.raises(SystemExit):
        main([*bad, "--output", str(tmp_path / "x.json")])
