"""Pure loss functions for SWEET-RL and its baselines (DPO, rejection fine-tuning, ArCHer).

Every function takes tensors and keyword-only hyperparameters, returns a tensor (or a
small frozen record), and has no state: the algorithms compose them. Each docstring
writes the formula out and says where it comes from.

Conventions:

* Half-precision inputs (``float16``/``bfloat16``) are computed in ``float32``: summed
  log-probs of a few hundred tokens lose whole nats to bf16 rounding, and DPO looks at
  differences of such sums. ``float64`` stays ``float64``.
* Tensors that are targets or come from frozen models (reference log-probs, TD targets,
  advantages) are detached here, so no gradient can leak into them whatever the caller
  did.
* Shapes are checked and a mismatch raises :class:`ValueError` naming the tensors.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "DPOOutput",
    "advantage_weighted_policy_loss",
    "bradley_terry_loss",
    "double_q_min",
    "dpo_loss",
    "last_turn_scores",
    "sampled_value_targets",
    "sft_loss",
    "soft_update",
    "td_targets",
    "token_mean_scores",
    "trajectory_scores",
    "turn_advantage",
    "value_regression_loss",
]

_HALF = (torch.float16, torch.bfloat16)


def _floating(name: str, tensor: Tensor) -> Tensor:
    """Return ``tensor`` as float32 or wider; refuse non-tensors and integer tensors."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {tensor.dtype}")
    return tensor.float() if tensor.dtype in _HALF else tensor


def _same_shape(**tensors: Tensor) -> None:
    """Raise if the named tensors do not all have one shape."""
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{name}={shape}" for name, shape in shapes.items())
        raise ValueError(f"shape mismatch: {listed}; these tensors must have the same shape")


def _non_empty(name: str, tensor: Tensor) -> None:
    if tensor.numel() == 0:
        raise ValueError(f"{name} is empty; a loss needs at least one element to average")


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value}")


# ---------------------------------------------------------------------------------------
# DPO (policy update of SWEET-RL and Multi-turn DPO)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DPOOutput:
    """The DPO loss and its usual diagnostics.

    Attributes:
        loss: Scalar to minimise (the DPO term plus the optional NLL term).
        chosen_rewards: ``(batch,)`` implicit rewards ``beta * (pi_c - ref_c)``, detached.
        rejected_rewards: ``(batch,)`` implicit rewards ``beta * (pi_r - ref_r)``, detached.
        reward_accuracy: Scalar, fraction of pairs with ``chosen_rewards > rejected_rewards``.
        reward_margin: Scalar, mean of ``chosen_rewards - rejected_rewards``.

    """

    loss: Tensor
    chosen_rewards: Tensor
    rejected_rewards: Tensor
    reward_accuracy: Tensor
    reward_margin: Tensor


