"""The critic probe retrains SWEET-RL's critic on a finished comparison and judges its order."""

from __future__ import annotations

import json

import pytest

from algorithms import FACTS_HINT
from benchmarks.analyses.critic_probe import COUNTS, main
from benchmarks.cli import main as sweetrl


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


def test_the_probe_names_what_is_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config\.json is missing"):
        main([str(tmp_path)])
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"train\.jsonl is missing"):
        main([str(tmp_path)])
