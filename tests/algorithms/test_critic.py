"""SWEET-RL's critic, each way of keeping it: chosen once from the config, fitted, saved, loaded."""

import math

import pytest
import torch

from algorithms import Algorithm, SweetRL
from algorithms.critic import AdapterCritic, PolicyCopyCritic, SeparateCritic
from tests.algorithms.conftest import FAST
from tests.algorithms.test_training import fresh_policy, weights
from tests.tiny_lm import make_tiny_lm

SMALL = {
    **FAST,
    "critic_learning_rate": 1e-3,
    "critic_epochs": 1,
    "critic_batch_size": 2,
    "num_candidates": 2,
    "drop_truncated_candidates": False,  # the tiny policy's samples never end
}
LORA = {"lora_rank": 4, "lora_alpha": 8.0}
# Each way of keeping the critic, by its settings: (settings, class, has a start of its own).
WAYS = {
    "policy-copy": ({}, PolicyCopyCritic, True),
    "policy-copy-value-head": ({"critic_head": "value"}, PolicyCopyCritic, False),
    "lora-adapter": (LORA, AdapterCritic, False),
    "separate-model": ({"critic_model": "CRITIC"}, SeparateCritic, True),
    "separate-model-value-head": (
        {"critic_model": "CRITIC", "critic_head": "value"},
        SeparateCritic,
        False,
    ),
}
ACTIONS = ["What should it return?", "I WANT TO ANSWER: def f(): pass", "Which rounding?"]


@pytest.fixture(scope="module")
def critic_folder(tmp_path_factory):
    """A model of its own to start the critic from (another seed than the policy's)."""
    folder = tmp_path_factory.mktemp("critic-model")
    make_tiny_lm(seed=1)[0].save_pretrained(str(folder))  # no tokenizer: it reads the policy's
    return str(folder)


def _state(module):
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_of_keeping_the_critic_fits_saves_and_loads(
    way, shared_buffer, critic_folder, tmp_path
):
    settings, klass, own_start = WAYS[way]
    if "lora_rank" in settings:
        pytest.importorskip("peft")
    settings = {k: critic_folder if v == "CRITIC" else v for k, v in settings.items()}
    algo = SweetRL(fresh_policy(), **SMALL, **settings)
    critic = algo.build_critic()
    assert type(critic) is klass and algo.build_critic() is critic  # chosen and built once
    assert (critic.start_model is not None) == own_start
    before = _state(critic.model)
    start = None if critic.start_model is None else _state(critic.start_model)

    metrics = algo.fit_critic(algo.trajectory_pairs(shared_buffer)[:2])
    assert math.isfinite(metrics["critic/loss"])
    assert not _same(before, _state(critic.model))  # it trained...
    if start is not None:  # ...its start did not
        assert _same(start, _state(critic.start_model))
        assert not any(p.requires_grad for p in critic.start_model.parameters())
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    scores = algo.score_actions(turn.messages, trajectory.reference, ACTIONS)
    assert len(set(scores)) == len(ACTIONS)

    algo.save(tmp_path / "saved")
    loaded = Algorithm.load(tmp_path / "saved", device="cpu")
    assert type(loaded.critic) is klass
    assert _same(_state(critic.model), _state(loaded.critic.model))
    if start is not None:
        assert _same(start, _state(loaded.critic.start_model))
    else:
        assert loaded.critic.start_model is None
        assert not (tmp_path / "saved" / "critic_start").exists()
    assert loaded.score_actions(turn.messages, trajectory.reference, ACTIONS) == pytest.approx(
        scores, abs=1e-5
    )


def test_the_policy_copys_start_is_the_policy_as_it_was_built_whatever_it_does_next(
    shared_buffer,
):
    """Its start is taken with it: no later step of the policy (in order or not) moves it."""
    algo = SweetRL(fresh_policy(), **SMALL)
    initial = weights(algo.policy)
    critic = algo.build_critic()
    algo.fit_critic(algo.trajectory_pairs(shared_buffer)[:2])
    trajectory = shared_buffer[0]
    turn = trajectory.turns[1]
    scores = algo.score_actions(turn.messages, trajectory.reference, ACTIONS)
    with torch.no_grad():  # the policy moves, here by a step of no SWEET-RL's
        for parameter in algo.policy.model.parameters():
            parameter.add_(0.1)
    assert _same(initial, _state(critic.start_model))
    assert algo.score_actions(turn.messages, trajectory.reference, ACTIONS) == pytest.approx(
        scores, abs=1e-6
    )
