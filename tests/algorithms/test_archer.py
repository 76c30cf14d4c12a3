"""ArCHer: transitions, critic prompts, TD learning signal, V's sampled target, the token-mean
actor loss, fit, save and load."""

from __future__ import annotations

import json
import math

import pytest
import torch

from algorithms import (
    REFERENCE_HINT,
    Algorithm,
    ArCHer,
    ArCHerConfig,
    advantage_weighted_policy_loss,
    build_transitions,
    critic_prompts,
    encode_turns,
    turn_logprobs,
)
from algorithms.batches import CriticTrajectory, collate_critic_trajectories
from algorithms.losses import sampled_value_targets
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
        # V(s') at the buffer's action: with sampled actions the bootstrapped value is
        # that of the untrained policy's random texts, which this test cannot know.
        value_samples=0,
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
    assert archer.critic is None  # built by the first step that needs it
    critic_before = _state(archer._ensure_critic())
    policy_before = _state(tiny_policy.model)
    metrics = archer.fit(shared_buffer)

    assert archer.config.value_samples == 2  # the default: V's target from policy samples
    expected = {
        "critic/loss",
        "critic/q_loss",
        "critic/v_loss",
        "critic/q_mean",
        "critic/v_mean",
        "critic/v_target_mean",
        "train/loss",
        "train/advantage_mean",
    }
    assert expected <= metrics.keys()
    assert all(math.isfinite(value) for value in metrics.values())
    assert metrics["critic/num_transitions"] == shared_buffer.num_turns
    assert _changed(critic_before, archer.critic)
    assert _changed(policy_before, tiny_policy.model)

    loaded = Algorithm.load(archer.save(tmp_path / "archer"), device="cpu")
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
    critic_lm = archer._ensure_critic().lm.state_dict()
    for name, tensor in other.state_dict().items():
        assert torch.equal(critic_lm[name], tensor), name
    assert not torch.equal(
        critic_lm["model.embed_tokens.weight"], tiny_policy.model.model.embed_tokens.weight
    )

    loaded = Algorithm.load(archer.save(tmp_path / "saved"), device="cpu")
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
    with pytest.raises(ValueError, match="value_samples"):
        ArCHerConfig(value_samples=-1)
    with pytest.raises(ValueError, match="value_max_new_tokens"):
        ArCHerConfig(value_max_new_tokens=0)
    config = ArCHerConfig()
    assert (config.gamma, config.tau, config.learning_rate) == (0.95, 0.1, 1e-6)


def test_one_sequence_per_trajectory_reads_the_values_of_each_turns_prefix(
    shared_buffer, tiny_policy
) -> None:
    """Q and V read inside the whole dialogue equal those of each turn's prefix alone."""
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


def _min_q(archer: ArCHer, states: list[str], actions: list[str]) -> torch.Tensor:
    """``min(Q1, Q2)`` of the critic as it is now, one (state, action) row at a time."""
    rows = encode_turns(archer.critic_tokenizer, states, actions)
    with torch.no_grad():
        q = archer._ensure_critic()(rows.input_ids, rows.attention_mask)
    return torch.minimum(q[:, 0], q[:, 1])


def test_sampled_value_targets_average_the_min_q_over_samples() -> None:
    q1 = torch.tensor([[1.0, 3.0], [0.0, -2.0]], requires_grad=True)
    q2 = torch.tensor([[2.0, 0.0], [1.0, -1.0]])
    targets = sampled_value_targets(q1, q2)
    assert targets.tolist() == [0.5, -1.0]
    assert not targets.requires_grad
    with pytest.raises(ValueError, match="num_samples"):
        sampled_value_targets(torch.zeros(3), torch.zeros(3))
    with pytest.raises(ValueError, match="shape mismatch"):
        sampled_value_targets(torch.zeros(2, 2), torch.zeros(2, 3))


