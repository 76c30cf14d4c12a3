"""LoRA (peft): policy and critic as adapters on one frozen base, saved as adapters."""

import pytest
import torch
from transformers import AutoModelForCausalLM

from algorithms import Algorithm, ArCHer, MultiTurnDPO, SweetRL, critic_prompts, turn_logprobs
from tests.algorithms.conftest import FAST
from tests.algorithms.test_training import fresh_policy

pytest.importorskip("peft")

LORA = {**FAST, "lora_rank": 4, "lora_alpha": 8.0}
# The tiny policy's samples never end: keep its cut-off candidates.
SWEET_LORA = {
    **LORA,
    "critic_learning_rate": 1e-3,
    "num_candidates": 2,
    "drop_truncated_candidates": False,
}


def test_sweet_rl_critic_is_a_second_adapter_on_the_policys_base(shared_buffer, tmp_path):
    policy = fresh_policy()
    base_before = {k: v.clone() for k, v in policy.model.state_dict().items()}
    algo = SweetRL(
        policy,
        **SWEET_LORA,
        critic_epochs=2,
        candidate_fraction=0.2,
        held_out_fraction=0.25,
        save_merged=True,
    )
    algo.fit(shared_buffer)
    model = policy.model
    assert algo.critic.model is model and set(model.peft_config) == {"default", "critic"}
    # The base is frozen and shared: no weight outside the adapters changed.
    state = model.get_base_model().state_dict()
    for key, value in base_before.items():
        stored = key.replace("weight", "base_layer.weight") if key not in state else key
        if stored in state:
            assert torch.equal(state[stored], value), key
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) < 0.5 * sum(
        p.numel() for p in model.parameters()
    )
    # The sampling policy's start (the baseline of a score) is the base with adapters
    # disabled, reading the policy's own prompt.
    trajectory, turn = shared_buffer[0], shared_buffer[0].turns[1]
    actions = ["Which threshold?", "I WANT TO ANSWER: def f(): pass"]
    prompt = critic_prompts(policy, [(turn, trajectory.reference)])[0]
    encoded = algo.encode([prompt, prompt], actions)
    plain = policy.format_prompts([turn.messages])[0]
    with torch.no_grad():
        with model.disable_adapter():
            start = turn_logprobs(model, algo.encode([plain, plain], actions)).mean
        model.set_adapter("critic")
        critic = turn_logprobs(model, encoded).mean
        model.set_adapter("default")
    scores = algo.score_actions(turn.messages, trajectory.reference, actions)
    assert scores == pytest.approx((0.1 * (critic - start)).tolist(), abs=1e-5)

    algo.save(tmp_path / "sweet")
    assert (tmp_path / "sweet" / "policy" / "adapter_config.json").exists()
    merged = AutoModelForCausalLM.from_pretrained(str(tmp_path / "sweet" / "policy-merged"))
    loaded = Algorithm.load(tmp_path / "sweet", device="cpu")
    ids = encoded.input_ids[:1]
    with torch.no_grad():
        expected = model(input_ids=ids).logits
        torch.testing.assert_close(merged(input_ids=ids).logits, expected, rtol=0, atol=1e-4)
        torch.testing.assert_close(
            loaded.policy.model(input_ids=ids).logits, expected, rtol=0, atol=1e-5
        )
    assert loaded.score_actions(turn.messages, trajectory.reference, actions) == pytest.approx(
        scores, abs=1e-5
    )


def test_multiturn_dpo_trains_only_the_adapter(shared_buffer):
    policy = fresh_policy()
    algo = MultiTurnDPO(policy, **LORA)
    metrics = algo.fit(shared_buffer)
    assert metrics["train/loss"] < 0.69
    lora = [p for n, p in policy.model.named_parameters() if "lora_B" in n]
    assert lora and any(p.abs().sum() > 0 for p in lora)  # B starts at zero


def test_archer_says_it_needs_full_fine_tuning(shared_buffer):
    with pytest.raises(ValueError, match="lora_rank=0"):
        ArCHer(fresh_policy(), **LORA).fit(shared_buffer)


def test_paper_1gpu_recipe_in_miniature_bf16_base_and_gradient_checkpointing(shared_buffer):
    """A bf16 frozen base, fp32 adapters, gradient checkpointing: both adapters train."""
    policy = fresh_policy()
    policy.model.to(torch.bfloat16)
    algo = SweetRL(
        policy,
        **{**SWEET_LORA, "gradient_checkpointing": True},
        critic_epochs=1,
        candidate_fraction=0.1,
        held_out_fraction=0.0,
    )
    algo.fit(shared_buffer)
    params = dict(policy.model.named_parameters())
    for adapter in ("default", "critic"):
        b = [p for n, p in params.items() if f"lora_B.{adapter}." in n]
        assert b and all(p.dtype == torch.float32 for p in b)
        assert any(p.abs().sum() > 0 for p in b), adapter  # LoRA's B starts at zero
    assert all(p.dtype == torch.bfloat16 for n, p in params.items() if "base_layer" in n)
