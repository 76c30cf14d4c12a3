"""The official pipeline's hold-out, turn-pair draw and critic tokens, each a named setting."""

import math

import numpy as np
import pytest
import torch

from agents import TransformersAgent
from algorithms import SweetRL, SweetRLConfig
from algorithms.logprobs import encode_response_spans, response_template
from algorithms.pairs import (
    TrajectoryPair,
    TurnPair,
    split_pairs,
    split_turn_pairs,
    turn_pairs,
)
from tests.algorithms.conftest import FAST
from tests.tiny_lm import make_tiny_lm


def _policy(**kwargs) -> TransformersAgent:
    model, tokenizer = make_tiny_lm(seed=0)
    return TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, seed=0, **kwargs)


def _logged(algorithm, key: str) -> list[float]:
    return [value for _, name, value in algorithm.history if name == key]


# -- hold-out --------------------------------------------------------------------------


def test_first_rule_holds_out_the_first_pairs_rounded_down(shared_buffer):
    trajectories = list(shared_buffer)
    # 67 pairs of 67 tasks: int(67 x 0.03) = 2 (round would also give 2; 50 pairs: 1.5).
    for count, expected in ((67, 2), (50, 1), (33, 0), (100, 3)):
        pairs = [
            TrajectoryPair(f"task-{i}", trajectories[0], trajectories[-1]) for i in range(count)
        ]
        train, held = split_pairs(pairs, held_out_fraction=0.03, rule="first")
        assert held == pairs[:expected]
        assert train == pairs[expected:]
    # One task's pairs may fall on both sides (the official rule splits rows, not tasks).
    pairs = [TrajectoryPair("same", trajectories[0], t) for t in trajectories[1:4]]
    train, held = split_pairs(pairs, held_out_fraction=0.5, rule="first")
    assert (len(held), len(train)) == (1, 2)
    with pytest.raises(ValueError, match="rule"):
        split_pairs(pairs, held_out_fraction=0.5, rule="last")


def test_the_official_settings_together_in_a_fit(shared_buffer):
    settings = {
        **FAST,
        "critic_learning_rate": 1e-3,
        "critic_epochs": 1,
        "critic_batch_size": 2,
        "num_candidates": 4,
        "candidate_fraction": 0.2,
        "drop_truncated_candidates": False,
        "critic_score": "token_mean",
    }
    official = {
        "held_out_fraction": 0.34,
        "held_out_rule": "first",
        "policy_held_out_fraction": 0.25,
        "pair_draw": "official",
        "critic_tokens": "official",
    }
    algorithm = SweetRL(_policy(history="content"), **settings, **official)
    metrics = algorithm.fit(shared_buffer)
    pairs = algorithm.trajectory_pairs(shared_buffer)  # 8: 4 tasks x 2 worse episodes
    assert metrics["critic/num_heldout_pairs"] == int(len(pairs) * 0.34) == 2
    assert metrics["critic/num_pairs"] == len(pairs) - 2
    assert math.isfinite(metrics["critic/heldout_pair_accuracy"])
    # The official draw: exactly 4 pairs for every turn that got candidates.
    turns = sum(len(t.turns) for t in shared_buffer)
    total = metrics["train/num_pairs"] + metrics["train/num_heldout_pairs"]
    assert total == 4 * max(1, round(0.2 * turns))
    assert metrics["train/num_heldout_pairs"] == int(total * 0.25)
    assert len(algorithm.policy_held_out_pairs) == metrics["train/num_heldout_pairs"]
    assert math.isfinite(metrics["train/heldout_reward_accuracy"])


def _turn_pairs(count: int) -> list[TurnPair]:
    return [
        TurnPair(({"role": "user", "content": f"request {i}"},), f"yes {i}", f"no {i}")
        for i in range(count)
    ]


def test_policy_hold_out_takes_a_seeded_share_rounded_down():
    pairs = _turn_pairs(100)
    train, held = split_turn_pairs(pairs, held_out_fraction=0.03, seed=0)
    assert len(held) == 3 and len(train) == 97
    assert sorted(map(pairs.index, train + held)) == list(range(100))
    assert [pairs.index(p) for p in held] == sorted(pairs.index(p) for p in held)
    assert held != pairs[:3]  # a shuffled share, as the official file's first rows are
    assert split_turn_pairs(pairs, held_out_fraction=0.03, seed=0) == (train, held)
    assert split_turn_pairs(pairs, held_out_fraction=0.03, seed=1)[1] != held
    assert split_turn_pairs(_turn_pairs(33), held_out_fraction=0.03)[1] == []
    assert split_turn_pairs(pairs, held_out_fraction=0.0) == (pairs, [])


