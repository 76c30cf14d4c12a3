import numpy as np
import pytest

from algorithms import TurnPair, preference_dataset, split_pairs, trajectory_pairs, turn_pairs
from tests.algorithms.synthetic import dialogue, synthetic_buffer


def test_best_trajectory_is_paired_with_each_strictly_worse_one(shared_buffer):
    pairs = trajectory_pairs(shared_buffer)
    assert len(pairs) == 8  # 4 tasks x (oracle vs random, oracle vs immediate)
    for pair in pairs:
        assert pair.chosen.task_id == pair.rejected.task_id == pair.task_id
        assert pair.chosen.success and pair.chosen.reward > pair.rejected.reward


def test_success_only_and_reward_gap(shared_buffer):
    import random

    rng = random.Random(0)
    partial = [dialogue(0, "Hello! Nice weather today, isn't it?", rng) for _ in range(2)]
    partial[0].reward = 0.5  # better, but not a success
    assert trajectory_pairs(partial) == []
    assert len(trajectory_pairs(partial, success_only=False)) == 1
    assert trajectory_pairs(partial, success_only=False, min_reward_gap=0.5) == []
    ties = [dialogue(0, "I like turtles and long walks.", rng) for _ in range(3)]
    assert trajectory_pairs(ties, success_only=False) == []


def test_split_holds_out_whole_tasks():
    pairs = trajectory_pairs(synthetic_buffer(10))
    train, held = split_pairs(pairs, held_out_fraction=0.2, seed=0)
    assert {p.task_id for p in train}.isdisjoint({p.task_id for p in held})
    assert len({p.task_id for p in held}) == 2 and len(train) + len(held) == len(pairs)
    assert split_pairs(pairs, held_out_fraction=0.2, seed=0) == (train, held)
    assert split_pairs(pairs, held_out_fraction=0.0)[1] == []
    with pytest.raises(ValueError, match="held_out_fraction"):
        split_pairs(pairs, held_out_fraction=1.0)


def test_turn_pairs_take_top_half_against_bottom_half():
    candidates = [f"c{i}" for i in range(8)]
    scores = [0.1, 0.9, 0.5, 0.3, 0.8, 0.0, 0.7, 0.2]
    pairs = turn_pairs(
        [{"role": "user", "content": "hi"}],
        candidates,
        scores,
        num_pairs=4,
        rng=np.random.default_rng(0),
    )
    top = {"c1", "c4", "c6", "c2"}
    assert len(pairs) == 4 and len({(p.chosen, p.rejected) for p in pairs}) == 4
    assert all(p.chosen in top and p.rejected not in top for p in pairs)
    assert all(p.chosen_score > p.rejected_score for p in pairs)


def test_turn_pairs_skip_ties_and_short_lists():
    rng = np.random.default_rng(0)
    assert turn_pairs([], ["a", "b", "c"], [1.0, 1.0, 1.0], rng=rng) == []
    assert len(turn_pairs([], ["a", "b", "c"], [3.0, 2.0, 1.0], num_pairs=4, rng=rng)) == 1
    with pytest.raises(ValueError, match="2 candidates but 1 scores"):
        turn_pairs([], ["a", "b"], [1.0], rng=rng)


def test_pairs_export_as_trl_preference_datasets(shared_buffer, tiny_policy):
    from trl.data_utils import is_conversational, maybe_apply_chat_template

    context = ({"role": "user", "content": "Write f."}, {"role": "assistant", "content": "Name?"})
    context += ({"role": "user", "content": "It is f."},)
    turn = TurnPair(context, "I WANT TO ANSWER: def f(): 1", "What else?", 0.4, -0.2)
    rows = preference_dataset([turn])
    assert rows.column_names == ["prompt", "chosen", "rejected"]
    (row,) = rows
    assert row["prompt"] == list(context) and is_conversational(row)
    assert row["chosen"] == [{"role": "assistant", "content": turn.chosen}]
    assert row["rejected"] == [{"role": "assistant", "content": turn.rejected}]
    # TRL renders it with the model's chat template: the prompt asks for the reply.
    text = maybe_apply_chat_template(row, tiny_policy.tokenizer)
    assert text["prompt"].rstrip().endswith("assistant") and "It is f." in text["prompt"]
    assert text["chosen"].startswith(turn.chosen)

    # With a policy: its exact prompt strings, system prompt included (TRL's standard format).
    (standard,) = preference_dataset([turn], tiny_policy)
    assert standard == {
        "prompt": tiny_policy.format_prompts([list(context)])[0],
        "chosen": turn.chosen,
        "rejected": turn.rejected,
    }

    # Multi-turn DPO's pairs: the shared request, then each episode's rest of the chat.
    pairs = trajectory_pairs(shared_buffer, success_only=True)
    exported = preference_dataset(pairs)
    assert len(exported) == len(pairs) > 0
    for pair, row in zip(pairs, exported):
        assert row["prompt"] == pair.chosen.messages[:1] == pair.rejected.messages[:1]
        assert row["prompt"] + row["chosen"] == pair.chosen.messages
        assert row["prompt"] + row["rejected"] == pair.rejected.messages
    with pytest.raises(TypeError, match="conversational format only"):
        preference_dataset(pairs, tiny_policy)
    with pytest.raises(TypeError, match="pair 1 is a str"):
        preference_dataset([turn, "pair"])


def test_the_official_frontend_pairs_every_two_samples_that_differ_by_at_least_the_gap():
    import random

    from algorithms import MultiTurnDPOConfig, SweetRLConfig

    rng = random.Random(0)
    samples = [dialogue(0, f"Sample {i}.", rng) for i in range(4)]
    # Rewards and gap exact in binary (the official compares the same float64 values).
    for trajectory, reward in zip(samples, [0.25, 0.75, 0.5, 0.625], strict=True):
        trajectory.reward, trajectory.success = reward, False
    name = {id(t): i for i, t in enumerate(samples)}

    def indices(pairs):
        return [(name[id(p.chosen)], name[id(p.rejected)]) for p in pairs]

    official = trajectory_pairs(samples, success_only=False, min_reward_gap=0.25, rule="all")
    # Sample order, j < j2, the higher one chosen; a gap of exactly the minimum is kept.
    assert indices(official) == [(1, 0), (2, 0), (3, 0), (1, 2)]
    # Ours: the best against each that is worse by more than the gap.
    ours = trajectory_pairs(samples, success_only=False, min_reward_gap=0.25)
    assert indices(ours) == [(1, 0)]
    assert indices(trajectory_pairs(samples, success_only=False, rule="all")) == [
        (1, 0),
        (2, 0),
        (3, 0),
        (1, 2),
        (1, 3),
        (3, 2),
    ]
    samples[2].reward = samples[0].reward
    assert (2, 0) not in indices(trajectory_pairs(samples, success_only=False, rule="all"))
    with pytest.raises(ValueError, match="rule must be one of"):
        trajectory_pairs(samples, rule="every")
    for config in (SweetRLConfig, MultiTurnDPOConfig):
        assert config().pair_rule == "best"
        with pytest.raises(ValueError, match="pair_rule"):
            config(pair_rule="every")