def dpo_loss(
    policy_chosen_logps: Tensor,
    policy_rejected_logps: Tensor,
    reference_chosen_logps: Tensor,
    reference_rejected_logps: Tensor,
    *,
    beta: float = 0.1,
    chosen_nll: Tensor | None = None,
    nll_coef: float = 0.0,
    label_smoothing: float = 0.0,
    dpo_coef: float = 1.0,
) -> DPOOutput:
    """Sigmoid DPO loss on preference pairs, with optional label smoothing and NLL term.

    DPO objective (Rafailov et al. 2023, arXiv 2305.18290, Eq. 7), per pair::

        z    = beta * ((pi_c - ref_c) - (pi_r - ref_r))
        loss = -log sigmoid(z)

    where ``pi_*``/``ref_*`` are the log-probs of the chosen/rejected response under the
    policy and the frozen reference. With ``label_smoothing = eps`` (conservative DPO,
    Mitchell 2023, "A note on DPO with noisy preferences"; TRL's ``label_smoothing``) the
    preference label is assumed flipped with probability ``eps``::

        loss = -(1 - eps) * log sigmoid(z) - eps * log sigmoid(-z)

    The batch loss is ``dpo_coef`` times the mean over pairs, plus
    ``nll_coef * mean(chosen_nll)`` when ``chosen_nll`` is given (SWEET-RL's policy
    update adds this NLL term on the chosen action with coefficient 0.01).

    Multi-turn DPO passes log-probs summed over all agent turns of a trajectory; SWEET-RL
    passes each turn's action log-probs.

    Args:
        policy_chosen_logps: ``(batch,)`` log-prob of each chosen response under the policy.
        policy_rejected_logps: ``(batch,)`` same for the rejected response.
        reference_chosen_logps: ``(batch,)`` chosen log-prob under the frozen reference
            (detached here).
        reference_rejected_logps: ``(batch,)`` rejected log-prob under the reference
            (detached here).
        beta: Inverse temperature of the implicit reward; the paper uses 0.1.
        chosen_nll: ``(batch,)`` (or scalar) negative log-likelihood of the chosen
            responses, e.g. minus their mean token log-prob under the policy.
        nll_coef: Weight of the NLL term; needs ``chosen_nll`` when non-zero.
        label_smoothing: Probability ``eps`` in ``[0, 0.5)`` that a label is wrong.
        dpo_coef: Weight of the DPO term (1: DPO; 0: the NLL term alone, a control that
            trains on the chosen responses and ignores the rejected ones).

    Returns:
        A :class:`DPOOutput` with the scalar loss and detached diagnostics.

    Raises:
        ValueError: On mismatched or non-1-D shapes, an empty batch, ``beta <= 0``,
            ``label_smoothing`` outside ``[0, 0.5)``, a negative ``nll_coef`` or
            ``dpo_coef``, or a non-zero ``nll_coef`` without ``chosen_nll``.

    """
    _positive("beta", beta)
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"label_smoothing must be in [0, 0.5), got {label_smoothing}")
    if nll_coef < 0:
        raise ValueError(f"nll_coef must be >= 0, got {nll_coef}")
    if dpo_coef < 0:
        raise ValueError(f"dpo_coef must be >= 0, got {dpo_coef}")
    if nll_coef != 0 and chosen_nll is None:
        raise ValueError(f"nll_coef={nll_coef} needs chosen_nll; pass the chosen responses' NLL")
    pi_c = _floating("policy_chosen_logps", policy_chosen_logps)
    pi_r = _floating("policy_rejected_logps", policy_rejected_logps)
    ref_c = _floating("reference_chosen_logps", reference_chosen_logps).detach()
    ref_r = _floating("reference_rejected_logps", reference_rejected_logps).detach()
    _same_shape(
        policy_chosen_logps=pi_c,
        policy_rejected_logps=pi_r,
        reference_chosen_logps=ref_c,
        reference_rejected_logps=ref_r,
    )
    if pi_c.dim() != 1:
        raise ValueError(
            f"DPO log-probs must be 1-D (batch,), one value per pair; got shape "
            f"{tuple(pi_c.shape)}. Sum or average token log-probs per response first."
        )
    _non_empty("policy_chosen_logps", pi_c)

    chosen_ratio = pi_c - ref_c
    rejected_ratio = pi_r - ref_r
    logits = beta * (chosen_ratio - rejected_ratio)
    per_pair = -(1.0 - label_smoothing) * F.logsigmoid(logits)
    if label_smoothing:
        per_pair = per_pair - label_smoothing * F.logsigmoid(-logits)
    loss = dpo_coef * per_pair.mean()
    if chosen_nll is not None:
        nll = _floating("chosen_nll", chosen_nll)
        if nll.dim() != 0 and tuple(nll.shape) != tuple(pi_c.shape):
            raise ValueError(
                f"chosen_nll must be a scalar or have shape {tuple(pi_c.shape)} like the "
                f"log-probs, got {tuple(nll.shape)}"
            )
        loss = loss + nll_coef * nll.mean()

    chosen_rewards = (beta * chosen_ratio).detach()
    rejected_rewards = (beta * rejected_ratio).detach()
    return DPOOutput(
        loss=loss,
        chosen_rewards=chosen_rewards,
        rejected_rewards=rejected_rewards,
        reward_accuracy=(chosen_rewards > rejected_rewards).float().mean(),
        reward_margin=(chosen_rewards - rejected_rewards).mean(),
    )


