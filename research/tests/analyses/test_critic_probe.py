"""The critic probe retrains SWEET-RL's critic on a finished comparison and judges its order."""

from __future__ import annotations

import json

import pytest

from algorithms import FACTS_HINT
from benchmarks.cli import main as sweetrl
from research.analyses.critic_probe import COUNTS, main


def test_the_probe_retrains_the_critic_and_judges_every_turn_pair(tmp_path, capsys):
    run = tmp_path / "smoke"
    assert sweetrl(["compare", "--config", "smoke", "--out", str(run), "--no-progress"]) == 0
    pairs = json.loads((run / "methods" / "sweet-rl" / "turn_pairs.json").read_text())
    assert pairs
    assert main([str(run), "--set", "critic_epochs=2", "--set", "critic_learning_rate=1e-2"]) == 0
    result = json.loads((run / "critic_probe.json").read_text())
    assert set(result["counts"]) == set(COUNTS)
    assert sum(result["counts"].values()) == len(pairs)  # every pair counted once
    assert result["settings"] == ["critic_epochs=2", "critic_learning_rate=1e-2"]
    assert "critic/loss" in result["critic"]
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == result["counts"]

    # Untrained, with the facts hint: the same pairs, scored by the critic's start.
    facts_hint = f"hint_template={json.dumps(FACTS_HINT)}"
    untrained = tmp_path / "untrained.json"
    assert main([str(run), "--untrained", "--set", facts_hint, "--output", str(untrained)]) == 0
    result = json.loads(untrained.read_text())
    assert sum(result["counts"].values()) == len(pairs)
    assert result["settings"] == [facts_hint, "untrained"]
    assert result["critic"] == {}


@pytest.mark.slow
def test_the_probe_judges_the_frontend_pairs_as_the_comparison_did(tmp_path):
    # The same verdicts as the comparison's own: pages by the run's similarity, questions by
    # the design facts told.
    run = tmp_path / "frontend"
    only_sweet_rl = "methods.run=['sweet-rl']"
    command = ["compare", "--config", "frontend-smoke", "--set", only_sweet_rl]
    assert sweetrl([*command, "--out", str(run), "--no-progress"]) == 0
    results = json.loads((run / "results.json").read_text())
    signal = results["methods"]["sweet-rl"]["fit"]["diagnostics"]["record"]["turn_pair_signal"]
    probe = tmp_path / "probe.json"
    assert main([str(run), "--untrained", "--output", str(probe)]) == 0
    counts = json.loads(probe.read_text())["counts"]
    turn_pairs = json.loads((run / "methods" / "sweet-rl" / "turn_pairs.json").read_text())
    assert sum(counts.values()) == len(turn_pairs)
    judged_pages = signal["chosen_passes_more"] + signal["chosen_passes_fewer"]
    assert counts["answers_right"] + counts["answers_wrong"] == judged_pages
    judged_questions = signal["chosen_obtains_more"] + signal["chosen_obtains_fewer"]
    assert counts["questions_right"] + counts["questions_wrong"] == judged_questions


def test_the_probe_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config\.json is missing"):
        main([str(tmp_path)])
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"train\.jsonl is missing"):
        main([str(tmp_path)])
