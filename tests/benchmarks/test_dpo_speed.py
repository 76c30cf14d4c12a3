"""The DPO speed benchmark runs end to end on a tiny model and budget."""

import json

import pytest

from benchmarks import dpo_speed


@pytest.mark.slow
def test_dpo_speed_with_a_tiny_model(tmp_path):
    pytest.importorskip("trl")
    out = tmp_path / "dpo.json"
    argv = ["--model", "tiny", "--pairs", "4", "--batch-size", "2", "--max-length", "1024"]
    result = dpo_speed.main([*argv, "--out", str(out)])
    assert json.loads(out.read_text()) == result
    for side in ("ours", "trl"):
        run = result[side]
        assert run["optimizer_steps"] == 2 and run["train_forwards"] == 2
        assert run["tokens_per_s"] > 0 and run["peak_memory_mb"] >= 0  # a tiny model may add none
        # Before the first update the policy is its own reference: the loss is log 2.
        assert run["first_loss"] == pytest.approx(0.693147, abs=1e-4)
    # Both trainers saw exactly the same tokens.
    check = result["trl"]["token_check"]
    assert check["identical_sequences"] == check["sequences"] == 8
    assert result["ours"]["train_tokens"] == result["trl"]["train_tokens"]
    assert result["ratio_tokens_per_s"] == pytest.approx(
        result["ours"]["tokens_per_s"] / result["trl"]["tokens_per_s"], rel=1e-2
    )
    assert result["ratio_peak_memory"] is None or result["ratio_peak_memory"] > 0


def test_fitted_pairs_are_deterministic_and_fit_max_length():
    from agents import TransformersAgent
    from tests.tiny_lm import make_tiny_lm

    model, tokenizer = make_tiny_lm()
    policy = TransformersAgent(model, tokenizer)
    pairs = dpo_speed.fit_pairs(dpo_speed.synthetic_pairs(6, seed=1), policy, 1000)
    assert pairs == dpo_speed.fit_pairs(dpo_speed.synthetic_pairs(6, seed=1), policy, 1000)
    assert all(p.chosen != p.rejected and p.messages[-1]["role"] == "user" for p in pairs)
    for pair in pairs:
        prompt = policy.format_prompts([list(pair.messages)])[0]
        for reply in (pair.chosen, pair.rejected):
            ids = tokenizer([prompt, reply], add_special_tokens=False)["input_ids"]
            assert len(ids[0]) + len(ids[1]) + 1 <= 1000
    with pytest.raises(ValueError, match="too short"):
        dpo_speed.fit_pairs(pairs, policy, 64)


def test_missing_trl_names_the_extra(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "trl" else real(name, *a)
    )
    with pytest.raises(SystemExit, match=r'pip install "sweetrl-gym\[bench\]"'):
        dpo_speed.main(["--model", "tiny"])