def test_held_out_turn_pairs_are_measured_not_trained_on():
    pairs = _turn_pairs(4)
    settings = {**FAST, "batch_size": 1, "num_epochs": 1, "learning_rate": 1e-2}

    def fitted(held_out):
        algorithm = SweetRL(_policy(), **settings)
        metrics = algorithm.fit_policy(pairs[:3], held_out=held_out)
        weights = torch.cat([p.detach().flatten() for p in algorithm.policy.model.parameters()])
        return algorithm, metrics, weights

    plain, plain_metrics, plain_weights = fitted(())
    held, held_metrics, held_weights = fitted(pairs[3:])
    # The held-out pair changed nothing of the training: the same steps, the same weights.
    assert len(_logged(held, "train/loss")) == len(_logged(plain, "train/loss")) == 3
    assert torch.equal(plain_weights, held_weights)
    assert "train/heldout_reward_accuracy" not in plain_metrics
    assert held_metrics["train/heldout_reward_accuracy"] in (0.0, 0.5, 1.0)
    assert math.isfinite(held_metrics["train/heldout_dpo_loss"])
    assert _logged(held, "train/heldout_dpo_loss") == [held_metrics["train/heldout_dpo_loss"]]


# -- turn-pair draw --------------------------------------------------------------------


def _candidates(n: int) -> list[str]:
    return [f"candidate {i}" for i in range(n)]


def test_official_draw_keeps_ties_and_repeats():
    rng = np.random.default_rng(0)
    # Every candidate tied: ours finds no preference, the official script still pairs 4.
    tied = turn_pairs([], _candidates(16), [0.5] * 16, num_pairs=4, rng=rng)
    assert tied == []
    pairs = turn_pairs([], _candidates(16), [0.5] * 16, num_pairs=4, rng=rng, draw="official")
    assert len(pairs) == 4
    assert all(p.chosen_score == p.rejected_score for p in pairs)
    # Two candidates: the same pair 4 times, the higher one chosen.
    pairs = turn_pairs([], ["low", "high"], [0.0, 1.0], num_pairs=4, rng=rng, draw="official")
    assert [(p.chosen, p.rejected) for p in pairs] == [("high", "low")] * 4
    # Ours: at most the distinct combinations.
    assert len(turn_pairs([], ["low", "high"], [0.0, 1.0], num_pairs=4, rng=rng)) == 1


def test_official_draw_pairs_an_upper_half_rank_with_a_lower_half_one():
    rng = np.random.default_rng(1)
    scores = [float(s) for s in np.random.default_rng(2).permutation(16)]
    candidates = _candidates(16)
    seen = set()
    for _ in range(200):
        for pair in turn_pairs([], candidates, scores, num_pairs=4, rng=rng, draw="official"):
            assert pair.chosen_score >= 8 > pair.rejected_score  # ranks 8-15 vs 0-7
            seen.add((pair.chosen, pair.rejected))
    assert len(seen) == 64  # every upper x lower combination comes up
    # An odd count: the median belongs to the upper half (positions n // 2 .. n - 1).
    for pair in turn_pairs(
        [], ["a", "b", "c"], [0.0, 1.0, 2.0], num_pairs=40, rng=rng, draw="official"
    ):
        assert pair.rejected == "a" and pair.chosen in ("b", "c")
    # A tie across the halves: the upper-half one is chosen.
    pairs = turn_pairs([], ["a", "b"], [1.0, 1.0], num_pairs=3, rng=rng, draw="official")
    assert [(p.chosen, p.rejected) for p in pairs] == [("b", "a")] * 3
    assert turn_pairs([], ["a"], [1.0], num_pairs=3, rng=rng, draw="official") == []
    with pytest.raises(ValueError, match="draw"):
        turn_pairs([], ["a", "b"], [0.0, 1.0], rng=rng, draw="best")


# -- critic tokens ---------------------------------------------------------------------


def _dialogue(policy: TransformersAgent) -> tuple[list[str], list[str]]:
    raw = "THOUGHT: ask\nOUTPUT: Which rounding?\nOUTPUT: stray"
    turns = [
        [{"role": "user", "content": "Round a number."}],
        [
            {"role": "user", "content": "Round a number."},
            {"role": "assistant", "content": raw},
            {"role": "user", "content": "Half up."},
        ],
    ]
    return policy.format_prompts(turns), [raw, "I WANT TO ANSWER: def f(x): return x\n"]


def test_official_critic_tokens_are_the_forks_mask():
    policy = _policy(history="content")
    tokenizer = policy.tokenizer
    template = response_template(tokenizer)
    assert template == "<|im_start|>assistant"  # ChatML's header, its "\n" left to count
    prompts, actions = _dialogue(policy)
    encoded = encode_response_spans(tokenizer, [(prompts, actions)], template=template)
    assert len(encoded) == 1 and encoded.num_turns == 2
    ids = encoded.input_ids[0]
    counted = [tokenizer.decode(ids[encoded.turn_index[0] == t]) for t in range(2)]
    # The earlier turn as the last prompt shows it (history="content": the text between
    # the first two OUTPUT:), with the "\n" after its header and its end token.
    assert counted[0] == "\n Which rounding?\n<|im_end|>"
    # The last: "\n", the action without its trailing newline, " " and the end token.
    assert counted[1] == "\nI WANT TO ANSWER: def f(x): return x <|im_end|>"
    text = tokenizer.decode(ids[encoded.attention_mask[0].bool()])
    assert text == (prompts[-1] + actions[-1]).rstrip("\n") + " <|im_end|>"