# ---------------------------------------------------------------------------------------
# SWEET-RL critic
# ---------------------------------------------------------------------------------------


def bradley_terry_loss(chosen_scores: Tensor, rejected_scores: Tensor) -> Tensor:
    """Bradley–Terry negative log-likelihood that each chosen item beats its rejected one.

    ``P(chosen > rejected) = sigmoid(s_c - s_r)``, so::

        loss = mean(-log sigmoid(s_c - s_r))

    SWEET-RL's critic objective applies it to trajectories: ``s`` is the sum of a
    trajectory's turn advantages (:func:`turn_advantage` summed by
    :func:`trajectory_scores`), chosen = a better trajectory of the same task. It works
    on any paired scores (e.g. a reward model).

    Args:
        chosen_scores: Scores of the preferred items; any shape.
        rejected_scores: Scores of the other items, same shape.

    Returns:
        Scalar mean loss; gradients flow into both inputs.

    Raises:
        ValueError: If the shapes differ or the inputs are empty.

    """
    chosen = _floating("chosen_scores", chosen_scores)
    rejected = _floating("rejected_scores", rejected_scores)
    _same_shape(chosen_scores=chosen, rejected_scores=rejected)
    _non_empty("chosen_scores", chosen)
    return -F.logsigmoid(chosen - rejected).mean()


def turn_advantage(critic_logps: Tensor, reference_logps: Tensor, *, beta: float = 0.1) -> Tensor:
    """SWEET-RL's turn-level advantage: a scaled log-prob ratio of critic and reference.

    Elementwise::

        A(o_t, a_t, c) = beta * (log pi_critic(a_t | o_t, c) - log pi_ref(a_t | o_t, c))

    where ``c`` is the training-time information the critic sees. With per-token *mean*
    log-probs this is the paper's length-normalised parameterisation; with summed
    log-probs it is the "no length normalisation" ablation (which the paper reports
    collapses). :class:`~algorithms.SweetRL` trains its critic with ``reference_logps``
    from the critic's frozen start (reading the same hinted prompt), and ranks candidate
    actions by the same ratio with ``reference_logps`` from the sampling policy on its
    unhinted prompt, as the official code does; ``beta`` does not change a ranking.

    Args:
        critic_logps: Log-probs of each turn's action under the critic (trained).
        reference_logps: Log-probs under the frozen reference, same shape (detached here).
        beta: Scale of the advantage; the paper uses 0.1.

    Returns:
        Tensor of advantages, same shape as the inputs.

    Raises:
        ValueError: If the shapes differ or ``beta <= 0``.

    """
    _positive("beta", beta)
    critic = _floating("critic_logps", critic_logps)
    reference = _floating("reference_logps", reference_logps).detach()
    _same_shape(critic_logps=critic, reference_logps=reference)
    return beta * (critic - reference)


