"""The imperfect scripted collaborator (the warm start's demonstrator)."""

import random

import gymnasium as gym
import pytest

import sweetrl_gym  # noqa: F401
from agents import FrontendCollaborator, ScriptedCollaborator, collect
from agents.collaborator import natural_question
from sweetrl_gym.simulators import RuleBasedSimulator
from sweetrl_gym.tasks import load_backend_tasks

FAMILIES = ["late_fee", "taxi_fare", "pass_fail", "reorder_check"]


@pytest.fixture(scope="module")
def tasks():
    return load_backend_tasks("bundled", split="test", difficulty=(1, 3), families=FAMILIES)


def play(tasks, agent, max_turns=4):
    env_kwargs = {"tasks": tasks, "max_turns": max_turns}
    return collect(
        "ColBench-Backend-v0",
        agent,
        task_indices=range(len(tasks)),
        split="test",
        env_kwargs=env_kwargs,
        progress=False,
    )


def told(trajectory):
    return " ".join(m["content"] for m in trajectory.messages if m["role"] == "user")


def references_handed(agent, tasks):
    """Play the first task once; return what ``collect`` handed ``act`` besides the batch.

    One entry per turn: the references (a list) for a privileged agent, ``None`` for any
    other. (``isinstance(agent, PrivilegedAgent)`` cannot tell: a runtime-checkable
    protocol only checks that the attributes exist, and every agent has ``act``.)
    """
    handed = []
    act = agent.act

    def spy(batch, *references, **kwargs):
        handed.append(references[0] if references else None)
        return act(batch, *references, **kwargs)

    agent.act = spy
    play(tasks[:1], agent)
    return handed


def test_is_privileged(tasks):
    env = gym.make("ColBench-Backend-v0", tasks=tasks)
    references = [env.reset(options={"task_index": i})[1]["reference"] for i in range(len(tasks))]
    # The rollout hands it each episode's reference, every turn ...
    handed = references_handed(ScriptedCollaborator(1.0, max_turns=4), tasks)
    assert len(handed) >= 2 and all(refs == [references[0]] for refs in handed)
    # ... where the Frontend collaborator, which is not privileged, gets none.
    assert references_handed(FrontendCollaborator(max_turns=1), tasks) == [None]
    # It acts on the reference: the same request with another family's reference gets
    # that family's code, and without one it cannot act at all.
    other = next(r for r in references if r["family"] != references[0]["family"])
    agent = ScriptedCollaborator(0.0)  # asks nothing: answers at once
    request = [{"role": "user", "content": tasks[0].problem_description}]
    own, theirs = (agent.act([request], [ref])[0] for ref in (references[0], other))
    assert own.startswith("I WANT TO ANSWER:") and own != theirs
    with pytest.raises(TypeError):
        agent.act([request])


def test_asking_everything_succeeds_and_asking_nothing_uses_the_defaults(tasks):
    always = play(tasks, ScriptedCollaborator(1.0, max_turns=4))
    assert sum(t.success for t in always) / len(always) >= 0.95
    never = play(tasks, ScriptedCollaborator(0.0, max_turns=4))
    for trajectory in never:
        assert trajectory.num_turns == 1  # answers at once
        # Every task has a detail that matters (difficulty >= 1): the defaults fail.
        assert not trajectory.success
    assert sum(t.reward for t in never) > 0  # the defaults still pass some tests


def test_failures_come_from_details_it_did_not_ask_about(tasks):
    episodes = play(tasks, ScriptedCollaborator(0.5, max_turns=4, seed=1))
    rate = sum(t.success for t in episodes) / len(episodes)
    assert 0.1 < rate < 0.6
    for task, trajectory in zip(tasks, episodes):
        missing = [f for f in task.facts if f.matters and f.answer not in told(trajectory)]
        # Every stated detail is used: it fails if and only if a detail that matters is missing.
        assert trajectory.success == (not missing), task.task_id


def test_questions_are_varied_and_each_reaches_its_fact(tasks):
    simulator = RuleBasedSimulator()
    rng = random.Random(0)
    phrasings, reached, asked = set(), 0, 0
    for task in tasks:
        for fact in task.facts:
            for _ in range(3):
                question = natural_question(fact, rng)
                phrasings.add(question)
                reply = simulator.reply(task, [{"role": "assistant", "content": question}])
                asked += 1
                reached += fact.answer in reply
    assert reached / asked >= 0.95
    assert len(phrasings) > 3 * len({f.key for t in tasks for f in t.facts})


def test_episodes_do_not_depend_on_the_batch(tasks):
    agent = ScriptedCollaborator(0.5, max_turns=4, seed=2)
    alone = [play([task], agent)[0].messages for task in tasks[:6]]
    together = [t.messages for t in play(tasks[:6], agent)]
    assert alone == together
    other_seed = [t.messages for t in play(tasks[:6], ScriptedCollaborator(0.5, 4, seed=3))]
    assert other_seed != together


def test_fits_its_questions_in_the_turn_limit(tasks):
    for trajectory in play(tasks, ScriptedCollaborator(1.0, max_turns=2)):
        assert trajectory.num_turns <= 2 and trajectory.turns[-1].action.startswith(
            "I WANT TO ANSWER:"
        )


def test_bad_settings_and_frontend_tasks_are_clear_errors():
    with pytest.raises(ValueError, match="ask_probability"):
        ScriptedCollaborator(1.5)
    with pytest.raises(ValueError, match="backend tasks only"):
        ScriptedCollaborator().act(
            [[{"role": "user", "content": "A page"}]], [{"ground_truth": "<html>"}]
        )


def test_plays_official_tasks_without_a_family():
    env = gym.make("ColBench-Backend-v0", split="test")
    task = env.unwrapped.tasks[0]
    reference = {**task.reference(), "family": None}
    agent = ScriptedCollaborator(0.0, max_turns=4)
    reply = agent.act([[{"role": "user", "content": task.problem_description}]], [reference])[0]
    assert reply.startswith("I WANT TO ANSWER:") and "return None" in reply
