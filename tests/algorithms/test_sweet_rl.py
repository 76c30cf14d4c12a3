"""SWEET-RL end to end and step by step, on the shared buffer and a synthetic one."""

import dataclasses
import itertools
import json
import math

import pytest
import torch

from algorithms import (
    FACTS_HINT,
    Algorithm,
    NothingToFit,
    StopAfterSteps,
    SweetRL,
    SweetRLConfig,
    ValueHeadModel,
    critic_prompts,
    turn_logprobs,
)
from algorithms.losses import token_mean_scores, trajectory_scores
from algorithms.pairs import TrajectoryPair
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn
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
    # The tiny random-init policy never samples its end token: every candidate is cut off.
    "drop_truncated_candidates": False,
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
    assert metrics["train/truncated_candidates"] == 0  # kept (drop_truncated_candidates=False)
    assert any(not torch.equal(before[k], v) for k, v in tiny_policy.model.state_dict().items())
    critic_state = algo.critic.model.state_dict()
    assert any(not torch.equal(before[k], critic_state[k]) for k in before)

    algo.save(tmp_path / "sweet")
    loaded = Algorithm.load(tmp_path / "sweet", device="cpu")
    assert isinstance(loaded, SweetRL) and loaded.config == algo.config
    for key, value in tiny_policy.model.state_dict().items():
        assert torch.equal(loaded.policy.model.state_dict()[key], value)
    for key, value in critic_state.items():
        assert torch.equal(loaded.critic.model.state_dict()[key], value)
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
    # Per-turn advantages of whole episodes: only the first turn differs between a task's
    # success and failures (the answer is the same), and that is the turn that separates.
    wins = [
        algo.turn_advantages(pair.chosen)[0] > algo.turn_advantages(pair.rejected)[0]
        for pair in algo.trajectory_pairs(synthetic_buffer(8, seed=1))
    ]
    assert sum(wins) / len(wins) >= 0.9


def test_turn_advantage_is_beta_times_mean_log_ratio(shared_buffer, tiny_policy):
    algo = SweetRL(tiny_policy, **SMALL)
    algo.fit_critic(algo.trajectory_pairs(shared_buffer)[:2])
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    actions = ["What should it return?", "I WANT TO ANSWER: def f(): pass"]
    scores = algo.score_actions(turn.messages, trajectory.reference, actions)
    prompt = critic_prompts(tiny_policy, [(turn, trajectory.reference)])[0]
    assert "In light that the final answer is: " + trajectory.reference["ground_truth"] in prompt
    hinted = algo.encode([prompt, prompt], actions)
    # The baseline (official): the sampling policy on its own prompt, without the hint.
    plain_prompt = tiny_policy.format_prompts([turn.messages])[0]
    assert "In light that" not in plain_prompt
    baseline_rows = algo.encode([plain_prompt] * 2, actions)
    with torch.no_grad():
        critic = turn_logprobs(algo.critic.model, hinted).mean
        reference = turn_logprobs(tiny_policy.model, baseline_rows).mean
    expected = (SMALL.get("critic_beta", 0.1) * (critic - reference)).tolist()
    assert scores == pytest.approx(expected, abs=1e-5)
    assert scores[0] != scores[1]


def test_a_critic_trained_under_bf16_autocast_scores_actions_in_their_context(shared_buffer):
    # Under mixed precision, accelerate's unwrap stripped transformers' decorators from the
    # critic's forward, and scoring with the prompt's cached states then ignored them:
    # the critic scored each action without its prompt (hint and dialogue).
    policy = fresh_policy()
    policy.model.to(torch.bfloat16)
    algo = SweetRL(policy, **SMALL)
    algo.fit_critic(algo.trajectory_pairs(shared_buffer))
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    actions = ["What should it return?", "Which rounding?", "I WANT TO ANSWER: def f(): pass"]
    prompt = critic_prompts(policy, [(turn, trajectory.reference)])[0]
    encoded = algo.encode([prompt] * len(actions), actions)
    plain = algo.encode(policy.format_prompts([turn.messages]) * len(actions), actions)
    with torch.no_grad():
        critic = turn_logprobs(algo.critic.model, encoded).mean.float()
        start = turn_logprobs(policy.model, plain).mean.float()
    expected = (SMALL.get("critic_beta", 0.1) * (critic - start)).tolist()
    scores = algo.score_actions(turn.messages, trajectory.reference, actions)
    assert scores == pytest.approx(expected, abs=2e-3)


