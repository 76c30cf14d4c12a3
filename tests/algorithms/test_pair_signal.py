"""SWEET-RL's turn pairs judged by the simulated human's own replies."""

from algorithms.pair_signal import (
    environment_ranked_pairs,
    judge_turn_pairs,
    turn_pair_signal,
)
from algorithms.pairs import TurnPair
from sweetrl_gym.trajectory import Trajectory
from tests.conftest import make_tasks


def episode(task):
    messages = [{"role": "user", "content": task.problem_description}]
    return Trajectory(
        task_id=task.task_id,
        turns=[],
        messages=messages,
        reward=0.0,
        success=False,
        answer="",
        reference=task.reference(),
    )


def test_pairs_are_judged_by_the_facts_the_human_would_tell_and_the_tests(sandbox):
    task = next(t for t in make_tasks(12) if any(f.matters and f.keywords for f in t.facts))
    fact = next(f for f in task.facts if f.matters and f.keywords)
    context = ({"role": "user", "content": task.problem_description},)
    good = f"What about the {fact.keywords[0]}?"
    vague = "Can you tell me your favourite colour?"
    told = (
        *context,
        {"role": "assistant", "content": good},
        {"role": "user", "content": fact.answer},
    )

    def pair(chosen, rejected, messages=context, task_id=task.task_id):
        return TurnPair(messages, chosen, rejected, 1.0, 0.0, task_id)

    wrong = "I WANT TO ANSWER: def f(*args):\n    return None"
    right = f"I WANT TO ANSWER: {task.ground_truth}"
    counts = turn_pair_signal(
        [
            pair(good, vague),  # right
            pair(vague, good),  # wrong
            pair(vague, vague + " Really?"),  # no signal either way
            pair(good, vague, messages=told),  # the fact is told already: no gain
            pair(right, wrong),  # the reference passes every test, None passes fewer
            pair(wrong, right),
            pair(right, right),
            pair(right, good),  # a question against an answer: not judged
            pair(good, vague, task_id="not-in-the-buffer"),
        ],
        [episode(task)],
        sandbox=sandbox,
    )
    assert counts == {
        "question_pairs": 4,
        "chosen_obtains_more": 1,
        "chosen_obtains_fewer": 1,
        "same": 2,
        "answer_pairs": 3,
        "chosen_passes_more": 1,
        "chosen_passes_fewer": 1,
        "same_tests": 1,
        "mixed_pairs": 1,
        "unknown_task": 1,
    }


def test_environment_ranked_pairs_keep_what_the_environment_tells_apart_better_first(sandbox):
    task = next(t for t in make_tasks(12) if any(f.matters and f.keywords for f in t.facts))
    fact = next(f for f in task.facts if f.matters and f.keywords)
    context = ({"role": "user", "content": task.problem_description},)
    good, vague = f"What about the {fact.keywords[0]}?", "Can you tell me your favourite colour?"
    right = f"I WANT TO ANSWER: {task.ground_truth}"
    wrong = "I WANT TO ANSWER: def f(*args):\n    return None"
    pairs = [
        TurnPair(context, good, vague, 0.9, 0.1, task.task_id),  # right: kept as it is
        TurnPair(context, vague, good, 0.8, 0.2, task.task_id),  # wrong: turned round
        TurnPair(context, vague, vague + " Really?", 0.7, 0.3, task.task_id),  # no signal
        TurnPair(context, wrong, right, 0.6, 0.4, task.task_id),  # wrong: turned round
        TurnPair(context, right, good, 0.5, 0.5, task.task_id),  # not judged
        TurnPair(context, good, vague, 0.5, 0.5, "not-in-the-buffer"),
    ]
    buffer = [episode(task)]
    assert judge_turn_pairs(pairs, buffer, sandbox=sandbox) == [
        "chosen_obtains_more",
        "chosen_obtains_fewer",
        "same",
        "chosen_passes_fewer",
        "mixed_pairs",
        "unknown_task",
    ]
    ranked = environment_ranked_pairs(pairs, buffer, sandbox=sandbox)
    assert ranked == [
        pairs[0],
        TurnPair(context, good, vague, 0.2, 0.8, task.task_id),
        TurnPair(context, right, wrong, 0.4, 0.6, task.task_id),
    ]


def test_frontend_pairs_are_judged_by_similarity_and_by_the_design_facts_told():
    from sweetrl_gym.render import render_page
    from sweetrl_gym.simulators import PageSketch
    from sweetrl_gym.simulators.visual import describe_design
    from sweetrl_gym.tasks import load_frontend_tasks

    task = load_frontend_tasks("bundled", "test")[0]
    target = render_page(task.ground_truth)
    skeleton = PageSketch.from_blocks(target.blocks).to_html()
    reference = {"ground_truth": task.ground_truth, "skeleton": skeleton}
    buffer = [Trajectory(task.task_id, [], [], 0.5, False, "", reference=reference, metadata={})]
    context = ({"role": "user", "content": task.problem_description},)
    blank = "Here you go: <html><body></body></html>"
    close = f"A draft: {skeleton}"

    def pair(chosen, rejected, messages=context):
        return TurnPair(messages, chosen, rejected, 1.0, 0.0, task.task_id)

    described = (
        *context,
        {"role": "assistant", "content": "What should it look like?"},
        {"role": "user", "content": describe_design(target.blocks)},
    )
    pairs = [
        pair(close, blank),  # the skeleton of the target is far closer than a blank page
        pair(blank, close),
        pair(close, close),
        pair("What colours?", blank),  # a question against a page: not judged
        # Asked again once the design was described, neither question obtains a new fact.
        pair("What colours should it use?", "Which sections?", described),
        TurnPair(context, close, blank, 1.0, 0.0, "another-task"),
    ]
    assert judge_turn_pairs(pairs, buffer) == [
        "chosen_passes_more",
        "chosen_passes_fewer",
        "same_tests",
        "mixed_pairs",
        "same",
        "unknown_task",
    ]
    counts = turn_pair_signal(pairs[:5], buffer)
    assert (counts["answer_pairs"], counts["chosen_passes_more"]) == (3, 1)
    assert counts["question_pairs"] == 1 and counts["mixed_pairs"] == 1
    ranked = environment_ranked_pairs(pairs[:5], buffer)
    assert [(p.chosen, p.rejected) for p in ranked] == [(close, blank), (close, blank)]
    # Pages are judged by the environment's own scorer: one that prefers blank pages (a
    # stand-in for CLIP) turns the page verdicts round.
    from sweetrl_gym.similarity import perceptual_similarity

    def prefers_blank(page, target):
        return 1.0 - perceptual_similarity(page, target)

    verdicts = judge_turn_pairs(pairs[:3], buffer, similarity=prefers_blank)
    assert verdicts == ["chosen_passes_fewer", "chosen_passes_more", "same_tests"]
    ranked = environment_ranked_pairs(pairs[:2], buffer, similarity=prefers_blank)
    assert [(p.chosen, p.rejected) for p in ranked] == [(blank, close), (blank, close)]
