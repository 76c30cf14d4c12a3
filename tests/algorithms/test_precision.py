"""bf16 weights train like fp32 ones (fp32 master weights under bf16 autocast)."""

import torch

from agents import TransformersAgent
from algorithms import RejectionFT
from tests.algorithms.conftest import FAST
from tests.tiny_lm import make_tiny_lm


def _fit(dtype, shared_buffer):
    model, tokenizer = make_tiny_lm(seed=0)
    model.to(dtype)
    start = {k: v.detach().float().clone() for k, v in model.named_parameters()}
    policy = TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, seed=0)
    # lr 1e-5: each AdamW update (~lr) is below bf16's resolution for these weights.
    algo = RejectionFT(policy, **{**FAST, "learning_rate": 1e-5, "batch_size": 1, "num_epochs": 3})
    algo.fit(shared_buffer)
    after = dict(policy.model.named_parameters())
    deltas = {k: after[k].detach().float() - start[k] for k in start}
    losses = [value for _, key, value in algo.history if key == "train/loss"]
    return policy, deltas, losses


def test_bf16_model_trains_as_far_as_its_fp32_twin(shared_buffer):
    _, fp32_deltas, fp32_losses = _fit(torch.float32, shared_buffer)
    policy, bf16_deltas, bf16_losses = _fit(torch.bfloat16, shared_buffer)

    def changed(deltas):  # unused tokens' embeddings get no gradient in either twin
        return sum(int((d != 0).sum()) for d in deltas.values())

    # Without fp32 master weights almost no bf16 weight changes at this learning rate.
    assert changed(bf16_deltas) >= 0.99 * changed(fp32_deltas) > 0
    # The trained weights stay float32 (casting back to bf16 would round the updates away).
    assert all(p.dtype == torch.float32 for p in policy.model.parameters())
    # Same direction and size of the whole update as the fp32 twin...
    a = torch.cat([d.flatten() for d in fp32_deltas.values()])
    b = torch.cat([bf16_deltas[k].flatten() for k in fp32_deltas])
    assert torch.nn.functional.cosine_similarity(a, b, dim=0) > 0.9
    assert 0.8 < b.norm() / a.norm() < 1.25
    # ...and the same loss curve, up to bf16 rounding of the forward.
    assert len(bf16_losses) == len(fp32_losses)
    for fp32, bf16 in zip(fp32_losses, bf16_losses):
        assert abs(fp32 - bf16) < 0.02 * fp32