@pytest.mark.parametrize("branched", [True, False], ids=["branches", "plain-rows"])
def test_v_target_is_the_mean_min_q_of_actions_sampled_from_the_policy(
    tiny_policy, monkeypatch, branched
) -> None:
    if not branched:  # a critic whose attention takes no branch mask
        monkeypatch.setattr("algorithms.archer.branch_rows_supported", lambda model: False)
    buffer = TrajectoryBuffer(
        [
            _trajectory("a", [("Which name?", "solve"), ("I WANT TO ANSWER: x", "")], [0.0, 1.0]),
            _trajectory("b", [("I WANT TO ANSWER: y", "")], [0.0]),
        ]
    )
    tiny_policy.system_prompt = "Write Python functions."  # short texts: a fast test
    turns = [turn for _, turn in buffer.turns()]
    prompts = tiny_policy.format_prompts([turn.messages for turn in turns])
    # A deterministic policy: distinct actions per turn and sample, so a sample scored
    # against another turn's state would show.
    samples = {p: [f"Is input {i} an int?", f"Return {i * 7}?"] for i, p in enumerate(prompts)}
    calls = []

    def generate(batch, *, n=1, temperature=None, top_p=None, max_new_tokens=None):
        calls.append((list(batch), n, temperature, max_new_tokens))
        return [samples[p][:n] for p in batch]

    monkeypatch.setattr(tiny_policy, "generate", generate)
    settings = {**FAST, "critic_epochs": 1, "critic_batch_size": 8}  # one step: the start's target
    archer = ArCHer(tiny_policy, **settings, value_temperature=0.7, value_max_new_tokens=5)
    states = archer.critic_inputs(buffer)
    # The target starts as the critic: the logged target is that of the untrained critic.
    sampled = torch.stack(
        [_min_q(archer, states, [samples[p][k] for p in prompts]) for k in range(2)], 1
    )
    expected = sampled.mean(dim=1)
    at_buffer_action = _min_q(archer, states, [turn.action for turn in turns])
    assert not torch.allclose(expected, at_buffer_action, atol=1e-3)
    v = archer.critic_values(buffer)[:, 2]

    metrics = archer.fit_critic(buffer)
    assert metrics["critic/v_target_mean"] == pytest.approx(float(expected.mean()), abs=1e-5)
    # Each state's own target (a mean would not see targets paired with the wrong state).
    assert metrics["critic/v_loss"] == pytest.approx(float(((v - expected) ** 2).mean()), abs=1e-5)
    # Sampled once for the fit, every turn's prompt as the actor reads it.
    assert [p for batch, *_ in calls for p in batch] == prompts
    assert {tuple(call[1:]) for call in calls} == {(2, 0.7, 5)}

    # value_samples=0: the old target, min Q at the buffer's action; nothing is sampled.
    calls.clear()
    old = ArCHer(tiny_policy, **settings, value_samples=0)
    metrics = old.fit_critic(buffer)
    assert metrics["critic/v_target_mean"] == pytest.approx(
        float(at_buffer_action.mean()), abs=1e-5
    )
    assert metrics["critic/v_loss"] == pytest.approx(
        float(((v - at_buffer_action) ** 2).mean()), abs=1e-5
    )
    assert calls == []


def test_sampled_actions_read_as_branches_score_as_their_own_rows(tiny_policy) -> None:
    """The target's one branched pass reads what the dialogue pass and one row per sample read."""
    buffer = TrajectoryBuffer(
        [
            _trajectory(
                "a", [("Which name?", "solve"), ("Any limits?", "no"), ("Done", "")], [0, 0, 1]
            ),
            _trajectory("b", [("Inputs?", "ints"), ("I WANT TO ANSWER: y", "")], [0.0, 1.0]),
            _trajectory("c", [("I WANT TO ANSWER: z", "")], [0.0]),
        ]
    )
    tiny_policy.system_prompt = "Write Python functions."  # short texts: a fast test
    archer = ArCHer(tiny_policy, **FAST)
    archer.critic_values(buffer)  # builds the critic
    states = archer.critic_inputs(buffer)
    # Trajectory b's chat rewrites its history (its second state shows another first
    # action), so it is read one row per turn, branches and all.
    states[4] = states[4].replace("Inputs?", "Which inputs?")
    # Different lengths per sample and turn; one empty action (its end token alone).
    sampled = [(f"Is {t} an int?", "x" * (3 * t), "") for t in range(len(states))]
    lengths = [len(t.turns) for t in buffer]
    items, start = [], 0
    for trajectory, length in zip(buffer, lengths):
        turns = range(start, start + length)
        items.append(
            CriticTrajectory(
                states=tuple(states[t] for t in turns),
                actions=tuple(turn.action for turn in trajectory.turns),
                rewards=tuple(float(turn.reward) for turn in trajectory.turns),
                dones=tuple(turn.done for turn in trajectory.turns),
                value_actions=tuple(sampled[t] for t in turns),
            )
        )
        start += length

    def collate(branched: bool):
        return collate_critic_trajectories(
            archer.encode_dialogues,
            archer.encode,
            branch_value_actions=branched,
        )(items)

    branched, plain = collate(True), collate(False)
    assert branched.branched is not None and not branched.value_actions
    assert plain.branched is None and len(plain.value_actions) == 3
    assert len(branched.tokens) == 4  # a and c packed, b one row per turn
    # The states are read once: fewer tokens than the dialogues plus a row per sample.
    plain_tokens = sum(int(t.attention_mask.sum()) for t in (plain.tokens, *plain.value_actions))
    assert int((branched.branched.branch >= 0).sum()) < 0.6 * plain_tokens
    with torch.no_grad():
        got, expected = (
            branched.read_with_value_actions(archer.critic),
            plain.read_with_value_actions(archer.critic),
        )
    assert got[2].shape == expected[2].shape == (6, 3, 3)
    for mine, theirs in zip(got, expected):
        torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-5)
    assert not torch.allclose(got[2][:, 0], got[2][:, 1], atol=1e-3)  # samples read apart
    # And the same as one unpadded row of each (state, sampled action) alone.
    for turn, (state, item_actions) in enumerate(zip(states, sampled)):
        for k, action in enumerate(item_actions):
            row = archer.encode([state], [action])
            with torch.no_grad():
                alone = archer.critic(row.input_ids, row.attention_mask)[0]
            torch.testing.assert_close(got[2][turn, k], alone, rtol=0, atol=1e-5)


