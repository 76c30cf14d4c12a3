"""The difference profile says what a Frontend method's pages get wrong, by kind."""

from __future__ import annotations

import json

import pytest

from research.analyses.frontend_differences import KINDS, main, summarise
from sweetrl_gym.simulators.skeleton import PageSketch, SectionSketch
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

TARGET = PageSketch.default()
# The third section redrawn: other background and text colours, the default columns.
RECOLOURED = PageSketch(
    (*TARGET.sections[:2], SectionSketch("features", "dark blue", "white"), TARGET.sections[3])
)
# The last section left out.
SHORT = PageSketch(TARGET.sections[:-1])


def episode(task: str, page: str) -> Trajectory:
    return Trajectory(
        task_id=task,
        turns=[],
        messages=[],
        reward=0.5,
        success=False,
        answer=page,
        reference={"ground_truth": TARGET.to_html()},
    )


def evaluation(run, name: str, pages: list[str]) -> None:
    episodes = [episode(f"task-{i}", page) for i, page in enumerate(pages)]
    TrajectoryBuffer(episodes).save(run / "eval" / f"{name}.jsonl")
    (run / "eval" / f"{name}.metrics.json").write_text("{}")


def test_each_method_gets_its_kinds_of_difference_and_a_paired_change(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "eval").mkdir(parents=True)
    evaluation(run, "warm-start", [TARGET.to_html(), TARGET.to_html()])
    evaluation(run, "recoloured", [RECOLOURED.to_html(), TARGET.to_html()])
    # A section short on one task; on the other, a page that renders to nothing.
    evaluation(run, "short", [SHORT.to_html(), "<html><body><script>while(true){}</script>"])
    # An evaluation without its metrics file is unfinished: left out.
    TrajectoryBuffer([episode("task-0", "")]).save(run / "eval" / "unfinished.jsonl")

    assert main([str(run)]) == 0
    methods = json.loads((run / "frontend_differences.json").read_text())["methods"]
    assert set(methods) == {"warm-start", "recoloured", "short"}
    assert methods["warm-start"]["importance"] == 0.0
    assert "importance_vs_base" not in methods["warm-start"]
    recoloured = methods["recoloured"]
    # One page of two, one section: its colours differ; no section is missing.
    assert recoloured["background"] == recoloured["text_colour"] == 0.5
    assert recoloured["missing"] == recoloured["extra"] == recoloured["alignment"] == 0.0
    assert recoloured["importance"] > 0
    assert recoloured["importance_vs_base"] == pytest.approx(recoloured["importance"])
    short = methods["short"]
    # One section missing on the first page, all four on the empty one.
    assert short["missing"] == pytest.approx((1 + len(TARGET.sections)) / 2)
    low, high = short["importance_vs_base_ci"]
    assert 0 < low <= short["importance_vs_base"] <= high
    # The structure: recoloured sections are still the target's, a short page's are not.
    sections = len(TARGET.sections)
    assert methods["warm-start"]["section_counts"] == {str(sections): 2}
    assert methods["warm-start"]["sections_right"] == recoloured["sections_right"] == 1.0
    assert recoloured["sections"] == sections
    assert short["sections_right"] == 0.0
    assert short["sections"] == pytest.approx((sections - 1) / 2)
    assert short["section_counts"] == {"0": 1, str(sections - 1): 1}
    assert "| short |" in capsys.readouterr().out


def test_bad_input_is_named():
    rows = [{**dict.fromkeys(KINDS, 0.0), "importance": 1.0, "sections": 4, "sections_right": 1}]
    with pytest.raises(ValueError, match="base 'warm-start' has no evaluation"):
        summarise({"a": rows}, {"a": ["t"]}, "warm-start")
    with pytest.raises(ValueError, match="2 profiles for 1 tasks"):
        summarise({"warm-start": rows * 2}, {"warm-start": ["t"]}, "warm-start")
    with pytest.raises(ValueError, match="task u has no warm-start evaluation"):
        summarise({"warm-start": rows, "a": rows}, {"warm-start": ["t"], "a": ["u"]}, "warm-start")


def test_a_folder_without_evaluations_is_named(tmp_path):
    (tmp_path / "eval").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no finished evaluation"):
        main([str(tmp_path)])