def test_policy_baseline_keeps_the_sampling_policy_after_the_policy_step(
    shared_buffer, tiny_policy
):
    # Scores after fit still measure against the policy that sampled the candidates.
    algo = SweetRL(tiny_policy, **SMALL)
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    actions = ["What should it return?", "I WANT TO ANSWER: def f(): pass"]
    algo.fit_critic(algo.trajectory_pairs(shared_buffer))
    before = algo.score_actions(turn.messages, trajectory.reference, actions)
    algo.fit_policy(algo.candidate_pairs(shared_buffer))
    after = algo.score_actions(turn.messages, trajectory.reference, actions)
    assert after == pytest.approx(before, abs=1e-5)


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
    # Each pair names the task of the episode its turn came from.
    turns_of = {
        (t.task_id, tuple(m["content"] for m in turn.messages))
        for t in shared_buffer
        for turn in t.turns
    }
    assert all((p.task_id, tuple(m["content"] for m in p.messages)) in turns_of for p in pairs)


def test_the_facts_hint_names_the_facts_that_matter_in_the_users_words(shared_buffer):
    trajectory = shared_buffer[0]
    facts = trajectory.reference["facts"]
    matter = [fact["answer"] for fact in facts if fact["matters"]]
    assert matter and len(matter) < len(facts)  # the task has facts of both kinds
    algo = SweetRL(fresh_policy(), hint_template=FACTS_HINT, **SMALL)
    turn = trajectory.turns[0]
    prompt = critic_prompts(algo.policy, [(turn, trajectory.reference)], FACTS_HINT)[0]
    assert all(f"- {answer}" in prompt for answer in matter)
    assert not any(fact["answer"] in prompt for fact in facts if not fact["matters"])
    assert trajectory.reference["ground_truth"] not in prompt
    # The critic trains and scores on it like on the paper's hint.
    metrics = algo.fit_critic(algo.trajectory_pairs(shared_buffer)[:2])
    assert math.isfinite(metrics["critic/loss"])
    scores = algo.score_actions(turn.messages, trajectory.reference, ["a", "b c"])
    assert len(set(scores)) == 2
    # A reference without facts (a Frontend one) says what it has instead.
    with pytest.raises(ValueError, match=r"has no 'hidden_facts'.*'skeleton'"):
        critic_prompts(algo.policy, [(turn, {"skeleton": "x"})], FACTS_HINT)


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
    assert isinstance(value.critic.model, ValueHeadModel) and math.isfinite(metrics["critic/loss"])
    assert value.critic.start_model is None  # a value has no start to measure against
    assert len(set(value.score_actions(turn.messages, trajectory.reference, ["a", "b c"]))) == 2

    summed = SweetRL(fresh_policy(), length_normalize=False, critic_score="last_turn", **SMALL)
    summed.fit_critic(summed.trajectory_pairs(shared_buffer)[:2])
    prompt = critic_prompts(summed.policy, [(turn, trajectory.reference)])[0]
    plain = summed.policy.format_prompts([turn.messages])[0]
    encoded = summed.encode([prompt], ["Which rounding?"])
    with torch.no_grad():
        expected = 0.1 * (
            turn_logprobs(summed.critic.model, encoded).sum
            - turn_logprobs(summed.policy.model, summed.encode([plain], ["Which rounding?"])).sum
        )
    assert summed.score_actions(
        turn.messages, trajectory.reference, ["Which rounding?"]
    ) == pytest.approx(expected.tolist(), abs=1e-5)


