"""Every algorithm on 2 CPU processes (gloo): DDP, FSDP2 and LoRA, against 1 process.

Each test launches ``tests.distributed.run_fit`` with ``torchrun`` (see ``launch.py``).
The 2-process runs use 1 item per process, the 1-process run 2 items: the same global
batch, so the same optimizer steps on the same data, and the loss curves must agree to
1e-4 (ArCHer's actor loss relatively). RFT's and ArCHer's losses are means over a batch's
tokens or turns: the trainer weighs each process by its share of the global batch, so
they match too (ArCHer with V's target at the buffer's action: see ``run_fit``). SWEET-RL's policy stage samples its candidates per
process, so its pairs (and curve) differ; its critic's must not.
"""

import json

import pytest
import torch
from transformers import AutoModelForCausalLM

from tests.distributed.launch import run_on_processes

pytestmark = pytest.mark.slow

ALGORITHMS = ("rft", "mt-dpo", "archer", "sweet-rl")
TOLERANCE = 1e-4  # on each logged loss; fp32 sums in another order differ by ~1e-7


def _fit(out, *, nproc, fsdp=False, lora=False, algorithms=ALGORITHMS):
    batch = 2 // nproc
    args = ["tests.distributed.run_fit", str(out), "--per-process-batch", str(batch)]
    args += ["--algorithms", *algorithms] + (["--lora"] if lora else [])
    run_on_processes(args, nproc=nproc, fsdp=fsdp)
    return {name: json.loads((out / f"{name}.json").read_text()) for name in algorithms}


def _curve(record, key):
    return [value for _, name, value in record["history"] if name == key]


def _critic_stage_losses(record):
    return [v for _, k, v in record["history"] if k == "critic/loss"]


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    out = tmp_path_factory.mktemp("one-process")
    return out, _fit(out, nproc=1)


def _check_against_one_process(out, records, one_process, parameter_type):
    reference_dir, reference = one_process
    for name in ALGORITHMS:
        assert records[name]["parameter_type"] == parameter_type, name
        # The schedule advances once per optimizer step, not once per process.
        assert _curve(records[name], "train/learning_rate") == pytest.approx(
            _curve(reference[name], "train/learning_rate")
        ), name
        model = AutoModelForCausalLM.from_pretrained(str(out / name / "policy"))
        assert model.num_parameters() > 0
    for name in ("rft", "mt-dpo"):
        assert _curve(records[name], "train/loss") == pytest.approx(
            _curve(reference[name], "train/loss"), abs=TOLERANCE
        ), name
    assert _critic_stage_losses(records["archer"]) == pytest.approx(
        _critic_stage_losses(reference["archer"]), abs=TOLERANCE
    )
    assert _curve(records["archer"], "train/loss") == pytest.approx(
        _curve(reference["archer"], "train/loss"), rel=TOLERANCE
    )
    assert _critic_stage_losses(records["sweet-rl"]) == pytest.approx(
        _critic_stage_losses(reference["sweet-rl"]), abs=TOLERANCE
    )
    metrics, expected = records["sweet-rl"]["metrics"], reference["sweet-rl"]["metrics"]
    # Held-out accuracy comes from the sharded scoring pass: the same as on one process.
    assert metrics["critic/heldout_pair_accuracy"] == expected["critic/heldout_pair_accuracy"]
    # Same data, same steps: the trained Multi-turn DPO weights agree.
    trained = AutoModelForCausalLM.from_pretrained(str(out / "mt-dpo" / "policy")).state_dict()
    single = AutoModelForCausalLM.from_pretrained(
        str(reference_dir / "mt-dpo" / "policy")
    ).state_dict()
    for key, value in single.items():
        torch.testing.assert_close(trained[key], value, rtol=0, atol=1e-5)


def test_every_algorithm_on_two_ddp_processes_follows_one_process(tmp_path, one_process):
    records = _fit(tmp_path, nproc=2)
    _check_against_one_process(tmp_path, records, one_process, "Parameter")


def test_every_algorithm_on_two_fsdp2_processes_follows_one_process(tmp_path, one_process):
    """Sharded critics score candidates (SWEET-RL) and advantages (ArCHer), then save."""
    records = _fit(tmp_path, nproc=2, fsdp=True)
    _check_against_one_process(tmp_path, records, one_process, "DTensor")  # really sharded
    assert (tmp_path / "sweet-rl" / "critic_start").is_dir()


def test_lora_on_two_processes_saves_an_adapter_and_merged_weights(tmp_path):
    from peft import PeftModel

    _fit(tmp_path, nproc=2, lora=True, algorithms=("sweet-rl", "mt-dpo"))
    for name in ("sweet-rl", "mt-dpo"):
        folder = tmp_path / name
        base = AutoModelForCausalLM.from_pretrained(str(folder / "base"))
        untrained = AutoModelForCausalLM.from_pretrained(str(folder / "base"))
        adapted = PeftModel.from_pretrained(base, str(folder / "policy"))
        merged = AutoModelForCausalLM.from_pretrained(str(folder / "policy-merged"))
        ids = torch.arange(3, 40).unsqueeze(0)
        with torch.no_grad():
            logits = adapted(input_ids=ids).logits
            torch.testing.assert_close(merged(input_ids=ids).logits, logits, rtol=0, atol=1e-4)
            assert (untrained(input_ids=ids).logits - logits).abs().max() > 1e-3  # it trained
    assert (tmp_path / "sweet-rl" / "critic" / "adapter_model.safetensors").exists()


def test_lora_under_fsdp_is_refused_with_a_clear_error(tmp_path):
    with pytest.raises(AssertionError, match="LoRA under FSDP is not supported"):
        _fit(tmp_path, nproc=2, fsdp=True, lora=True, algorithms=("mt-dpo",))


def test_a_journaled_pass_resumes_every_process_from_the_chunk_all_had_finished(tmp_path):
    run_on_processes(["tests.distributed.run_journal", str(tmp_path)])
    ranks = [json.loads((tmp_path / f"rank-{r}.json").read_text()) for r in range(2)]
    # Rank 0 had finished 1 chunk and rank 1 had finished 2: both go on from their second.
    assert ranks[0]["calls"] == [[2, 3], [4, 5]]
    assert ranks[1]["calls"] == [[8, 9], [10, 11]]
    assert ranks[0]["result"] == ranks[1]["result"] == [x * x for x in range(12)]