def _trajectory_index(
    turn_values: Tensor, trajectory_index: Tensor, num_trajectories: int
) -> tuple[Tensor, int]:
    """Validate a turn -> trajectory index; return it as int64 on the values' device."""
    if not isinstance(trajectory_index, Tensor):
        raise TypeError(
            f"trajectory_index must be a torch.Tensor, got {type(trajectory_index).__name__}"
        )
    if trajectory_index.dtype.is_floating_point or trajectory_index.dtype == torch.bool:
        raise TypeError(f"trajectory_index must be an integer tensor, got {trajectory_index.dtype}")
    if turn_values.dim() != 1:
        raise ValueError(f"turn_values must be 1-D (num_turns,), got {tuple(turn_values.shape)}")
    _same_shape(turn_values=turn_values, trajectory_index=trajectory_index)
    if isinstance(num_trajectories, bool):
        raise TypeError("num_trajectories must be an int, got bool")
    num_trajectories = operator.index(num_trajectories)  # TypeError for non-integers
    if num_trajectories < 0:
        raise ValueError(f"num_trajectories must be >= 0, got {num_trajectories}")
    if trajectory_index.numel():
        low, high = int(trajectory_index.min()), int(trajectory_index.max())
        if low < 0 or high >= num_trajectories:
            raise ValueError(
                f"trajectory_index values must lie in [0, {num_trajectories}) "
                f"(num_trajectories={num_trajectories}), got values from {low} to {high}"
            )
    return trajectory_index.to(device=turn_values.device, dtype=torch.long), num_trajectories


def trajectory_scores(
    turn_values: Tensor, trajectory_index: Tensor, num_trajectories: int
) -> Tensor:
    """Sum per-turn values into per-trajectory totals.

    ``scores[j] = sum of turn_values[i] over turns i with trajectory_index[i] == j``;
    a trajectory with no turns scores 0. Turns may come in any order and trajectories
    may have different lengths, so a flat batch of turns from many trajectories can be
    scored at once and fed to :func:`bradley_terry_loss`.

    Args:
        turn_values: ``(num_turns,)`` per-turn values, e.g. :func:`turn_advantage`.
        trajectory_index: ``(num_turns,)`` integer index of each turn's trajectory, in
            ``[0, num_trajectories)``.
        num_trajectories: Number of trajectories (length of the result).

    Returns:
        ``(num_trajectories,)`` totals; differentiable with respect to ``turn_values``.

    Raises:
        TypeError: If ``trajectory_index`` is not an integer tensor.
        ValueError: On mismatched shapes or an index out of range.

    """
    values = _floating("turn_values", turn_values)
    index, num_trajectories = _trajectory_index(values, trajectory_index, num_trajectories)
    return values.new_zeros(num_trajectories).index_add(0, index, values)


def last_turn_scores(
    turn_values: Tensor, trajectory_index: Tensor, num_trajectories: int
) -> Tensor:
    """Pick each trajectory's last turn value (the "last turn only" critic variant).

    ``scores[j] = turn_values[i]`` for the largest position ``i`` with
    ``trajectory_index[i] == j``: turns of one trajectory must appear in order in the
    flat batch (other trajectories' turns may be interleaved).

    Args:
        turn_values: ``(num_turns,)`` per-turn values.
        trajectory_index: ``(num_turns,)`` integer index of each turn's trajectory.
        num_trajectories: Number of trajectories (length of the result).

    Returns:
        ``(num_trajectories,)`` last-turn values; differentiable w.r.t. ``turn_values``.

    Raises:
        TypeError: If ``trajectory_index`` is not an integer tensor.
        ValueError: On mismatched shapes, an index out of range or a trajectory with no
            turns.

    """
    values = _floating("turn_values", turn_values)
    index, num_trajectories = _trajectory_index(values, trajectory_index, num_trajectories)
    positions = torch.arange(index.numel(), device=index.device)
    last = torch.full((num_trajectories,), -1, dtype=torch.long, device=index.device)
    last = last.scatter_reduce(0, index, positions, reduce="amax", include_self=True)
    missing = (last < 0).nonzero().flatten().tolist()
    if missing:
        raise ValueError(f"trajectories {missing[:10]} have no turns; each needs at least one")
    return values[last]


