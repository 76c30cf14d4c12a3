"""Loss functions against hand computations on tiny tensors (plain-Python math)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from algorithms.losses import (
    DPOOutput,
    advantage_weighted_policy_loss,
    bradley_terry_loss,
    double_q_min,
    dpo_loss,
    last_turn_scores,
    sft_loss,
    soft_update,
    td_targets,
    trajectory_scores,
    turn_advantage,
    value_regression_loss,
)


def log_sigmoid(x: float) -> float:
    return math.log(1.0 / (1.0 + math.exp(-x)))


def t(values, *, grad: bool = False) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64, requires_grad=grad)


# Two pairs: log-probs of chosen/rejected under policy and reference.
PI_C, PI_R = [-1.0, -3.0], [-2.0, -1.5]
REF_C, REF_R = [-1.5, -2.5], [-1.0, -2.0]


def hand_dpo(beta: float, eps: float = 0.0) -> tuple[float, list[float], list[float]]:
    losses, chosen, rejected = [], [], []
    for pc, pr, rc, rr in zip(PI_C, PI_R, REF_C, REF_R):
        z = beta * ((pc - rc) - (pr - rr))
        losses.append(-(1 - eps) * log_sigmoid(z) - eps * log_sigmoid(-z))
        chosen.append(beta * (pc - rc))
        rejected.append(beta * (pr - rr))
    return sum(losses) / len(losses), chosen, rejected


# --- DPO ---------------------------------------------------------------------------------


def test_dpo_matches_hand_computation_and_diagnostics():
    out = dpo_loss(t(PI_C), t(PI_R), t(REF_C), t(REF_R), beta=0.1)
    loss, chosen, rejected = hand_dpo(0.1)
    assert isinstance(out, DPOOutput)
    assert out.loss.shape == ()
    assert out.loss.item() == pytest.approx(loss, rel=1e-12)
    assert out.chosen_rewards.tolist() == pytest.approx(chosen)
    assert out.rejected_rewards.tolist() == pytest.approx(rejected)
    # pair 0: 0.05 > -0.1; pair 1: -0.05 < 0.05
    assert out.reward_accuracy.item() == pytest.approx(0.5)
    margins = [c - r for c, r in zip(chosen, rejected)]
    assert out.reward_margin.item() == pytest.approx(sum(margins) / 2)
    with pytest.raises(AttributeError):
        out.loss = torch.tensor(0.0)  # frozen


@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
def test_dpo_beta_scaling(beta):
    out = dpo_loss(t(PI_C), t(PI_R), t(REF_C), t(REF_R), beta=beta)
    loss, chosen, _ = hand_dpo(beta)
    assert out.loss.item() == pytest.approx(loss, rel=1e-12)
    assert out.chosen_rewards.tolist() == pytest.approx(chosen)


def test_dpo_at_reference_is_log_two_and_gradient_pushes_apart():
    logps = [-4.0, -0.5, -2.0]
    pi_c, pi_r = t(logps, grad=True), t([-1.0, -7.0, -3.0], grad=True)
    out = dpo_loss(pi_c, pi_r, pi_c.detach().clone(), pi_r.detach().clone(), beta=0.3)
    assert out.loss.item() == pytest.approx(math.log(2.0), rel=1e-12)
    assert out.reward_margin.item() == 0.0
    out.loss.backward()
    # d/dpi_c of -logsigmoid(beta*x) at x=0 is -beta*sigmoid(0)/n = -beta/2/n
    assert pi_c.grad.tolist() == pytest.approx([-0.3 / 2 / 3] * 3)
    assert pi_r.grad.tolist() == pytest.approx([0.3 / 2 / 3] * 3)


def test_dpo_gradients_skip_reference_and_diagnostics():
    pi_c, pi_r = t(PI_C, grad=True), t(PI_R, grad=True)
    ref_c, ref_r = t(REF_C, grad=True), t(REF_R, grad=True)
    out = dpo_loss(pi_c, pi_r, ref_c, ref_r)
    assert not out.chosen_rewards.requires_grad
    assert not out.reward_margin.requires_grad
    out.loss.backward()
    assert pi_c.grad is not None and pi_r.grad is not None
    assert ref_c.grad is None and ref_r.grad is None


@pytest.mark.parametrize("eps", [0.1, 0.25])
def test_dpo_label_smoothing(eps):
    out = dpo_loss(t(PI_C), t(PI_R), t(REF_C), t(REF_R), beta=0.5, label_smoothing=eps)
    assert out.loss.item() == pytest.approx(hand_dpo(0.5, eps)[0], rel=1e-12)
    # Smoothing changes the loss (not a no-op) on these non-zero logits.
    assert out.loss.item() != pytest.approx(hand_dpo(0.5)[0], rel=1e-6)


def test_dpo_nll_term():
    nll = t([2.0, 4.0], grad=True)
    out = dpo_loss(t(PI_C), t(PI_R), t(REF_C), t(REF_R), beta=0.1, chosen_nll=nll, nll_coef=0.01)
    assert out.loss.item() == pytest.approx(hand_dpo(0.1)[0] + 0.01 * 3.0, rel=1e-12)
    out.loss.backward()
    assert nll.grad.tolist() == pytest.approx([0.005, 0.005])
    # A scalar NLL also works.
    out = dpo_loss(t(PI_C), t(PI_R), t(REF_C), t(REF_R), chosen_nll=torch.tensor(1.5), nll_coef=0.1)
    assert out.loss.item() == pytest.approx(hand_dpo(0.1)[0] + 0.15, rel=1e-6)


def test_dpo_coef_weighs_the_dpo_term_and_zero_leaves_the_nll_alone():
    pi_r = t(PI_R, grad=True)
    nll = t([2.0, 4.0], grad=True)
    args = (t(PI_C), pi_r, t(REF_C), t(REF_R))
    half = dpo_loss(*args, beta=0.1, chosen_nll=nll, nll_coef=0.5, dpo_coef=0.5)
    assert half.loss.item() == pytest.approx(0.5 * hand_dpo(0.1)[0] + 0.5 * 3.0, rel=1e-12)
    alone = dpo_loss(*args, beta=0.1, chosen_nll=nll, nll_coef=1.0, dpo_coef=0.0)
    assert alone.loss.item() == pytest.approx(3.0)
    alone.loss.backward()
    assert pi_r.grad.abs().sum().item() == 0.0  # the rejected responses are not trained


def test_dpo_half_precision_is_computed_in_float32():
    # All inputs are exact in bf16, but 2 - 2**-9 is not: bf16 arithmetic would round it to 2.
    bf16 = torch.bfloat16
    pi_c, ref_c = torch.tensor([-300.0], dtype=bf16), torch.tensor([-302.0], dtype=bf16)
    pi_r, ref_r = torch.tensor([2.0**-9], dtype=bf16), torch.zeros(1, dtype=bf16)
    out = dpo_loss(pi_c, pi_r, ref_c, ref_r, beta=1.0)
    assert out.loss.dtype == torch.float32
    assert out.loss.item() == pytest.approx(-log_sigmoid(2.0 - 2.0**-9), rel=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"beta": 0.0}, "beta"),
        ({"label_smoothing": 0.5}, "label_smoothing"),
        ({"label_smoothing": -0.1}, "label_smoothing"),
        ({"nll_coef": 0.01}, "chosen_nll"),
        ({"nll_coef": -1.0, "chosen_nll": torch.zeros(2)}, "nll_coef"),
        ({"nll_coef": 0.1, "chosen_nll": torch.zeros(3)}, "chosen_nll"),
        ({"dpo_coef": -1.0}, "dpo_coef"),
    ],
)
def test_dpo_rejects_bad_hyperparameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dpo_loss(t(PI_C), t(PI_R), t(REF_C), t(REF_R), **kwargs)


def test_dpo_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"shape mismatch.*reference_rejected_logps"):
        dpo_loss(t(PI_C), t(PI_R), t(REF_C), t([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="1-D"):
        dpo_loss(*(torch.zeros(2, 3) for _ in range(4)))
    with pytest.raises(ValueError, match="empty"):
        dpo_loss(*(torch.zeros(0) for _ in range(4)))
    with pytest.raises(TypeError, match="floating-point"):
        dpo_loss(torch.zeros(2, dtype=torch.long), t(PI_R), t(REF_C), t(REF_R))


# --- Bradley–Terry and the SWEET-RL critic --------------------------------------------------


def test_bradley_terry_matches_hand_computation_and_gradients():
    chosen, rejected = t([1.0, -0.5, 2.0], grad=True), t([0.0, 0.5, 3.0], grad=True)
    loss = bradley_terry_loss(chosen, rejected)
    diffs = [1.0, -1.0, -1.0]
    assert loss.item() == pytest.approx(sum(-log_sigmoid(d) for d in diffs) / 3, rel=1e-12)
    loss.backward()
    # d/ds_c -logsigmoid(d) = -(1 - sigmoid(d)) = -sigmoid(-d)
    expected = [-1 / (1 + math.exp(d)) / 3 for d in diffs]
    assert chosen.grad.tolist() == pytest.approx(expected)
    assert rejected.grad.tolist() == pytest.approx([-g for g in expected])


def test_bradley_terry_rejects_mismatch():
    with pytest.raises(ValueError, match=r"chosen_scores=\(2,\), rejected_scores=\(3,\)"):
        bradley_terry_loss(torch.zeros(2), torch.zeros(3))
    with pytest.raises(ValueError, match="empty"):
        bradley_terry_loss(torch.zeros(0), torch.zeros(0))


def test_turn_advantage_is_scaled_ratio_without_reference_gradient():
    critic, ref = t([-1.0, -2.0, -0.5], grad=True), t([-1.5, -1.0, -0.5], grad=True)
    adv = turn_advantage(critic, ref, beta=0.2)
    assert adv.tolist() == pytest.approx([0.2 * 0.5, 0.2 * -1.0, 0.0])
    adv.sum().backward()
    assert critic.grad.tolist() == pytest.approx([0.2, 0.2, 0.2])
    assert ref.grad is None
    with pytest.raises(ValueError, match="shape mismatch"):
        turn_advantage(torch.zeros(2), torch.zeros(3))
    with pytest.raises(ValueError, match="beta"):
        turn_advantage(torch.zeros(2), torch.zeros(2), beta=-0.1)


def test_trajectory_scores_uneven_interleaved_grouping():
    values = t([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], grad=True)
    index = torch.tensor([2, 0, 2, 2, 0, 3])  # lengths 2, 0, 3, 1
    scores = trajectory_scores(values, index, 4)
    assert scores.tolist() == pytest.approx([2 + 5, 0.0, 1 + 3 + 4, 6])
    scores[2].backward()
    assert values.grad.tolist() == [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]


def test_last_turn_scores_picks_latest_position():
    values = t([1.0, 2.0, 3.0, 4.0, 5.0], grad=True)
    index = torch.tensor([1, 0, 1, 1, 0], dtype=torch.int32)
    scores = last_turn_scores(values, index, 2)
    assert scores.tolist() == [5.0, 4.0]
    scores.sum().backward()
    assert values.grad.tolist() == [0.0, 0.0, 0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match=r"trajectories \[1\] have no turns"):
        last_turn_scores(values, torch.tensor([0, 0, 2, 2, 0]), 3)


@pytest.mark.parametrize("scores_fn", [trajectory_scores, last_turn_scores])
def test_trajectory_index_validation(scores_fn):
    values = torch.zeros(3)
    with pytest.raises(ValueError, match=r"in \[0, 2\)"):
        scores_fn(values, torch.tensor([0, 1, 2]), 2)
    with pytest.raises(ValueError, match=r"in \[0, 2\)"):
        scores_fn(values, torch.tensor([0, -1, 1]), 2)
    with pytest.raises(ValueError, match="shape mismatch"):
        scores_fn(values, torch.tensor([0, 1]), 2)
    with pytest.raises(TypeError, match="integer"):
        scores_fn(values, torch.tensor([0.0, 1.0, 1.0]), 2)
    with pytest.raises(ValueError, match="1-D"):
        scores_fn(torch.zeros(1, 3), torch.tensor([[0, 1, 1]]), 2)
    with pytest.raises(TypeError):
        scores_fn(values, torch.tensor([0, 1, 1]), 2.0)


def test_critic_pipeline_prefers_chosen_trajectory():
    """Advantages -> trajectory sums -> Bradley–Terry, computed by hand end to end."""
    critic = t([-1.0, -2.0, -0.5, -3.0], grad=True)
    ref = t([-1.2, -2.0, -1.0, -2.0])
    index = torch.tensor([0, 0, 1, 1])  # trajectory 0 chosen, 1 rejected
    totals = trajectory_scores(turn_advantage(critic, ref, beta=0.1), index, 2)
    loss = bradley_terry_loss(totals[:1], totals[1:])
    s_c = 0.1 * (0.2 + 0.0)
    s_r = 0.1 * (0.5 - 1.0)
    assert loss.item() == pytest.approx(-log_sigmoid(s_c - s_r), rel=1e-12)
    loss.backward()
    g = -1 / (1 + math.exp(s_c - s_r)) * 0.1
    assert critic.grad.tolist() == pytest.approx([g, g, -g, -g])


# --- SFT ------------------------------------------------------------------------------------


def test_sft_loss_means_over_all_masked_tokens():
    logps = t([[-1.0, -2.0, float("-inf")], [-0.5, -4.0, -3.0]], grad=True)
    mask = torch.tensor([[1, 1, 0], [0, 1, 1]])
    loss = sft_loss(logps, mask)
    assert loss.item() == pytest.approx((1.0 + 2.0 + 4.0 + 3.0) / 4, rel=1e-12)
    loss.backward()
    assert logps.grad.tolist() == [[-0.25, -0.25, 0.0], [0.0, -0.25, -0.25]]
    assert sft_loss(logps.detach(), mask.bool()).item() == pytest.approx(2.5)


def test_sft_loss_errors():
    with pytest.raises(ValueError, match="shape mismatch"):
        sft_loss(torch.zeros(2, 3), torch.ones(2, 2))
    with pytest.raises(ValueError, match="no token"):
        sft_loss(torch.zeros(2, 3), torch.zeros(2, 3))


# --- value learning -------------------------------------------------------------------------


def test_td_targets_and_no_gradient():
    rewards = t([0.0, 1.0, 0.5])
    next_v = t([2.0, 3.0, -1.0], grad=True)
    dones = torch.tensor([False, True, False])
    y = td_targets(rewards, next_v, dones, gamma=0.9)
    assert y.tolist() == pytest.approx([0.0 + 0.9 * 2.0, 1.0, 0.5 + 0.9 * -1.0])
    assert not y.requires_grad
    float_dones = td_targets(rewards, next_v, t([0.0, 1.0, 0.0]), gamma=0.9)
    assert float_dones.tolist() == pytest.approx(y.tolist())
    with pytest.raises(ValueError, match="gamma"):
        td_targets(rewards, next_v, dones, gamma=1.5)
    with pytest.raises(ValueError, match=r"dones=\(2,\)"):
        td_targets(rewards, next_v, dones[:2], gamma=0.9)


def test_value_regression_loss_and_target_gradient():
    pred, target = t([1.0, 2.0, 0.0], grad=True), t([0.0, 4.0, 0.0], grad=True)
    loss = value_regression_loss(pred, target)
    assert loss.item() == pytest.approx((1.0 + 4.0 + 0.0) / 3)
    loss.backward()
    assert pred.grad.tolist() == pytest.approx([2 * 1.0 / 3, 2 * -2.0 / 3, 0.0])
    assert target.grad is None
    with pytest.raises(ValueError, match="shape mismatch"):
        value_regression_loss(torch.zeros(3), torch.zeros(3, 1))


def test_double_q_min():
    q = double_q_min(t([1.0, -2.0, 3.0]), t([0.5, -1.0, 3.0]))
    assert q.tolist() == [0.5, -2.0, 3.0]
    with pytest.raises(ValueError, match=r"q1=\(2,\), q2=\(3,\)"):
        double_q_min(torch.zeros(2), torch.zeros(3))


def _pair() -> tuple[nn.Module, nn.Module]:
    torch.manual_seed(0)
    return nn.Linear(3, 2), nn.Linear(3, 2)


def test_soft_update_tau_one_copies_and_zero_keeps():
    target, source = _pair()
    before = [p.clone() for p in target.parameters()]
    soft_update(target, source, tau=0.0)
    assert all(torch.equal(p, b) for p, b in zip(target.parameters(), before))
    soft_update(target, source, tau=1.0)
    assert all(torch.equal(p, s) for p, s in zip(target.parameters(), source.parameters()))


def test_soft_update_interpolates_without_graph():
    target, source = _pair()
    with torch.no_grad():
        target.weight.fill_(1.0)
        source.weight.fill_(3.0)
    soft_update(target, source, tau=0.25)
    assert target.weight.flatten().tolist() == pytest.approx([0.75 * 1.0 + 0.25 * 3.0] * 6)
    assert target.weight.grad_fn is None and target.weight.is_leaf


def test_soft_update_errors():
    target, source = _pair()
    with pytest.raises(ValueError, match="tau"):
        soft_update(target, source, tau=1.5)
    with pytest.raises(ValueError, match="shape"):
        soft_update(nn.Linear(3, 2), nn.Linear(4, 2), tau=0.1)
    with pytest.raises(ValueError, match="different parameters"):
        soft_update(nn.Linear(3, 2), nn.Linear(3, 2, bias=False), tau=0.1)


# --- ArCHer actor -----------------------------------------------------------------------------


def test_advantage_weighted_policy_loss():
    logps = t([-1.0, -2.0, -0.5], grad=True)
    adv = t([2.0, -1.0, 0.5], grad=True)
    loss = advantage_weighted_policy_loss(logps, adv)
    assert loss.item() == pytest.approx(-(2.0 * -1.0 + -1.0 * -2.0 + 0.5 * -0.5) / 3)
    loss.backward()
    assert logps.grad.tolist() == pytest.approx([-2.0 / 3, 1.0 / 3, -0.5 / 3])
    assert adv.grad is None


def test_advantage_weighted_policy_loss_normalised():
    a = [2.0, -1.0, 0.5]
    mean = sum(a) / 3
    std = math.sqrt(sum((x - mean) ** 2 for x in a) / 3)
    z = [(x - mean) / (std + 1e-8) for x in a]
    logps = [-1.0, -2.0, -0.5]
    loss = advantage_weighted_policy_loss(t(logps), t(a), normalise=True)
    assert loss.item() == pytest.approx(-sum(zi * li for zi, li in zip(z, logps)) / 3, rel=1e-9)
    # One sample: standardised advantage is 0, not NaN.
    assert advantage_weighted_policy_loss(t([-1.0]), t([5.0]), normalise=True).item() == 0.0
    with pytest.raises(ValueError, match="shape mismatch"):
        advantage_weighted_policy_loss(torch.zeros(2), torch.zeros(3))