def test_resume_in_the_policy_stage_reuses_critic_and_candidates(shared_buffer, tmp_path):
    settings = {**SMALL, "save_steps": 1}
    clean = fresh_policy()
    uninterrupted = SweetRL(clean, **settings)
    clean_metrics = uninterrupted.fit(shared_buffer)

    interrupted = fresh_policy()
    critic_steps = math.ceil(6 / SMALL["critic_batch_size"]) * SMALL["critic_epochs"]
    algo = SweetRL(
        interrupted, output_dir=tmp_path, callbacks=[StopAfterSteps(critic_steps + 2)], **settings
    )
    algo.fit(shared_buffer)
    assert algo.stopped and (tmp_path / "stages" / "candidate_pairs.json").exists()

    resumed = fresh_policy()
    again = SweetRL(resumed, output_dir=tmp_path, **settings)
    metrics = again.fit(shared_buffer, resume=True)
    # The history is the whole run's, as one launch logs it: the critic's steps and its
    # accuracies (computed again after the resume) once each, then every policy step.
    assert [(step, key) for step, key, _ in again.history] == [
        (step, key) for step, key, _ in uninterrupted.history
    ]
    assert metrics["critic/heldout_pair_accuracy"] == clean_metrics["critic/heldout_pair_accuracy"]
    assert metrics["train/num_pairs"] == clean_metrics["train/num_pairs"]
    for key, value in weights(clean).items():
        torch.testing.assert_close(resumed.model.state_dict()[key], value, rtol=0, atol=1e-6)


def test_candidate_sampling_stopped_midway_resumes_where_it_stopped(shared_buffer, tmp_path):
    def policy_writing(calls, *, stop_at=None):
        """A policy whose every candidate is a new text; it raises at call ``stop_at``."""
        policy = fresh_policy()
        policy.batch_size = 2

        def generate(prompts, *, n=1, temperature=None, top_p=None, max_new_tokens=None):
            if len(calls) == stop_at:
                raise KeyboardInterrupt
            done = sum(len(call) for call in calls)
            calls.append(list(prompts))
            return [[f"Is it {done + i}.{k}?" for k in range(n)] for i in range(len(prompts))]

        policy.generate = generate
        return policy

    clean: list[list[str]] = []
    SweetRL(policy_writing(clean), output_dir=tmp_path / "clean", **SMALL).fit(shared_buffer)
    assert len(clean) >= 3
    calls: list[list[str]] = []  # the stopped run's calls, then the resumed run's
    with pytest.raises(KeyboardInterrupt):
        algo = SweetRL(policy_writing(calls, stop_at=2), output_dir=tmp_path / "run", **SMALL)
        algo.fit(shared_buffer)
    algo = SweetRL(policy_writing(calls), output_dir=tmp_path / "run", **SMALL)
    algo.fit(shared_buffer, resume=True)
    assert calls == clean  # each turn sampled once: the resumed run went on from the stop
    pairs = [
        json.loads((tmp_path / run / "stages" / "candidate_pairs.json").read_text())
        for run in ("clean", "run")
    ]
    assert pairs[0] == pairs[1]
    assert not list(tmp_path.rglob("*.chunks"))


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


def test_scores_after_fit_and_load_use_the_initial_weights(shared_buffer, tmp_path):
    """The advantage's baseline is the initial weights, not the trained policy."""
    policy = fresh_policy()
    initial = fresh_policy().model  # the same seed: the weights the critic started from
    algo = SweetRL(policy, **SMALL)
    algo.fit(shared_buffer)
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    actions = ["What should it return?", "I WANT TO ANSWER: def f(): pass"]
    prompt = critic_prompts(policy, [(turn, trajectory.reference)])[0]
    encoded = algo.encode([prompt, prompt], actions)
    plain = policy.format_prompts([turn.messages])[0]  # the sampling policy's own prompt
    baseline_rows = algo.encode([plain, plain], actions)
    with torch.no_grad():
        critic = turn_logprobs(algo.critic.model, encoded).mean
        start = turn_logprobs(initial, baseline_rows).mean
        trained = turn_logprobs(policy.model, baseline_rows).mean
    assert not torch.allclose(start, trained)  # the policy did move
    expected = (0.1 * (critic - start)).tolist()
    assert algo.score_actions(turn.messages, trajectory.reference, actions) == pytest.approx(
        expected, abs=1e-5
    )
    advantages = algo.turn_advantages(trajectory)
    assert len(advantages) == len(trajectory.turns) > 1
    assert all(isinstance(a, float) and math.isfinite(a) for a in advantages)
    assert advantages[1] == pytest.approx(
        algo.score_actions(turn.messages, trajectory.reference, [turn.action])[0], abs=1e-6
    )
    assert algo.turn_advantages(trajectory) == advantages  # deterministic
    algo.save(tmp_path / "sweet")
    loaded = Algorithm.load(tmp_path / "sweet")
    assert loaded.score_actions(turn.messages, trajectory.reference, actions) == pytest.approx(
        expected, abs=1e-5
    )
    assert loaded.turn_advantages(trajectory) == pytest.approx(advantages, abs=1e-6)