def token_mean_scores(
    turn_values: Tensor, turn_num_tokens: Tensor, trajectory_index: Tensor, num_trajectories: int
) -> Tensor:
    """Average per-turn token means over every action token of each trajectory.

    With ``v_i`` turn ``i``'s mean value per token (e.g. :func:`turn_advantage` of mean
    log-probs) and ``n_i`` its number of action tokens::

        scores[j] = sum_i n_i * v_i / sum_i n_i    over turns i of trajectory j

    i.e. one mean over all the trajectory's action tokens. This is how the official
    SWEET-RL code scores a dialogue (its DPO trainer's mean log-prob over every assistant
    token of the whole conversation). Unlike :func:`trajectory_scores` (a sum of per-turn
    means, where every turn weighs the same whatever its length), a long turn weighs
    more than a short one and the score does not grow with the number of turns. With
    one turn per trajectory both give ``v``. A trajectory with no tokens scores 0.

    Args:
        turn_values: ``(num_turns,)`` per-turn mean values.
        turn_num_tokens: ``(num_turns,)`` how many tokens each mean is over (>= 0).
        trajectory_index: ``(num_turns,)`` integer index of each turn's trajectory, in
            ``[0, num_trajectories)``.
        num_trajectories: Number of trajectories (length of the result).

    Returns:
        ``(num_trajectories,)`` token means; differentiable with respect to
        ``turn_values`` (the counts are constants).

    Raises:
        TypeError: If ``trajectory_index`` is not an integer tensor.
        ValueError: On mismatched shapes, an index out of range or a negative count.

    """
    values = _floating("turn_values", turn_values)
    index, num_trajectories = _trajectory_index(values, trajectory_index, num_trajectories)
    if not isinstance(turn_num_tokens, Tensor):
        raise TypeError(
            f"turn_num_tokens must be a torch.Tensor, got {type(turn_num_tokens).__name__}"
        )
    _same_shape(turn_values=values, turn_num_tokens=turn_num_tokens)
    counts = turn_num_tokens.detach().to(device=values.device, dtype=values.dtype)
    if counts.numel() and bool((counts < 0).any()):
        raise ValueError("turn_num_tokens must be >= 0 (token counts)")
    totals = values.new_zeros(num_trajectories).index_add(0, index, values * counts)
    tokens = counts.new_zeros(num_trajectories).index_add(0, index, counts)
    return totals / tokens.clamp(min=1)


# ---------------------------------------------------------------------------------------
# Rejection fine-tuning
# ---------------------------------------------------------------------------------------


def sft_loss(token_logps: Tensor, mask: Tensor) -> Tensor:
    """Negative log-likelihood averaged over all action tokens in the batch.

    ::

        loss = -sum_{b,t} m_{b,t} * log p(x_{b,t}) / sum_{b,t} m_{b,t}

    (rejection fine-tuning: supervised learning on the agent turns of successful
    trajectories). Every action token weighs the same, so long actions count more than
    short ones. Positions outside the mask are ignored even if their log-prob is
    ``-inf``.

    Args:
        token_logps: ``(batch, length)`` (any shape) per-token log-probs of the targets.
        mask: Same shape; non-zero / True marks the action tokens that count.

    Returns:
        Scalar mean NLL.

    Raises:
        ValueError: If the shapes differ or the mask selects no token.

    """
    logps = _floating("token_logps", token_logps)
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a torch.Tensor, got {type(mask).__name__}")
    _same_shape(token_logps=logps, mask=mask)
    keep = mask.to(device=logps.device).bool()
    count = keep.sum()
    if int(count) == 0:
        raise ValueError("mask selects no token; there is nothing to learn from")
    return -torch.where(keep, logps, torch.zeros_like(logps)).sum() / count


# ---------------------------------------------------------------------------------------
# Value learning (ArCHer-style critics, scalar value-head ablation)
# ---------------------------------------------------------------------------------------


