"""SWEET-RL end to end and step by step, on the shared buffer and a synthetic one."""

import itertools
import math

import pytest
import torch

from algorithms import (
    Algorithm,
    StopAfterSteps,
    SweetRL,
    ValueHeadModel,
    critic_prompts,
    turn_logprobs,
)
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer
from tests.algorithms.conftest import FAST
from tests.algorithms.synthetic import BAD_TURNS, GOOD_TURNS, synthetic_buffer
from tests.algorithms.test_training import fresh_policy, weights

SMALL = {
    **FAST,
    "critic_learning_rate": 1e-3,
    "critic_epochs": 2,
    "critic_batch_size": 2,
    "num_candidates": 4,
    "candidate_fraction": 0.2,
    "held_out_fraction": 0.25,
}


def test_fit_trains_critic_and_policy_and_round_trips(shared_buffer, tiny_policy, tmp_path):
    before = weights(tiny_policy)
    algo = SweetRL(tiny_policy, **SMALL)
    metrics = algo.fit(shared_buffer)
    for key in (
        "critic/loss",
        "critic/train_pair_accuracy",
        "critic/heldout_pair_accuracy",
        "train/loss",
        "train/reward_accuracy",
        "train/num_pairs",
    ):
        assert math.isfinite(metrics[key]), key
    # 4 tasks with a success, 2 worse episodes each; 1 task of 4 held out.
    assert (metrics["critic/num_pairs"], metrics["critic/num_heldout_pairs"]) == (6, 2)
    assert any(not torch.equal(before[k], v) for k, v in tiny_policy.model.state_dict().items())
    critic_state = algo.critic.state_dict()
    assert any(not torch.equal(before[k], critic_state[k]) for k in before)

    algo.save(tmp_path / "sweet")
    loaded = Algorithm.load(tmp_path / "sweet")
    assert isinstance(loaded, SweetRL) and loaded.config == algo.config
    for key, value in tiny_policy.model.state_dict().items():
        assert torch.equal(loaded.policy.model.state_dict()[key], value)
    for key, value in critic_state.items():
        assert torch.equal(loaded.critic.state_dict()[key], value)
    assert loaded.metrics == metrics


def score_good_vs_bad(algo, buffer):
    """Pairwise accuracy: each good-kind action vs each bad-kind one, on held-out contexts."""
    wins = []
    for trajectory in buffer:
        scores = algo.score_actions(
            trajectory.turns[0].messages, trajectory.reference, [*GOOD_TURNS, *BAD_TURNS]
        )
        good, bad = scores[: len(GOOD_TURNS)], scores[len(GOOD_TURNS) :]
        wins += [g > b for g, b in itertools.product(good, bad)]
    return sum(wins) / len(wins)


@pytest.mark.slow
def test_critic_ranks_held_out_turns_of_the_successful_kind_higher(tiny_policy):
    """Done-when of the algorithms issue: pairwise accuracy >= 0.9 on held-out turns."""
    algo = SweetRL(
        tiny_policy, **{**SMALL, "critic_epochs": 4, "critic_batch_size": 4, "batch_size": 8}
    )
    train = synthetic_buffer(16, seed=0)
    held_out = synthetic_buffer(8, seed=1)[::3]  # new tasks: other requests and references
    algo.fit_critic(algo.trajectory_pairs(train))
    accuracy = score_good_vs_bad(algo, held_out)
    assert accuracy >= 0.9
    assert algo.critic_accuracy(algo.trajectory_pairs(synthetic_buffer(8, seed=1))) >= 0.9


def test_turn_advantage_is_beta_times_mean_log_ratio(shared_buffer, tiny_policy):
    algo = SweetRL(tiny_policy, **SMALL)
    algo.fit_critic(algo.trajectory_pairs(shared_buffer)[:2])
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    actions = ["What should it return?", "I WANT TO ANSWER: def f(): pass"]
    scores = algo.score_actions(turn.messages, trajectory.reference, actions)
    prompt = critic_prompts(tiny_policy, [(turn, trajectory.reference)])[0]
    assert "In light that the final answer is: " + trajectory.reference["ground_truth"] in prompt
    encoded = algo.encode([prompt, prompt], actions)
    with torch.no_grad():
        critic = turn_logprobs(algo.critic, encoded).mean
        reference = turn_logprobs(tiny_policy.model, encoded).mean  # the critic's frozen start
    expected = (SMALL.get("critic_beta", 0.1) * (critic - reference)).tolist()
    assert scores == pytest.approx(expected, abs=1e-5)
    assert scores[0] != scores[1]


def test_candidate_pairs_rank_top_half_over_bottom_half(shared_buffer, tiny_policy):
    algo = SweetRL(tiny_policy, **SMALL)
    algo.fit_critic(algo.trajectory_pairs(shared_buffer))
    pairs = algo.candidate_pairs(shared_buffer)
    selected_turns = round(SMALL["candidate_fraction"] * shared_buffer.num_turns)
    contexts = {tuple(m["content"] for m in p.messages) for p in pairs}
    assert 0 < len(contexts) <= selected_turns
    assert len(pairs) <= selected_turns * algo.config.pairs_per_turn
    assert all(p.chosen_score > p.rejected_score for p in pairs)
    assert all(p.messages[-1]["role"] == "user" for p in pairs)


