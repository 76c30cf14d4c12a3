import math

import pytest
import torch

from algorithms import Algorithm, RejectionFT, select_trajectories, turn_logprobs
from tests.algorithms.conftest import FAST
from tests.algorithms.test_training import weights


def test_selects_successes_or_each_tasks_best(shared_buffer):
    assert all(t.success for t in select_trajectories(shared_buffer))
    assert len(select_trajectories(shared_buffer)) == 4
    failures = shared_buffer.filter(lambda t: not t.success)
    assert len(select_trajectories(failures)) == 0
    best = select_trajectories(failures, select="best_of_k", min_reward=0.0)
    assert len(best) == 4 and len({t.task_id for t in best}) == 4
    assert len(select_trajectories(failures, select="best_of_k", min_reward=0.5)) == 0


def test_fit_imitates_the_successful_turns_and_round_trips(shared_buffer, tiny_policy, tmp_path):
    algo = RejectionFT(tiny_policy, **FAST)
    turns = [turn for t in shared_buffer if t.success for turn in t.turns]
    encoded = algo.encode(algo.policy_prompts(turns), [t.action for t in turns])

    def nll():
        with torch.no_grad():
            logps = turn_logprobs(tiny_policy.model, encoded)
        return float(-logps.sum.sum() / logps.num_tokens.sum())

    before_nll, before = nll(), weights(tiny_policy)
    metrics = algo.fit(shared_buffer)
    assert metrics["train/num_turns"] == len(turns) and metrics["train/num_trajectories"] == 4
    # The first logged loss is the token-mean NLL of the first batch, before any update.
    assert math.isfinite(metrics["train/loss"]) and nll() < before_nll - 0.1
    assert any(not torch.equal(before[k], v) for k, v in tiny_policy.model.state_dict().items())

    algo.save(tmp_path / "rft")
    loaded = Algorithm.load(tmp_path / "rft", device="cpu")
    assert loaded.config == algo.config and loaded.policy.system_prompt == tiny_policy.system_prompt
    for key, value in tiny_policy.model.state_dict().items():
        assert torch.equal(loaded.policy.model.state_dict()[key], value)


def test_nothing_to_imitate_is_a_clear_error(shared_buffer, tiny_policy):
    with pytest.raises(ValueError, match="best_of_k"):
        RejectionFT(tiny_policy, **FAST).fit(shared_buffer.filter(lambda t: not t.success))