# -- issue 15: truncated candidates, the official token-mean score, per-turn advantages --


def test_token_mean_scores_weigh_turns_by_their_tokens_and_agree_with_the_sum_on_one_turn():
    means = torch.tensor([1.0, -0.5, 0.25, 2.0], requires_grad=True)
    tokens = torch.tensor([2, 6, 5, 3])
    index = torch.tensor([0, 0, 1, 2])  # trajectory 0: two turns of different lengths
    scores = token_mean_scores(means, tokens, index, 4)
    # (2 x 1.0 + 6 x -0.5) / 8 tokens; one-turn trajectories keep their value; none: 0.
    assert scores.tolist() == pytest.approx([-0.125, 0.25, 2.0, 0.0])
    summed = trajectory_scores(means, index, 4)
    assert summed[0].item() == pytest.approx(0.5)  # the turn-sum: another sign
    assert scores[1:].tolist() == pytest.approx(summed[1:].tolist())
    scores[0].backward()
    assert means.grad.tolist() == pytest.approx([0.25, 0.75, 0.0, 0.0])
    with pytest.raises(ValueError, match="turn_num_tokens must be >= 0"):
        token_mean_scores(means, torch.tensor([1, -1, 1, 1]), index, 4)
    with pytest.raises(ValueError, match="shape mismatch"):
        token_mean_scores(means, tokens[:3], index, 4)


def test_critic_score_setting_is_validated():
    assert SweetRLConfig().critic_score == "turn_sum"
    assert SweetRLConfig().drop_truncated_candidates
    with pytest.raises(ValueError, match=r"critic_score must be one of \('turn_sum', 'token_mean'"):
        SweetRLConfig(critic_score="mean")
    with pytest.raises(ValueError, match="needs length_normalize=True"):
        SweetRLConfig(critic_score="token_mean", length_normalize=False)
    with pytest.raises(ValueError, match="needs critic_head='log_ratio'"):
        SweetRLConfig(critic_score="token_mean", critic_head="value")


def _action_tokens(algo, trajectory):
    """How many tokens of each turn's action the critic scores (its end token included)."""
    prompts = critic_prompts(
        algo.policy, [(turn, trajectory.reference) for turn in trajectory.turns]
    )
    encoded = algo.encode(prompts, [turn.action for turn in trajectory.turns])
    return turn_logprobs(algo.policy.model, encoded).num_tokens.tolist()


def _loss_terms(algo, trajectory):
    """Each turn's advantage as the critic's loss has it: against its start, both hinted."""
    prompts = critic_prompts(
        algo.policy, [(turn, trajectory.reference) for turn in trajectory.turns]
    )
    encoded = algo.encode(prompts, [turn.action for turn in trajectory.turns])
    with torch.no_grad():
        critic = turn_logprobs(algo.critic.model, encoded).mean
        start = turn_logprobs(algo.critic.start_model, encoded).mean
    return (0.1 * (critic - start)).tolist()