def test_actor_loss_is_a_token_mean_of_advantage_weighted_log_probs() -> None:
    def loss(lengths, advantages, per_token):
        logps = torch.tensor([n * lp for n, lp in zip(lengths, per_token)], requires_grad=True)
        value = advantage_weighted_policy_loss(
            logps, torch.tensor(advantages), num_tokens=torch.tensor(lengths)
        )
        value.backward()
        return value.item(), logps.grad

    value, grad = loss([4, 2], [2.0, -1.0], [-0.5, -1.0])
    assert value == pytest.approx(-(2.0 * 4 * -0.5 + -1.0 * 2 * -1.0) / 6)
    # The same per-token terms over actions twice as long: the same value.
    assert loss([8, 4], [2.0, -1.0], [-0.5, -1.0])[0] == pytest.approx(value)
    assert loss([10], [3.0], [-0.25])[0] == pytest.approx(loss([5], [3.0], [-0.25])[0])
    # The gradient points where the mean over turns points (one positive factor apart).
    logps = torch.tensor([-2.0, -2.0], requires_grad=True)
    advantage_weighted_policy_loss(logps, torch.tensor([2.0, -1.0])).backward()
    torch.testing.assert_close(grad, logps.grad * 2 / 6)
    with pytest.raises(ValueError, match="at least one token"):
        advantage_weighted_policy_loss(
            torch.zeros(2), torch.ones(2), num_tokens=torch.zeros(2, dtype=torch.long)
        )


def test_fit_logs_the_actor_loss_as_a_mean_over_action_tokens(shared_buffer, tiny_policy) -> None:
    from algorithms.models import clone_model

    buffer = TrajectoryBuffer(shared_buffer[::4])  # a success and two failures
    tiny_policy.system_prompt = "Ask questions, then answer."  # short texts: a fast test
    start = clone_model(tiny_policy.model)  # the policy the first actor step sees
    archer = ArCHer(
        tiny_policy,
        **{**FAST, "batch_size": 8},  # one actor step: its loss is the start's
        critic_learning_rate=1e-3,
        critic_epochs=1,
        critic_batch_size=8,
        value_samples=1,
    )
    archer.fit(buffer)
    logged = [value for _, key, value in archer.history if key == "train/loss"]
    assert len(logged) == 1

    advantages = torch.tensor(archer.advantages(buffer), dtype=torch.float64)
    weights = (advantages - advantages.mean()) / (advantages.std(unbiased=False) + 1e-8)
    turns = [turn for _, turn in buffer.turns()]
    rows = encode_turns(
        tiny_policy.tokenizer,
        archer.policy_prompts(turns),
        [turn.action for turn in turns],
        max_length=archer.config.max_length,
    )
    with torch.no_grad():
        logps = turn_logprobs(start, rows)
    weighted = float((weights * logps.sum.double()).sum())
    assert logged[0] == pytest.approx(-weighted / float(logps.num_tokens.sum()), rel=1e-4)
    assert logged[0] != pytest.approx(-weighted / len(turns), rel=0.5)  # not the turn mean


def test_value_actions_stopped_midway_resume_where_they_stopped(
    shared_buffer, tiny_policy, tmp_path, monkeypatch
) -> None:
    buffer = TrajectoryBuffer(shared_buffer[::4])
    tiny_policy.system_prompt = "Ask questions, then answer."  # short texts: a fast test
    tiny_policy.batch_size = 2
    prompts = tiny_policy.format_prompts([turn.messages for _, turn in buffer.turns()])
    calls: list[list[str]] = []

    def generate(batch, *, n=1, temperature=None, top_p=None, max_new_tokens=None):
        if len(calls) == 2 and stop:
            raise KeyboardInterrupt  # the run is stopped in its third chunk
        done = sum(len(batch) for batch in calls)  # a distinct action per sampled prompt
        calls.append(list(batch))
        return [[f"Is it {done + i}?"] * n for i in range(len(batch))]

    monkeypatch.setattr(tiny_policy, "generate", generate)
    settings = {**FAST, "critic_epochs": 1, "critic_batch_size": 8, "output_dir": tmp_path}
    stop = True
    with pytest.raises(KeyboardInterrupt):
        ArCHer(tiny_policy, **settings).fit(buffer)
    stop = False
    ArCHer(tiny_policy, **settings).fit(buffer, resume=True)
    # Every prompt was sampled once: the resumed fit started at the chunk that stopped.
    assert [p for batch in calls for p in batch] == prompts
    stored = json.loads((tmp_path / "stages" / "archer_value_actions.json").read_text())
    assert [a for trajectory in stored for a in trajectory] == [
        [f"Is it {i}?"] * 2 for i in range(len(prompts))
    ]
    assert not list(tmp_path.rglob("*.chunks"))  # the journal goes once the result is stored
