"""The log-prob memory benchmark's pieces (its end-to-end run: test_bench's whole report)."""

import json

import pytest
import torch

from agents import TransformersAgent
from algorithms.logprobs import encode_dialogues, encode_turns, turn_logprobs
from benchmarks.speed import logprob_memory
from tests.tiny_lm import make_tiny_lm


def test_the_dialogue_is_deterministic_packs_into_one_row_and_the_baseline_is_the_old_way():
    model, tokenizer = make_tiny_lm()
    agent = TransformersAgent(model, tokenizer)
    prompts, actions = logprob_memory.make_dialogue(agent, 4, 800, seed=1)
    assert (prompts, actions) == logprob_memory.make_dialogue(agent, 4, 800, seed=1)
    assert len(prompts) == len(actions) == 4 and actions[-1].startswith("I WANT TO ANSWER:")
    packed = encode_dialogues(tokenizer, [(prompts, actions)])
    assert len(packed) == 1 and 800 <= int(packed.attention_mask.sum()) < 900
    # The private copy of the old computation scores like one row per turn does today.
    with torch.no_grad():
        total, mean, shape = logprob_memory._old_turn_logprobs(model, tokenizer, prompts, actions)
        today = turn_logprobs(model, encode_turns(tokenizer, prompts, actions))
    assert shape["rows"] == 4
    assert torch.allclose(total, today.sum, atol=1e-4)
    assert torch.allclose(mean, today.mean, atol=1e-6)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"model": "huge"}, "model must be one of tiny, default"),
        ({"turns": 0}, "turns and tokens must be >= 1"),
        ({"memory_limit_gb": -1.0}, "memory_limit_gb >= 0"),
    ],
)
def test_bad_arguments_are_refused_before_any_process_starts(tmp_path, arguments, message):
    out = tmp_path / "logprobs.json"
    with pytest.raises(ValueError, match=message):
        logprob_memory.run(**{"model": "tiny", "out": out, **arguments})
    assert not out.exists()


def test_the_command_line_passes_its_options_to_run_and_prints_the_result(
    tmp_path, monkeypatch, capsys
):
    import inspect

    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(logprob_memory.run).parameters.items()
    }
    calls = []

    def fake_run(**kwargs):
        calls.append(kwargs)
        return {"equal_within_tolerance": True}

    monkeypatch.setattr(logprob_memory, "run", fake_run)
    argv = ["--model", "tiny", "--turns", "3", "--memory-limit-gb", "2.5"]
    result = logprob_memory.main([*argv, "--out", str(tmp_path / "l.json")])
    assert result == {"equal_within_tolerance": True}
    assert json.loads(capsys.readouterr().out) == result
    given = {"model": "tiny", "turns": 3, "memory_limit_gb": 2.5, "out": tmp_path / "l.json"}
    assert calls == [{**defaults, **given}]
    logprob_memory.main([])  # run's own defaults, but for the results file it writes
    assert calls[1] == {**defaults, "out": logprob_memory._RESULTS}
    with pytest.raises(SystemExit):
        logprob_memory.main(["--model", "huge"])