def test_token_mean_critic_score_ranks_trajectories_by_one_mean_over_their_tokens(shared_buffer):
    turn_sum = SweetRL(fresh_policy(), **SMALL)
    turn_sum.fit_critic(turn_sum.trajectory_pairs(shared_buffer)[:2])
    # The same trained critic, scoring trajectories the official way.
    token_mean = SweetRL(turn_sum.policy, critic_score="token_mean", **SMALL)
    token_mean.build_critic().model.load_state_dict(turn_sum.critic.model.state_dict())

    first = shared_buffer[0]
    assert turn_sum.turn_advantages(first) == token_mean.turn_advantages(first)  # per turn
    scores = {}
    for i, trajectory in enumerate(shared_buffer):
        advantages = _loss_terms(turn_sum, trajectory)
        tokens = _action_tokens(turn_sum, trajectory)
        mean = sum(a * n for a, n in zip(advantages, tokens)) / sum(tokens)
        scores[i] = (sum(advantages), mean)
    # Pairs of episodes that the two scores order differently (unequal turns and lengths).
    disagree = [
        (i, j)
        for i, j in itertools.permutations(scores, 2)
        if scores[i][0] - scores[j][0] > 1e-4 and scores[j][1] - scores[i][1] > 1e-4
    ]
    assert disagree
    pairs = [TrajectoryPair("any", shared_buffer[i], shared_buffer[j]) for i, j in disagree[:4]]
    assert turn_sum.critic_accuracy(pairs) == 1.0
    assert token_mean.critic_accuracy(pairs) == 0.0
    metrics = SweetRL(fresh_policy(), critic_score="token_mean", **SMALL).fit_critic(
        turn_sum.trajectory_pairs(shared_buffer)[:2]
    )
    assert math.isfinite(metrics["critic/loss"])


def _fixed_candidates(policy, complete, cut_off):
    """Replace the policy's sampling: the same candidates for every prompt."""
    calls = []

    def generate(prompts, *, n=1, temperature=None, top_p=None, max_new_tokens=None):
        calls.append(max_new_tokens)
        assert n == len(complete) + len(cut_off)
        return [[*complete, *cut_off] for _ in prompts]

    policy.generate = generate
    return calls


def test_candidates_cut_off_at_max_new_tokens_are_neither_chosen_nor_rejected():
    policy = fresh_policy()
    complete = [
        "What should it return?",
        "Which rounding?",
        "Is the list sorted?",
        "Any threshold?",
    ]
    limit = max(len(policy.tokenizer(c, add_special_tokens=False)["input_ids"]) for c in complete)
    limit += 1
    cut_off = ["I WANT TO ANSWER: def f(x):\n    return sorted(x", "Let me think about " * 8]
    assert all(
        len(policy.tokenizer(c, add_special_tokens=False)["input_ids"]) >= limit for c in cut_off
    )
    calls = _fixed_candidates(policy, complete, cut_off)
    buffer = synthetic_buffer(2)
    settings = {
        **SMALL,
        "drop_truncated_candidates": True,
        "critic_epochs": 1,
        "num_candidates": 6,
        "candidate_fraction": 0.25,
        "candidate_max_new_tokens": limit,
    }
    algo = SweetRL(policy, **settings)
    metrics = algo.fit(buffer)
    selected_turns = round(0.25 * buffer.num_turns)
    assert calls and set(calls) == {limit}
    assert metrics["train/truncated_candidates"] == selected_turns * len(cut_off)
    assert metrics["train/num_pairs"] > 0
    pairs = algo.candidate_pairs(buffer)
    assert pairs and all({p.chosen, p.rejected} <= set(complete) for p in pairs)

    # Kept, they do take part (the setting is what leaves them out).
    kept = fresh_policy()
    _fixed_candidates(kept, complete, cut_off)
    keep = SweetRL(kept, **{**settings, "drop_truncated_candidates": False})
    keep.fit_critic(keep.trajectory_pairs(buffer))
    used = {action for p in keep.candidate_pairs(buffer) for action in (p.chosen, p.rejected)}
    assert used & set(cut_off)


def test_fit_says_so_when_every_candidate_was_cut_off(tiny_policy):
    algo = SweetRL(tiny_policy, **{**SMALL, "drop_truncated_candidates": True, "critic_epochs": 1})
    with pytest.raises(NothingToFit, match=r"cut off at max_new_tokens.*drop_truncated_candidates"):
        algo.fit(synthetic_buffer(2))  # 8 new tokens: the tiny policy never stops in time


def _asking_twice(trajectory):
    """The trajectory with a second question before its answer (three turns)."""
    first, answer = trajectory.turns
    follow_up = "And what about negative numbers?"
    context_3 = [
        *answer.messages,
        {"role": "assistant", "content": follow_up},
        {"role": "user", "content": "Leave them out."},
    ]
    turns = [
        first,
        Turn(messages=answer.messages, action=follow_up),
        Turn(messages=context_3, action=answer.action, reward=answer.reward, done=True),
    ]
    messages = [*context_3, {"role": "assistant", "content": answer.action}]
    return dataclasses.replace(trajectory, turns=turns, messages=messages)