def test_official_critic_tokens_lose_the_middle_of_a_long_row():
    policy = _policy()
    tokenizer = policy.tokenizer
    prompts, actions = _dialogue(policy)
    template = response_template(tokenizer)
    whole = encode_response_spans(tokenizer, [(prompts, actions)], template=template)
    length = int(whole.attention_mask.sum())
    cut = encode_response_spans(
        tokenizer, [(prompts, actions)], template=template, max_length=length - 10
    )
    assert cut.input_ids.shape[1] == length - 10
    ids, index = cut.input_ids[0], cut.turn_index[0]
    last = tokenizer.decode(ids[index == 1])
    assert last == tokenizer.decode(whole.input_ids[0][whole.turn_index[0] == 1])


def test_official_critic_tokens_reach_the_critic(shared_buffer):
    def counts(tokens):
        algorithm = SweetRL(
            _policy(history="content"),
            **FAST,
            critic_epochs=1,
            critic_score="token_mean",
            critic_tokens=tokens,
        )
        critic = algorithm.build_critic()
        dialogue = algorithm._critic_dialogue(shared_buffer[0])
        encoded = critic.encode_dialogues([(dialogue.prompts, dialogue.actions)])
        return algorithm, encoded.action_mask.sum().item(), len(dialogue.actions)

    _, ours_count, turns = counts("actions")
    official, official_count, _ = counts("official")
    # Each turn: ours counts the action and its end token; the fork's mask adds the "\n"
    # after each header and the last turn's " " (the earlier turns as their content).
    assert turns >= 2 and official_count != ours_count
    metrics = official.fit_critic(official.trajectory_pairs(shared_buffer))
    assert math.isfinite(metrics["critic/loss"])


def test_the_new_settings_are_checked():
    for key in ("held_out_rule", "pair_draw", "critic_tokens", "candidate_tokens"):
        with pytest.raises(ValueError, match=key):
            SweetRLConfig(**{key: "nonsense"})
    with pytest.raises(ValueError, match="policy_held_out_fraction"):
        SweetRLConfig(policy_held_out_fraction=1.0)
    with pytest.raises(ValueError, match="critic_tokens"):
        SweetRLConfig(critic_tokens="official", critic_head="value")
    defaults = SweetRLConfig()
    assert (defaults.held_out_rule, defaults.pair_draw, defaults.critic_tokens) == (
        "tasks",
        "distinct",
        "actions",
    )
    assert defaults.candidate_tokens == "action"
    assert defaults.policy_held_out_fraction == 0.0


# -- the candidates' score ---------------------------------------------------------------


def test_official_candidate_tokens_are_the_ranking_scripts():
    from algorithms.logprobs import encode_ranked_candidates

    policy = _policy()
    tokenizer = policy.tokenizer
    prompts, _ = _dialogue(policy)
    encoded = encode_ranked_candidates(tokenizer, [prompts[-1]] * 2, ["Which base?", "Ok."])
    counted = [
        tokenizer.decode(row[mask.bool()])
        for row, mask in zip(encoded.input_ids, encoded.action_mask)
    ]
    # After the prompt's last end token: its generation prompt, then the candidate, no end.
    assert counted == ["\n<|im_start|>assistant\nWhich base?", "\n<|im_start|>assistant\nOk."]


def test_official_candidate_tokens_reach_the_score(shared_buffer):
    from algorithms.critic_inputs import critic_prompts
    from algorithms.logprobs import encode_ranked_candidates, turn_logprobs

    algorithm = SweetRL(_policy(), **FAST, candidate_tokens="official")
    critic = algorithm.build_critic()
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    actions = ["What should it return?", "I WANT TO ANSWER: def f(): pass"]
    scores = algorithm.score_actions(turn.messages, trajectory.reference, actions)
    hinted = critic_prompts(algorithm.policy, [(turn, trajectory.reference)])[0]
    plain = algorithm.policy.format_prompts([turn.messages])[0]
    tokenizer = algorithm.policy.tokenizer
    with torch.no_grad():
        judged = turn_logprobs(
            critic.model, encode_ranked_candidates(tokenizer, [hinted] * 2, actions, max_length=384)
        ).mean
        baseline = turn_logprobs(algorithm.policy.model, algorithm.encode([plain] * 2, actions))
    # The baseline keeps the candidate and its end token (vLLM's sampled tokens).
    expected = (0.1 * (judged - baseline.mean)).tolist()
    assert scores == pytest.approx(expected, abs=1e-5)
    ours = SweetRL(_policy(), **FAST)
    ours.build_critic()
    assert ours.score_actions(turn.messages, trajectory.reference, actions) != pytest.approx(
        scores, abs=1e-5
    )
