"""The DPO speed benchmark's pieces (its end-to-end run: test_bench's whole report)."""

import json

import pytest

from benchmarks.speed import dpo_speed


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
    with pytest.raises(ModuleNotFoundError, match=r'pip install "sweetrl-gym\[bench\]"') as err:
        dpo_speed.run(model="tiny")
    assert err.value.name == "trl"
    # From the command line: a message and a failing exit status, no traceback.
    with pytest.raises(SystemExit, match=r'pip install "sweetrl-gym\[bench\]"'):
        dpo_speed.main(["--model", "tiny"])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"model": "huge"}, "model must be one of tiny, default"),
        ({"mixed_precision": "fp8"}, "mixed_precision must be one of"),
        ({"batch_size": 0}, "must be >= 1"),
        ({"steps": 0}, "steps must be >= 1"),
    ],
)
def test_bad_arguments_are_refused_before_training(tmp_path, arguments, message):
    out = tmp_path / "dpo.json"
    with pytest.raises(ValueError, match=message):
        dpo_speed.run(**{"model": "tiny", "out": out, **arguments})
    assert not out.exists()


def test_the_command_line_passes_its_options_to_run_and_prints_the_result(
    tmp_path, monkeypatch, capsys
):
    import inspect

    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(dpo_speed.run).parameters.items()
    }
    calls = []

    def fake_run(**kwargs):
        calls.append(kwargs)
        return {"ratio_pairs_per_s": 1.5}

    monkeypatch.setattr(dpo_speed, "run", fake_run)
    argv = ["--model", "tiny", "--pairs", "6", "--batch-size", "3", "--max-length", "256"]
    result = dpo_speed.main([*argv, "--gradient-checkpointing", "--out", str(tmp_path / "d")])
    assert result == {"ratio_pairs_per_s": 1.5}
    assert json.loads(capsys.readouterr().out) == result
    given = {"model": "tiny", "pairs": 6, "batch_size": 3, "max_length": 256}
    given |= {"gradient_checkpointing": True, "out": tmp_path / "d"}
    assert calls == [{**defaults, **given}]
    # Without options: run's own defaults, but for the results file it writes.
    dpo_speed.main([])
    assert calls[1] == {**defaults, "out": dpo_speed._RESULTS}