def td_targets(rewards: Tensor, next_values: Tensor, dones: Tensor, *, gamma: float) -> Tensor:
    """One-step temporal-difference targets, detached.

    ::

        y = r + gamma * (1 - done) * V(s')

    ArCHer's utterance-level critic regresses ``Q(s, a)`` onto ``y`` with ``V(s')`` from a
    target network (Zhou et al. 2024, arXiv 2402.19446, critic objective).

    Args:
        rewards: Rewards ``r`` of each transition.
        next_values: ``V(s')`` (e.g. from a target network), same shape.
        dones: 1 / True where ``s'`` is terminal (no bootstrap), same shape.
        gamma: Discount factor in ``[0, 1]``.

    Returns:
        Targets, same shape, detached from every input.

    Raises:
        ValueError: On mismatched shapes or ``gamma`` outside ``[0, 1]``.

    """
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    r = _floating("rewards", rewards)
    v = _floating("next_values", next_values)
    if not isinstance(dones, Tensor):
        raise TypeError(f"dones must be a torch.Tensor, got {type(dones).__name__}")
    _same_shape(rewards=r, next_values=v, dones=dones)
    not_done = 1.0 - dones.to(device=v.device, dtype=v.dtype)
    return (r + gamma * not_done * v).detach()


def value_regression_loss(predictions: Tensor, targets: Tensor) -> Tensor:
    """Mean squared error of value predictions against (detached) targets.

    ::

        loss = mean((prediction - target)^2)

    Used for TD learning (targets from :func:`td_targets`) and for the ablation critic
    that regresses the final outcome with a scalar value head.

    Args:
        predictions: Predicted values; any shape.
        targets: Regression targets, same shape (detached here).

    Returns:
        Scalar MSE.

    Raises:
        ValueError: If the shapes differ or the inputs are empty.

    """
    pred = _floating("predictions", predictions)
    target = _floating("targets", targets).detach()
    _same_shape(predictions=pred, targets=target)
    _non_empty("predictions", pred)
    return F.mse_loss(pred, target.to(pred.dtype))


def double_q_min(q1: Tensor, q2: Tensor) -> Tensor:
    """Elementwise minimum of two Q estimates (clipped double Q, against overestimation).

    ArCHer trains two Q heads and uses ``min(Q1, Q2)`` of the target heads as the value
    target ``V(s) <- E_{a ~ pi} min(Q1(s, a), Q2(s, a))``.

    Args:
        q1: First Q estimate.
        q2: Second Q estimate, same shape.

    Returns:
        ``torch.minimum(q1, q2)``, same shape.

    Raises:
        ValueError: If the shapes differ.

    """
    a = _floating("q1", q1)
    b = _floating("q2", q2)
    _same_shape(q1=a, q2=b)
    return torch.minimum(a, b)


def sampled_value_targets(q1: Tensor, q2: Tensor) -> Tensor:
    """ArCHer's value target: the mean clipped double Q over actions sampled from the policy.

    ::

        V(s) <- (1 / K) * sum_k min(Q1(s, a_k), Q2(s, a_k)),   a_k ~ pi(. | s)

    a Monte Carlo estimate of ``E_{a ~ pi} min(Q1, Q2)(s, a)`` (Zhou et al. 2024, arXiv
    2402.19446, value objective) with the target network's Q heads.

    Args:
        q1: ``(num_states, K)`` first Q estimate of each state's ``K`` sampled actions.
        q2: Second Q estimate, same shape.

    Returns:
        ``(num_states,)`` targets, detached.

    Raises:
        ValueError: If the shapes differ, are not 2-D or have no sample.

    """
    q = double_q_min(q1, q2)
    if q.dim() != 2 or q.shape[1] == 0:
        raise ValueError(
            f"q1 and q2 must be (num_states, num_samples) with at least one sample, got "
            f"{tuple(q.shape)}"
        )
    return q.mean(dim=1).detach()


