"""The label check orders a Frontend run's episode pairs by what their pages show."""

from __future__ import annotations

import json

import pytest

from research.analyses.frontend_labels import label_agreement, main
from sweetrl_gym.simulators.skeleton import PageSketch, SectionSketch
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

TARGET = PageSketch.default()
# One section's background and columns changed: some differences, far fewer than none drawn.
NEAR = PageSketch(
    (*TARGET.sections[:2], SectionSketch("features", "dark blue", "white"), TARGET.sections[3])
)


def episode(task: str, reward: float, page: str) -> Trajectory:
    return Trajectory(
        task_id=task,
        turns=[],
        messages=[],
        reward=reward,
        success=False,
        answer=page,
        reference={"ground_truth": TARGET.to_html()},
    )


def test_pairs_count_as_agreeing_when_the_more_similar_page_differs_less(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "data").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"data": {}}))
    TrajectoryBuffer(
        [
            # Ordered as the pages differ: the target itself, one section off, no page.
            episode("a", 0.9, TARGET.to_html()),
            episode("a", 0.6, NEAR.to_html()),
            episode("a", 0.1, ""),
            # Ordered against the pages, by a gap of 0.03: the near page scored higher.
            episode("b", 0.50, TARGET.to_html()),
            episode("b", 0.53, NEAR.to_html()),
            # Pages that fail to parse as anything count as empty pages, never a crash.
            episode("c", 0.4, TARGET.to_html()),
            episode("c", 0.3, "<html><body><script>while(true){}</script>"),
        ]
    ).save(run / "data" / "train.jsonl")
    assert main([str(run)]) == 0
    result = json.loads((run / "frontend_labels.json").read_text())
    assert result["episodes"] == 7
    assert result["gaps"]["0"] == {"pairs": 5, "agrees": 4, "disagrees": 1, "tied": 0}
    assert result["gaps"]["0.02"] == {"pairs": 5, "agrees": 4, "disagrees": 1, "tied": 0}
    assert result["gaps"]["0.05"] == {"pairs": 4, "agrees": 4, "disagrees": 0, "tied": 0}
    assert ">= 0.05" in capsys.readouterr().out


def test_ties_equal_rewards_and_bad_input():
    counts = label_agreement(["t", "t", "t"], [0.5, 0.5, 0.2], [1.0, 1.0, 1.0], gaps=(0.0,))
    # Equal similarities make no pair; equal distances make a tied one.
    assert counts == {"0": {"pairs": 2, "agrees": 0, "disagrees": 0, "tied": 2}}
    with pytest.raises(ValueError, match="one entry per episode"):
        label_agreement(["t"], [0.5, 0.2], [1.0])


def test_the_check_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config\.json is missing"):
        main([str(tmp_path)])
