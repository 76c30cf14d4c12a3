"""ArCHer: transitions, critic prompts, TD learning signal, fit, save and load."""

from __future__ import annotations

import math

import pytest
import torch

from algorithms import (
    REFERENCE_HINT,
    Algorithm,
    ArCHer,
    ArCHerConfig,
    build_transitions,
    critic_prompts,
)
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn
from tests.algorithms.conftest import FAST
from tests.tiny_lm import make_tiny_lm


def _trajectory(
    task_id: str, exchanges: list[tuple[str, str]], rewards: list[float], *, done: bool = True
) -> Trajectory:
    """A trajectory from (agent action, human reply) pairs; the last reply is ignored."""
    messages = [{"role": "user", "content": f"Write the function for task {task_id}."}]
    turns = []
    for index, (action, reply) in enumerate(exchanges):
        last = index == len(exchanges) - 1
        turns.append(
            Turn(messages=list(messages), action=action, reward=rewards[index], done=done and last)
        )
        messages = [*messages, {"role": "assistant", "content": action}]
        if not last:
            messages.append({"role": "user", "content": reply})
    return Trajectory(
        task_id=task_id,
        turns=turns,
        messages=messages,
        reward=rewards[-1],
        success=rewards[-1] == 1.0,
        answer=exchanges[-1][0],
        reference={"ground_truth": f"def solve_{task_id}(): return 1"},
    )


