import numpy as np
import pytest

from algorithms import TurnPair, preference_dataset, split_pairs, trajectory_pairs, turn_pairs
from algorithms.pairs import confident_pairs
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


def test_max_pairs_keeps_the_widest_gaps_in_order():
    import random

    rng = random.Random(0)
    episodes = []
    for task, rewards in enumerate([(1.0, 0.9, 0.2), (1.0, 0.6, 0.95), (1.0, 0.2, 0.7)]):
        for reward in rewards:
            episodes.append(dialogue(task, "I like turtles and long walks.", rng))
            episodes[-1].reward = reward
    every = trajectory_pairs(episodes, success_only=False)
    gaps = [round(p.chosen.reward - p.rejected.reward, 2) for p in every]
    assert gaps == [0.1, 0.8, 0.4, 0.05, 0.8, 0.3]
    kept = trajectory_pairs(episodes, success_only=False, max_pairs=3)
    assert [round(p.chosen.reward - p.rejected.reward, 2) for p in kept] == [0.8, 0.4, 0.8]
    assert [p.task_id for p in kept] == [every[1].task_id, every[2].task_id, every[4].task_id]
    # a tie at the cut goes to the earlier pair
    assert [
        p.rejected.reward for p in trajectory_pairs(episodes, success_only=False, max_pairs=1)
    ] == [0.2]
    assert trajectory_pairs(episodes, success_only=False, max_pairs=10) == every
    assert trajectory_pairs(episodes, success_only=False, max_pairs=0) == []
    with pytest.raises(ValueError, match="max_pairs"):
        trajectory_pairs(episodes, success_only=False, max_pairs=-1)


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


def test_turn_pairs_with_groups_pair_within_a_group_only():
    # Six questions, two answers; the best and the worst candidates are the answers, so
    # one ranking of all eight would oppose them to questions.
    candidates = [*(f"q{i}" for i in range(6)), "A-best", "A-worst"]
    scores = [0.1, 0.5, -0.2, 0.3, 0.0, 0.2, 0.9, -0.9]
    kinds = [c.startswith("A") for c in candidates]
    for seed in range(20):
        pairs = turn_pairs(
            [], candidates, scores, num_pairs=2, rng=np.random.default_rng(seed), groups=kinds
        )
        assert all(p.chosen[0] == p.rejected[0] for p in pairs)
        answers = [p for p in pairs if p.chosen.startswith("A")]
        questions = [p for p in pairs if p.chosen.startswith("q")]
        # The two pairs shared 6:2 round to 2 and 0, and a group of two gets its one.
        assert [(p.chosen, p.rejected) for p in answers] == [("A-best", "A-worst")]
        assert len(questions) == 2
        top = {"q1", "q3", "q5"}  # each group is halved on its own
        assert all(p.chosen in top and p.rejected not in top for p in questions)
    # A group of one has nobody to pair with.
    assert turn_pairs([], ["q", "A"], [1.0, 0.0], rng=np.random.default_rng(0), groups=[0, 1]) == []
    # One group is the plain ranking, draw for draw.
    plain = turn_pairs([], candidates, scores, num_pairs=3, rng=np.random.default_rng(1))
    grouped = turn_pairs(
        [], candidates, scores, num_pairs=3, rng=np.random.default_rng(1), groups=[0] * 8
    )
    assert plain == grouped
    with pytest.raises(ValueError, match="8 candidates but 2 group labels"):
        turn_pairs([], candidates, scores, rng=np.random.default_rng(0), groups=[0, 1])


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


def test_confident_pairs_keep_the_widest_gaps_of_each_kind():
    # Question gaps 0.1-0.4, answer gaps 1-4: one threshold over both would keep answers only.
    questions = [TurnPair((), f"q{i}", "q", chosen_score=0.1 * i) for i in range(1, 5)]
    answers = [TurnPair((), f"a{i}", "a", chosen_score=float(i)) for i in range(1, 5)]
    pairs = [p for pair in zip(questions, answers) for p in pair]
    kinds = ["questions", "answers"] * 4
    kept = confident_pairs(pairs, kinds, 0.5)
    assert [p.chosen for p in kept] == ["q3", "a3", "q4", "a4"]  # each kind's wider half, in order
    assert confident_pairs(pairs, kinds, 0.0) == pairs
    assert [p.chosen for p in confident_pairs(pairs, kinds, 0.9)] == ["q4", "a4"]
    assert confident_pairs([], [], 0.5) == []
    with pytest.raises(ValueError, match="quantile"):
        confident_pairs(pairs, kinds, 1.0)
    with pytest.raises(ValueError, match="8 pairs but 2 kind labels"):
        confident_pairs(pairs, kinds[:2], 0.5)