def test_question_pairs_only_at_the_first_turns_and_answer_pairs_after():
    policy = fresh_policy()
    questions = ["What should it return?", "Which rounding?"]
    answers = ["I WANT TO ANSWER: def f(x): return 1", "I WANT TO ANSWER: def f(x): return x"]
    _fixed_candidates(policy, questions, answers)
    buffer = TrajectoryBuffer([_asking_twice(t) for t in synthetic_buffer(3)])
    settings = {**SMALL, "critic_epochs": 1, "num_candidates": 4, "candidate_fraction": 1.0}
    algo = SweetRL(policy, **settings, question_turns=1)
    metrics = algo.fit(buffer)

    def agent_messages(messages):
        return sum(m["role"] == "assistant" for m in messages)

    # Every first turn and every answer turn gets candidates; the second questions none.
    answer_turns = [turn for t in buffer for turn in t.turns if agent_messages(turn.messages) > 0]
    answered = [turn for turn in answer_turns if "I WANT TO ANSWER" in turn.action]
    assert len(answered) < len(answer_turns)  # some later turns asked: they get nothing
    assert metrics["train/question_candidates"] == len(answered) * len(questions)
    pairs = algo.policy_pairs
    first = [p for p in pairs if agent_messages(p.messages) == 0]
    later = [p for p in pairs if agent_messages(p.messages) > 0]
    assert first and any({p.chosen, p.rejected} & set(questions) for p in first)
    assert later and all({p.chosen, p.rejected} <= set(answers) for p in later)
    contexts = {tuple(map(str, turn.messages)) for turn in answered}
    assert {tuple(map(str, p.messages)) for p in later} <= contexts


def test_candidates_on_every_turn_of_the_first_share_of_the_trajectories():
    """The official selection: the buffer's first trajectories in order (its file order)."""
    policy = fresh_policy()
    candidates = ["What should it return?", "I WANT TO ANSWER: def f(x): return x"]
    sampled = []

    def generate(prompts, *, n=1, temperature=None, top_p=None, max_new_tokens=None):
        sampled.extend(prompts)
        return [list(candidates) for _ in prompts]

    policy.generate = generate
    buffer = TrajectoryBuffer([_asking_twice(t) for t in synthetic_buffer(4)])
    settings = {**SMALL, "critic_epochs": 1, "num_candidates": 2, "candidate_fraction": 0.25}
    algo = SweetRL(policy, **settings, candidate_selection="trajectories")
    algo.fit_critic(algo.trajectory_pairs(buffer))
    pairs = algo.candidate_pairs(buffer)
    # 12 trajectories of 3 turns: the first quarter of them, every turn of each.
    assert (len(buffer), buffer.num_turns) == (12, 36)
    assert len(sampled) == 3 * 3
    prompts = [algo.policy_prompts(t.turns) for t in buffer]
    # A turn after the first is one trajectory's own (its first is shared by its task's).
    drawn = [rows for rows in prompts if set(rows[1:]) & set(sampled)]
    assert drawn == prompts[:3]
    assert sorted(sampled) == sorted(row for rows in drawn for row in rows)
    assert pairs and len({tuple(map(str, p.messages)) for p in pairs}) > 3


def test_candidate_selection_is_checked():
    with pytest.raises(ValueError, match="candidate_selection"):
        SweetRLConfig(candidate_selection="episodes")


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1"])
def test_question_turns_is_checked(bad):
    with pytest.raises(ValueError, match="question_turns"):
        SweetRLConfig(question_turns=bad)


def test_a_policy_step_needs_a_loss():
    from algorithms import SweetRLConfig

    with pytest.raises(ValueError, match="both 0"):
        SweetRLConfig(dpo_coef=0.0, nll_coef=0.0)
    with pytest.raises(ValueError, match="dpo_coef"):
        SweetRLConfig(dpo_coef=-0.5)


