import json

import numpy as np
import pytest

from agents import paired_difference, pooled_paired_difference
from benchmarks.harness.outcomes import episode_outcomes, outcome_buffer
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn


def _episode(task_id, reward, similarity=None):
    messages = [{"role": "user", "content": "q"}]
    turn = Turn([dict(m) for m in messages], "I WANT TO ANSWER: x", reward=reward, done=True)
    messages.append({"role": "assistant", "content": turn.action})
    metadata = {} if similarity is None else {"similarity": similarity}
    return Trajectory(task_id, [turn], messages, reward, reward == 1.0, "x", metadata=metadata)


def _backend_run(rng, tasks=30, samples=2):
    return TrajectoryBuffer(
        _episode(f"t{i}", float(rng.integers(0, 5)) / 4)
        for i in range(tasks)
        for _ in range(samples)
    )


def _frontend_run(rng, tasks=30):
    pages = []
    for i in range(tasks):
        similarity = float(rng.uniform(0.2, 0.8))
        pages.append(_episode(f"p{i}", similarity, similarity))
    return TrajectoryBuffer(pages)


def _through_json(buffer):
    return outcome_buffer(json.loads(json.dumps(episode_outcomes(buffer))))


@pytest.mark.parametrize("make", [_backend_run, _frontend_run])
def test_kept_outcomes_pool_as_the_episodes_they_came_from(make):
    rng = np.random.default_rng(0)
    runs = [(make(rng), make(rng)) for _ in range(3)]
    kept = [(_through_json(a), _through_json(b)) for a, b in runs]
    assert pooled_paired_difference(kept, seed=1) == pooled_paired_difference(runs, seed=1)
    assert paired_difference(*kept[0], seed=2) == paired_difference(*runs[0], seed=2)
    # Only what pooling reads is kept: no dialogue.
    assert all(t.turns == [] and t.messages == [] for t in kept[0][0])


def test_similarity_is_kept_only_when_every_episode_has_one():
    rng = np.random.default_rng(0)
    pages = _frontend_run(rng, tasks=3)
    assert episode_outcomes(pages)["similarity"] == [t.metadata["similarity"] for t in pages]
    mixed = TrajectoryBuffer([*pages, _episode("b", 1.0)])
    assert "similarity" not in episode_outcomes(mixed)
    assert episode_outcomes(TrajectoryBuffer()) == {"task_id": [], "reward": [], "success": []}


@pytest.mark.parametrize(
    ("outcomes", "message"),
    [
        ([1, 2], "expected columns"),
        ({"task_id": ["a"], "reward": [0.5]}, "no list of success"),
        ({"task_id": ["a", "b"], "reward": [0.5], "success": [True]}, "different lengths"),
        ({"task_id": [3], "reward": [0.5], "success": [True]}, "malformed episode"),
        ({"task_id": ["a"], "reward": ["0.5"], "success": [True]}, "malformed episode"),
        ({"task_id": ["a"], "reward": [float("nan")], "success": [True]}, "malformed episode"),
        ({"task_id": ["a"], "reward": [1.0], "success": [1]}, "malformed episode"),
        (
            {"task_id": ["a"], "reward": [1.0], "success": [True], "similarity": [None]},
            "malformed episode",
        ),
    ],
)
def test_a_damaged_record_is_a_clear_error(outcomes, message):
    with pytest.raises(ValueError, match=message) as error:
        outcome_buffer(outcomes, where="run.json, 'rft'")
    assert str(error.value).startswith("run.json, 'rft':")