def test_ablations_change_what_the_critic_is(shared_buffer):
    trajectory = shared_buffer[0]
    turn = trajectory.turns[0]
    no_info = SweetRL(fresh_policy(), critic_uses_reference=False, **SMALL)
    no_info.fit_critic(no_info.trajectory_pairs(shared_buffer)[:2])
    blind = critic_prompts(no_info.policy, [(turn, trajectory.reference)], None)[0]
    assert trajectory.reference["ground_truth"] not in blind
    assert blind == no_info.policy.format_prompts([turn.messages])[0]

    value = SweetRL(fresh_policy(), critic_head="value", **SMALL)
    metrics = value.fit_critic(value.trajectory_pairs(shared_buffer)[:2])
    assert isinstance(value.critic, ValueHeadModel) and math.isfinite(metrics["critic/loss"])
    assert len(set(value.score_actions(turn.messages, trajectory.reference, ["a", "b c"]))) == 2

    summed = SweetRL(fresh_policy(), length_normalize=False, critic_score="last_turn", **SMALL)
    summed.fit_critic(summed.trajectory_pairs(shared_buffer)[:2])
    prompt = critic_prompts(summed.policy, [(turn, trajectory.reference)])[0]
    encoded = summed.encode([prompt], ["Which rounding?"])
    with torch.no_grad():
        expected = 0.1 * (
            turn_logprobs(summed.critic, encoded).sum
            - turn_logprobs(summed.policy.model, encoded).sum
        )
    assert summed.score_actions(
        turn.messages, trajectory.reference, ["Which rounding?"]
    ) == pytest.approx(expected.tolist(), abs=1e-5)


def test_resume_in_the_policy_stage_reuses_critic_and_candidates(shared_buffer, tmp_path):
    settings = {**SMALL, "save_steps": 1}
    clean = fresh_policy()
    clean_metrics = SweetRL(clean, **settings).fit(shared_buffer)

    interrupted = fresh_policy()
    critic_steps = math.ceil(6 / SMALL["critic_batch_size"]) * SMALL["critic_epochs"]
    algo = SweetRL(
        interrupted, output_dir=tmp_path, callbacks=[StopAfterSteps(critic_steps + 2)], **settings
    )
    algo.fit(shared_buffer)
    assert algo.stopped and (tmp_path / "stages" / "candidate_pairs.json").exists()

    resumed = fresh_policy()
    metrics = SweetRL(resumed, output_dir=tmp_path, **settings).fit(shared_buffer, resume=True)
    assert metrics["critic/heldout_pair_accuracy"] == clean_metrics["critic/heldout_pair_accuracy"]
    assert metrics["train/num_pairs"] == clean_metrics["train/num_pairs"]
    for key, value in weights(clean).items():
        torch.testing.assert_close(resumed.model.state_dict()[key], value, rtol=0, atol=1e-6)


def test_clear_errors(shared_buffer, tiny_policy):
    failures = shared_buffer.filter(lambda t: not t.success)
    with pytest.raises(ValueError, match="no trajectory pairs"):
        SweetRL(tiny_policy, **SMALL).fit(failures)
    stripped = TrajectoryBuffer(
        Trajectory.from_dict({**t.to_dict(), "reference": {}}) for t in shared_buffer
    )
    with pytest.raises(ValueError, match=r"task .*has no 'ground_truth'"):
        SweetRL(tiny_policy, **SMALL).fit(stripped)
    with pytest.raises(RuntimeError, match="fit_critic"):
        SweetRL(tiny_policy, **SMALL).score_actions([{"role": "user", "content": "hi"}], {}, ["a"])


def test_scores_after_fit_and_load_use_the_critics_frozen_start(shared_buffer, tmp_path):
    """The advantage's reference is the initial weights, not the trained policy."""
    policy = fresh_policy()
    initial = fresh_policy().model  # the same seed: the weights the critic started from
    algo = SweetRL(policy, **SMALL)
    algo.fit(shared_buffer)
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    actions = ["What should it return?", "I WANT TO ANSWER: def f(): pass"]
    prompt = critic_prompts(policy, [(turn, trajectory.reference)])[0]
    encoded = algo.encode([prompt, prompt], actions)
    with torch.no_grad():
        critic = turn_logprobs(algo.critic, encoded).mean
        start = turn_logprobs(initial, encoded).mean
        trained = turn_logprobs(policy.model, encoded).mean
    assert not torch.allclose(start, trained)  # the policy did move
    expected = (0.1 * (critic - start)).tolist()
    assert algo.score_actions(turn.messages, trajectory.reference, actions) == pytest.approx(
        expected, abs=1e-5
    )
    algo.save(tmp_path / "sweet")
    loaded = Algorithm.load(tmp_path / "sweet")
    assert loaded.score_actions(turn.messages, trajectory.reference, actions) == pytest.approx(
        expected, abs=1e-5
    )