@pytest.mark.parametrize(
    "setting", ["nll_turns", "mixed_pairs", "pair_gap_quantile", "critic_baseline", "pair_turns"]
)
def test_a_removed_setting_is_refused_as_an_older_versions(setting):
    with pytest.raises(
        TypeError, match=rf"no setting '{setting}' any more; removed: .*older version"
    ):
        SweetRLConfig.from_dict({setting: None})
    with pytest.raises(
        ValueError, match=r"critic_score='sum' is the name an older version.*turn_sum"
    ):
        SweetRLConfig(critic_score="sum")


def test_a_saved_sweet_rl_of_an_older_version_is_refused_naming_the_file(tiny_policy, tmp_path):
    SweetRL(tiny_policy, **SMALL).save(tmp_path / "sweet")
    path = tmp_path / "sweet" / "algorithm.json"
    record = json.loads(path.read_text())
    record["config"]["pair_turns"] = "all"  # what every SweetRL of an older version saved
    path.write_text(json.dumps(record))
    with pytest.raises(
        TypeError, match=r"algorithm.json: SweetRLConfig has no setting 'pair_turns'"
    ):
        Algorithm.load(tmp_path / "sweet")
    record["config"].pop("pair_turns")
    record["config"]["critic_score"] = "sum"
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"algorithm.json: critic_score='sum'.*older version"):
        Algorithm.load(tmp_path / "sweet")


def test_critic_model_starts_the_critic_from_a_model_folder(tiny_policy, tmp_path):
    from tests.tiny_lm import make_tiny_lm

    other, _ = make_tiny_lm(seed=1)
    other.save_pretrained(str(tmp_path / "critic"))  # no tokenizer: it reads the policy's
    algo = SweetRL(tiny_policy, **SMALL, critic_model=str(tmp_path / "critic"))
    critic = algo.build_critic()
    assert critic is algo.critic and critic is algo.build_critic()  # built once
    for name, tensor in other.state_dict().items():
        assert torch.equal(critic.model.state_dict()[name], tensor), name


def test_fit_policy_on_its_own_resumes_after_a_crash_only_when_asked(tmp_path):
    """A policy step on given pairs (as the controls run it) loses nothing on a crash."""
    from algorithms import TurnPair
    from tests.algorithms.test_training import RaiseAfter

    messages = ({"role": "user", "content": "Write f(x) for my shop."},)
    pairs = [
        TurnPair(messages, "What should it return?", "Which rounding?", 0.2, 0.1),
        TurnPair(messages, "Is the list sorted?", "Any threshold?", 0.3, 0.0),
        TurnPair(messages, "I WANT TO ANSWER: def f(x): return x", "Hello?", 0.5, 0.1),
        TurnPair(messages, "Which currency?", "Why?", 0.4, 0.2),
    ]
    settings = {**SMALL, "batch_size": 1, "num_epochs": 2, "save_steps": 2}  # 8 steps
    clean = fresh_policy()
    SweetRL(clean, **settings).fit_policy(pairs)

    kept_nothing = tmp_path / "on-its-own"
    SweetRL(fresh_policy(), output_dir=kept_nothing, **settings).fit_policy(pairs)
    assert not kept_nothing.exists()  # without resume, a step on its own writes nothing

    run = tmp_path / "run"
    crashed = SweetRL(fresh_policy(), output_dir=run, callbacks=[RaiseAfter(5)], **settings)
    with pytest.raises(KeyboardInterrupt):
        crashed.fit_policy(pairs, resume=True)
    assert (run / "stages" / "policy" / "checkpoint-4").is_dir()
    assert (run / "stages" / "policy_pairs.json").exists()  # the reference log-probs, once

    resumed = fresh_policy()  # a new process starts from the initial weights
    algo = SweetRL(resumed, output_dir=run, **settings)
    metrics = algo.fit_policy(pairs, resume=True)
    assert math.isfinite(metrics["train/loss"])
    # Steps 1-4 as the crashed launch logged them (to its checkpoint), 5-8 from this one.
    losses = [step for step, key, _ in algo.history if key == "train/loss"]
    assert losses == list(range(1, 9))
    for key, value in weights(clean).items():
        torch.testing.assert_close(resumed.model.state_dict()[key], value, rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="other data or settings"):
        SweetRL(fresh_policy(), output_dir=run, **settings).fit_policy(pairs[:3], resume=True)
