import math

import pytest
import torch

from algorithms import Algorithm, MultiTurnDPO, turn_logprobs
from tests.algorithms.conftest import FAST
from tests.algorithms.test_training import weights


def trajectory_logp(algo, trajectory):
    """A trajectory's log-probability: summed over all its agent turns."""
    encoded = algo.encode(
        algo.policy_prompts(trajectory.turns), [t.action for t in trajectory.turns]
    )
    with torch.no_grad():
        return float(turn_logprobs(algo.policy.model, encoded).sum.sum())


def test_fit_prefers_chosen_trajectories_and_round_trips(shared_buffer, tiny_policy, tmp_path):
    before = weights(tiny_policy)
    algo = MultiTurnDPO(tiny_policy, **FAST)
    pairs = [
        (p.chosen, p.rejected) for p in __import__("algorithms").trajectory_pairs(shared_buffer)
    ]
    margin_before = sum(trajectory_logp(algo, c) - trajectory_logp(algo, r) for c, r in pairs)
    metrics = algo.fit(shared_buffer)
    assert metrics["train/num_pairs"] == 8 and math.isfinite(metrics["train/loss"])
    # The first step starts from the reference itself: every pair's loss is log 2.
    first = next(value for _, key, value in algo.history if key == "train/loss")
    assert first == pytest.approx(math.log(2), abs=1e-5)
    margin_after = sum(trajectory_logp(algo, c) - trajectory_logp(algo, r) for c, r in pairs)
    assert margin_after > margin_before
    assert any(not torch.equal(before[k], v) for k, v in tiny_policy.model.state_dict().items())

    algo.save(tmp_path / "dpo")
    loaded = Algorithm.load(tmp_path / "dpo", device="cpu")
    assert isinstance(loaded, MultiTurnDPO) and loaded.config == algo.config
    for key, value in tiny_policy.model.state_dict().items():
        assert torch.equal(loaded.policy.model.state_dict()[key], value)


def test_every_turn_is_trained_not_only_the_last(shared_buffer, tiny_policy):
    """Raising the chosen trajectories' earlier turns is part of the objective."""
    algo = MultiTurnDPO(tiny_policy, **FAST)
    chosen = [t for t in shared_buffer if t.success]
    first_turns = [t.turns[0] for t in chosen]

    def first_turn_logp():
        encoded = algo.encode(algo.policy_prompts(first_turns), [t.action for t in first_turns])
        with torch.no_grad():
            return float(turn_logprobs(tiny_policy.model, encoded).sum.sum())

    before = first_turn_logp()
    algo.fit(shared_buffer)
    assert first_turn_logp() > before


def test_no_pairs_is_a_clear_error(shared_buffer, tiny_policy):
    with pytest.raises(ValueError, match="no trajectory pairs"):
        MultiTurnDPO(tiny_policy, **FAST).fit(shared_buffer.filter(lambda t: t.success))


@pytest.mark.parametrize("scope", ["action", "dialogue"])
def test_nll_anchor_weighs_each_chosen_action_or_the_whole_dialogue(
    shared_buffer, tiny_policy, scope
):
    """At the first step DPO's part is log 2; the rest is the NLL anchor, as the scope says."""
    from algorithms import trajectory_pairs

    settings = {**FAST, "batch_size": 8, "nll_coef": 1.0, "nll_scope": scope}
    algo = MultiTurnDPO(tiny_policy, **settings)
    chosen = [pair.chosen for pair in trajectory_pairs(shared_buffer)]
    assert len(chosen) == 8  # one batch: the first step's loss covers every pair

    def anchors(trajectory):
        encoded = algo.encode(
            algo.policy_prompts(trajectory.turns), [t.action for t in trajectory.turns]
        )
        with torch.no_grad():
            logps = turn_logprobs(algo.policy.model, encoded)
        return {  # "action": every action as hard as SWEET-RL's one chosen action
            "action": -float(logps.mean.sum()),
            "dialogue": -float(logps.sum.sum() / logps.num_tokens.sum()),
        }

    before = [anchors(t) for t in chosen]
    means = {k: sum(a[k] for a in before) / len(before) for k in ("action", "dialogue")}
    assert means["action"] > 1.5 * means["dialogue"]  # multi-turn dialogues: scopes differ
    algo.fit(shared_buffer)
    first = next(value for _, key, value in algo.history if key == "train/loss")
    assert first == pytest.approx(math.log(2) + means[scope], rel=1e-3)


def test_max_pairs_of_an_older_version_is_refused_by_name(tiny_policy):
    from algorithms import MultiTurnDPOConfig

    with pytest.raises(TypeError, match=r"no setting 'max_pairs' any more.*older version"):
        MultiTurnDPO(tiny_policy, **FAST, max_pairs=3)
    with pytest.raises(TypeError, match="max_pairs"):
        MultiTurnDPOConfig.from_dict({"max_pairs": None})