def _state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _changed(before: dict[str, torch.Tensor], model: torch.nn.Module) -> bool:
    return any(not torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_transitions_chain_turns_within_each_trajectory() -> None:
    buffer = TrajectoryBuffer(
        [
            _trajectory(
                "a", [("Q1?", "yes"), ("Q2?", "no"), ("I WANT TO ANSWER: x", "")], [0.0, 0.0, 1.0]
            ),
            _trajectory("b", [("Q?", "maybe"), ("still asking", "")], [0.0, 0.25], done=False),
        ]
    )
    transitions = build_transitions(buffer)
    turns = [turn for _, turn in buffer.turns()]
    assert [t.turn for t in transitions] == turns
    assert [t.reward for t in transitions] == [0.0, 0.0, 1.0, 0.0, 0.25]
    # The last turn of each trajectory is terminal, even when cut off without done.
    assert [t.done for t in transitions] == [False, False, True, False, True]
    assert [t.next_turn for t in transitions] == [turns[1], turns[2], None, turns[4], None]
    assert [t.task_id for t in transitions] == ["a"] * 3 + ["b"] * 2
    assert transitions[3].reference == {"ground_truth": "def solve_b(): return 1"}


def test_critic_prompts_add_the_ground_truth_only_when_asked(tiny_policy) -> None:
    trajectory = _trajectory("t", [("Q?", "yes"), ("I WANT TO ANSWER: x", "")], [0.0, 1.0])
    items = [(turn, trajectory.reference) for turn in trajectory.turns]
    plain = critic_prompts(tiny_policy, items, None)
    assert plain == tiny_policy.format_prompts([turn.messages for turn in trajectory.turns])
    hinted = critic_prompts(tiny_policy, items, REFERENCE_HINT)
    assert all("In light that the final answer is: def solve_t(): return 1." in p for p in hinted)
    assert all(tiny_policy.system_prompt in p for p in hinted)
    with pytest.raises(ValueError, match="ground_truth"):
        critic_prompts(tiny_policy, [(trajectory.turns[0], {"tests": []})], REFERENCE_HINT)


def test_archer_critic_sees_the_reference_only_with_critic_uses_reference(tiny_policy) -> None:
    buffer = TrajectoryBuffer(
        [_trajectory("t", [("Q?", "yes"), ("I WANT TO ANSWER: x", "")], [0.0, 1.0])]
    )
    with_reference = ArCHer(tiny_policy, critic_uses_reference=True).critic_inputs(buffer)
    without = ArCHer(tiny_policy).critic_inputs(buffer)
    assert len(with_reference) == len(without) == 2
    assert all("def solve_t(): return 1" in text for text in with_reference)
    assert not any("def solve_t" in text or "In light that" in text for text in without)

    buffer[0].reference = {}
    with pytest.raises(ValueError, match=r"trajectory 0 \(task 't'\).*ground_truth"):
        ArCHer(tiny_policy, critic_uses_reference=True).fit_critic(buffer)


def test_critic_bootstraps_the_final_reward_to_the_first_turn(tiny_policy) -> None:
    # Both first turns earn 0; only the TD bootstrap through V(s') tells them apart.
    buffer = TrajectoryBuffer(
        [
            _trajectory(
                "t", [("Which name?", "Call it solve."), ("I WANT TO ANSWER: good", "")], [0.0, 1.0]
            ),
            _trajectory(
                "t",
                [("Anything else?", "I don't know."), ("I WANT TO ANSWER: bad", "")],
                [0.0, 0.0],
            ),
        ]
    )
    tiny_policy.system_prompt = "Write Python functions."  # short texts: a fast test
    gamma = 0.5
    archer = ArCHer(
        tiny_policy,
        **FAST,
        gamma=gamma,
        tau=0.5,
        critic_learning_rate=3e-3,
        critic_epochs=60,
        critic_batch_size=4,
    )
    archer.fit_critic(buffer)
    values = archer.critic_values(buffer)  # rows: success turn 1, 2; failure turn 1, 2
    q = torch.minimum(values[:, 0], values[:, 1])
    assert q[1] > 0.8 and abs(float(q[3])) < 0.2  # the final rewards
    assert abs(float(q[0]) - gamma * 1.0) < 0.2  # discounted, bootstrapped value of success
    assert abs(float(q[2])) < 0.2
    advantages = archer.advantages(buffer)
    assert advantages == pytest.approx((q - values[:, 2]).tolist())


def test_fit_trains_both_models_and_save_load_round_trips(
    shared_buffer, tiny_policy, tmp_path
) -> None:
    tiny_policy.system_prompt = "Ask questions, then answer."  # short texts: a fast test
    archer = ArCHer(
        tiny_policy,
        **{**FAST, "batch_size": 8},
        critic_learning_rate=1e-3,
        critic_epochs=1,
        critic_batch_size=8,
    )
    critic_before = _state(archer.critic)
    policy_before = _state(tiny_policy.model)
    metrics = archer.fit(shared_buffer)

    expected = {
        "critic/loss",
        "critic/q_loss",
        "critic/v_loss",
        "critic/q_mean",
        "critic/v_mean",
        "train/loss",
        "train/advantage_mean",
    }
    assert expected <= metrics.keys()
    assert all(math.isfinite(value) for value in metrics.values())
    assert metrics["critic/num_transitions"] == shared_buffer.num_turns
    assert _changed(critic_before, archer.critic)
    assert _changed(policy_before, tiny_policy.model)

    loaded = Algorithm.load(archer.save(tmp_path / "archer"))
    assert isinstance(loaded, ArCHer)
    assert loaded.config == archer.config
    for name, tensor in tiny_policy.model.state_dict().items():
        assert torch.equal(loaded.policy.model.state_dict()[name], tensor), name
    loaded_critic = loaded.critic.state_dict()
    for name, tensor in archer.critic.state_dict().items():
        assert torch.equal(loaded_critic[name], tensor), name
    assert loaded.advantages(shared_buffer[:2]) == archer.advantages(shared_buffer[:2])


def test_critic_model_initialises_the_critic_and_is_saved_with_it(tiny_policy, tmp_path) -> None:
    other, tokenizer = make_tiny_lm(seed=1)
    other.save_pretrained(str(tmp_path / "critic_lm"))
    tokenizer.save_pretrained(str(tmp_path / "critic_lm"))
    archer = ArCHer(tiny_policy, critic_model=tmp_path / "critic_lm")
    assert archer.config.critic_model == str(tmp_path / "critic_lm")
    critic_lm = archer.critic.lm.state_dict()
    for name, tensor in other.state_dict().items():
        assert torch.equal(critic_lm[name], tensor), name
    assert not torch.equal(
        critic_lm["model.embed_tokens.weight"], tiny_policy.model.model.embed_tokens.weight
    )

    loaded = Algorithm.load(archer.save(tmp_path / "saved"))
    loaded_critic = loaded.critic.state_dict()
    for name, tensor in archer.critic.state_dict().items():
        assert torch.equal(loaded_critic[name], tensor), name
    buffer = TrajectoryBuffer(
        [_trajectory("t", [("Q?", "yes"), ("I WANT TO ANSWER: x", "")], [0.0, 1.0])]
    )
    assert loaded.advantages(buffer) == pytest.approx(archer.advantages(buffer))


def test_config_rejects_typos_and_bad_values(tiny_policy) -> None:
    with pytest.raises(TypeError, match="gamma"):
        ArCHer(tiny_policy, gama=0.9)
    with pytest.raises(ValueError, match="tau"):
        ArCHerConfig(tau=1.5)
    with pytest.raises(ValueError, match="critic_epochs"):
        ArCHerConfig(critic_epochs=0)
    config = ArCHerConfig()
    assert (config.gamma, config.tau, config.learning_rate) == (0.95, 0.1, 1e-6)


def test_one_sequence_per_trajectory_reads_the_values_of_each_turns_prefix(
    shared_buffer, tiny_policy
) -> None:
    """Q and V read inside the whole dialogue equal those of each turn's prefix alone."""
    from algorithms import encode_turns
    from algorithms.models import encode_texts

    archer = ArCHer(tiny_policy, **{**FAST, "max_length": 4096})  # every dialogue packs
    buffer = shared_buffer[:3]
    values = archer.critic_values(buffer)
    turns = [turn for _, turn in buffer.turns()]
    states = archer.critic_inputs(buffer)
    assert len(states) == len(turns) == values.shape[0]
    tokenizer = tiny_policy.tokenizer
    with torch.no_grad():
        pairs = encode_turns(tokenizer, states, [t.action for t in turns])  # ends at eos
        q = archer.critic(pairs.input_ids, pairs.attention_mask)
        v = archer.critic(*encode_texts(tokenizer, states, max_length=10_000))
    torch.testing.assert_close(values[:, 0], q[:, 0], rtol=0, atol=1e-5)
    torch.testing.assert_close(values[:, 1], q[:, 1], rtol=0, atol=1e-5)
    torch.testing.assert_close(values[:, 2], v[:, 2], rtol=0, atol=1e-5)