@torch.no_grad()
def soft_update(target: nn.Module, source: nn.Module, *, tau: float) -> None:
    """Polyak-average ``source``'s parameters into ``target`` in place.

    For every parameter ``theta_target <- (1 - tau) * theta_target + tau * theta_source``;
    ``tau = 1`` copies, ``tau = 0`` leaves the target as it is. Only parameters are
    averaged (buffers are left alone), as in Stable-Baselines3 and CleanRL.

    Args:
        target: The slowly moving network (e.g. ArCHer's target critic).
        source: The trained network with the same parameter names and shapes.
        tau: Step size in ``[0, 1]``.

    Raises:
        ValueError: If ``tau`` is outside ``[0, 1]`` or the networks' parameters differ
            in names or shapes.

    """
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must be in [0, 1], got {tau}")
    target_params = dict(target.named_parameters())
    source_params = dict(source.named_parameters())
    if target_params.keys() != source_params.keys():
        only_t = sorted(target_params.keys() - source_params.keys())[:5]
        only_s = sorted(source_params.keys() - target_params.keys())[:5]
        raise ValueError(
            f"target and source have different parameters (only in target: {only_t}, "
            f"only in source: {only_s}); soft_update needs two copies of one architecture"
        )
    for name, param in target_params.items():
        src = source_params[name]
        if param.shape != src.shape:
            raise ValueError(
                f"parameter {name!r} has shape {tuple(param.shape)} in target but "
                f"{tuple(src.shape)} in source"
            )
    for name, param in target_params.items():
        # lerp is exact at both ends: weight 0 keeps, weight 1 copies.
        param.lerp_(source_params[name].to(device=param.device, dtype=param.dtype), tau)


# ---------------------------------------------------------------------------------------
# ArCHer actor
# ---------------------------------------------------------------------------------------


def advantage_weighted_policy_loss(
    action_logps: Tensor,
    advantages: Tensor,
    *,
    normalise: bool = False,
    num_tokens: Tensor | None = None,
) -> Tensor:
    """Policy-gradient loss with a learned advantage (ArCHer's token-level actor update).

    ::

        loss = -mean(A.detach() * log pi(a | s)),   A = Q(s, a) - V(s)

    i.e. REINFORCE with the critic's advantage as the weight of each action's log-prob
    (ArCHer, Zhou et al. 2024, arXiv 2402.19446: the token-level policy is updated with
    the utterance-level critic's advantage). With ``normalise=True`` the advantages are
    standardised over the batch first: ``(A - mean(A)) / (std(A) + 1e-8)`` (population
    std), a common variance reduction.

    With ``num_tokens`` (and summed log-probs) the mean is over action tokens instead::

        loss = -sum_i A_i * log pi(a_i | s_i) / sum_i n_i

    Every token of action ``i`` carries the weight ``A_i``, so the value reads as a
    per-token log-prob whatever the actions' lengths; dividing by one positive count
    leaves the gradient's direction as it is.

    Args:
        action_logps: Log-probs of the taken actions under the policy (e.g. summed over
            an utterance's tokens); any shape.
        advantages: Advantages, same shape (detached here).
        normalise: Standardise the advantages over the batch.
        num_tokens: Number of tokens of each action, same shape; ``None``: the mean is
            over actions.

    Returns:
        Scalar loss; gradients flow only into ``action_logps``.

    Raises:
        ValueError: If the shapes differ, the inputs are empty or ``num_tokens`` counts
            no token.

    """
    logps = _floating("action_logps", action_logps)
    adv = _floating("advantages", advantages).detach()
    _same_shape(action_logps=logps, advantages=adv)
    _non_empty("action_logps", logps)
    if normalise:
        adv = (adv - adv.mean()) / (adv.std(unbiased=False) + 1e-8)
    weighted = adv.to(logps.dtype) * logps
    if num_tokens is None:
        return -weighted.mean()
    if not isinstance(num_tokens, Tensor):
        raise TypeError(f"num_tokens must be a torch.Tensor, got {type(num_tokens).__name__}")
    _same_shape(action_logps=logps, num_tokens=num_tokens)
    count = num_tokens.detach().to(device=logps.device, dtype=logps.dtype).sum()
    if not count > 0:
        raise ValueError(f"num_tokens must count at least one token, got a total of {float(count)}")
    return -weighted.sum() / count
