"""Do SWEET-RL's turn pairs carry signal? Checked against the environment itself.

The critic ranks candidate actions; whether its ranking is right can be read off the
environment. For two questions: ask the backend's rule-based simulated human each one in
the turn's context and count the facts that matter which its reply states and the
dialogue had not told yet. For two answers: run each against the task's hidden tests.
A pair carries signal when the chosen action obtains more facts (passes more tests) than
the rejected one, and teaches the wrong thing when it obtains fewer; pairs whose actions
do as well carry none (DPO on them is noise).

Frontend pairs are judged the same way with the Frontend's own environment: two actions
that carry a page by the pages' similarity to the target (a difference within
:data:`~agents.statistics.SIMILARITY_MARGIN` is none; they count as the "answer" kind,
``chosen_passes_*``); two that carry none by the design facts the visual simulated human's
reply to each states and the dialogue had not told yet (sections, colours, columns,
alignment, sizes; the "question" kind).

:func:`environment_ranked_pairs` keeps the pairs the environment tells apart, the better
action chosen: SWEET-RL's policy step on them shows what a perfect critic would gain from
the same candidates (the ``sweet-rl-env`` control, :mod:`algorithms.controls`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sweetrl_gym.actions import parse_action
from sweetrl_gym.sandbox import Sandbox, default_sandbox
from sweetrl_gym.similarity import Similarity, make_similarity
from sweetrl_gym.simulators.base import user_said
from sweetrl_gym.simulators.derive import facts_from_reference
from sweetrl_gym.simulators.rule_based import RuleBasedSimulator
from sweetrl_gym.tasks.types import BackendTask
from sweetrl_gym.trajectory import Trajectory

if TYPE_CHECKING:  # importing algorithms loads torch
    from algorithms.pairs import TurnPair

__all__ = [
    "COUNTS",
    "environment_ranked_pairs",
    "judge_turn_pairs",
    "pair_signal_summary",
    "pair_signal_text",
    "turn_pair_signal",
]


COUNTS = (
    "question_pairs",
    "chosen_obtains_more",
    "chosen_obtains_fewer",
    "same",
    "answer_pairs",
    "chosen_passes_more",
    "chosen_passes_fewer",
    "same_tests",
    "mixed_pairs",
    "unknown_task",
)
"""The keys of :func:`turn_pair_signal`'s result."""


def turn_pair_signal(
    pairs: Sequence[Any],
    buffer: Iterable[Trajectory],
    sandbox: Sandbox | None = None,
    *,
    similarity: Similarity | None = None,
) -> dict[str, int]:
    """Count the pairs whose chosen action obtains more untold facts, or passes more tests.

    Args:
        pairs: SWEET-RL's turn pairs (:class:`algorithms.pairs.TurnPair`, with their
            ``task_id``).
        buffer: The episodes they were sampled from (each task's reference gives its
            hidden facts and tests; tasks without structured facts get facts derived from
            the reference code, as the simulated human does).
        sandbox: Runs the answers' code (default: the shared sandbox the environment uses).
        similarity: Scores a Frontend page's screenshot against the target's, as the
            environment does (default: perceptual similarity; see :func:`env_similarity`).

    Returns:
        ``question_pairs`` (both candidates ask), of which ``chosen_obtains_more``,
        ``chosen_obtains_fewer`` and ``same``; ``answer_pairs`` (both answer), of which
        ``chosen_passes_more``, ``chosen_passes_fewer`` and ``same_tests``;
        ``mixed_pairs`` (one asks, one answers: not judged) and ``unknown_task`` (no
        episode of the pair's task in ``buffer``).

    """
    counts = dict.fromkeys(COUNTS, 0)
    for verdict in judge_turn_pairs(pairs, buffer, sandbox, similarity=similarity):
        counts[verdict] += 1
    counts["question_pairs"] = sum(counts[k] for k in _QUESTION_VERDICTS)
    counts["answer_pairs"] = sum(counts[k] for k in _ANSWER_VERDICTS)
    return counts


_QUESTION_VERDICTS = ("chosen_obtains_more", "chosen_obtains_fewer", "same")
_ANSWER_VERDICTS = ("chosen_passes_more", "chosen_passes_fewer", "same_tests")


def judge_turn_pairs(
    pairs: Sequence[Any],
    buffer: Iterable[Trajectory],
    sandbox: Sandbox | None = None,
    *,
    similarity: Similarity | None = None,
) -> list[str]:
    """Judge each pair by the environment (arguments as for :func:`turn_pair_signal`).

    Returns:
        One key of :data:`COUNTS` per pair, in order: ``chosen_obtains_more``,
        ``chosen_obtains_fewer`` or ``same`` for two questions; ``chosen_passes_more``,
        ``chosen_passes_fewer`` or ``same_tests`` for two answers; ``mixed_pairs`` or
        ``unknown_task``.

    """
    buffer = list(buffer)
    if buffer and all(_is_frontend(t.reference) for t in buffer):
        references = {t.task_id: t.reference for t in buffer}
        return _judge_frontend_pairs(pairs, references, make_similarity(similarity))
    tasks: dict[str, BackendTask] = {}  # built once per task: its episodes and pairs share it
    for t in buffer:
        if t.task_id not in tasks and "ground_truth" in t.reference:
            reference = {"test_cases": {}, **t.reference, "task_id": t.task_id}
            tasks[t.task_id] = BackendTask.from_dict(reference)
    human = RuleBasedSimulator()
    verdicts: list[str] = []
    answers: list[tuple[str, str, dict[str, str]]] = []
    answer_slots: list[int] = []
    for pair in pairs:
        task = tasks.get(pair.task_id)
        if task is None:
            verdicts.append("unknown_task")
            continue
        chosen, rejected = parse_action(pair.chosen), parse_action(pair.rejected)
        if chosen.is_answer and rejected.is_answer:
            answers += [
                (str(a.answer), task.ground_truth, task.test_cases) for a in (chosen, rejected)
            ]
            answer_slots.append(len(verdicts))
            verdicts.append("")  # filled in once the tests have run, all at once
        elif chosen.is_answer or rejected.is_answer:
            verdicts.append("mixed_pairs")
        else:
            obtained = (
                _facts_obtained(human, task, pair.messages, action)
                for action in (pair.chosen, pair.rejected)
            )
            verdicts.append(_verdict(*obtained, prefix="chosen_obtains_", same="same"))
    if answers:
        reports = (sandbox or default_sandbox()).run_tests_many(answers)
        for slot, mine, theirs in zip(answer_slots, reports[::2], reports[1::2]):
            verdicts[slot] = _verdict(
                mine.passed, theirs.passed, prefix="chosen_passes_", same="same_tests"
            )
    return verdicts


def _is_frontend(reference: Any) -> bool:
    """Whether an episode's reference is a Frontend task's (a target page, no tests)."""
    truth = str(reference.get("ground_truth", "")) if isinstance(reference, dict) else ""
    return "test_cases" not in reference and "<html" in truth.lower()


def _judge_frontend_pairs(
    pairs: Sequence[Any], references: dict[str, Any], score: Similarity
) -> list[str]:
    """Judge Frontend pairs: pages by similarity to the target, questions by facts told."""
    from agents.frontend_collaborator import read_reply
    from agents.statistics import SIMILARITY_MARGIN
    from sweetrl_gym.actions import extract_html
    from sweetrl_gym.render import RenderError, default_renderer
    from sweetrl_gym.simulators.visual import VisualDiffSimulator

    renderer = default_renderer()
    human = VisualDiffSimulator(renderer)

    def similarity(page: str, target: Any) -> float:
        try:
            return float(score(renderer.render_page(page).image, target))
        except RenderError:
            return 0.0  # scored as the environment scores a page that does not render

    verdicts = []
    for pair in pairs:
        reference = references.get(pair.task_id)
        if reference is None:
            verdicts.append("unknown_task")
            continue
        pages = [extract_html(action) for action in (pair.chosen, pair.rejected)]
        if all(page is not None for page in pages):
            target = renderer.render_page(reference["ground_truth"]).image
            chosen, rejected = (similarity(page, target) for page in pages)
            gap = chosen - rejected
            verdict = "same_tests" if abs(gap) <= SIMILARITY_MARGIN else None
            verdicts.append(verdict or f"chosen_passes_{'more' if gap > 0 else 'fewer'}")
        elif any(page is not None for page in pages):
            verdicts.append("mixed_pairs")
        else:
            told = {
                u for m in pair.messages if m["role"] == "user" for u in read_reply(m["content"])
            }
            obtained = [
                len(set(read_reply(human.reply(reference, [*pair.messages, ask]))) - told)
                for ask in (
                    {"role": "assistant", "content": pair.chosen},
                    {"role": "assistant", "content": pair.rejected},
                )
            ]
            verdicts.append(_verdict(*obtained, prefix="chosen_obtains_", same="same"))
    return verdicts


def environment_ranked_pairs(
    pairs: Sequence[TurnPair],
    buffer: Iterable[Trajectory],
    sandbox: Sandbox | None = None,
    *,
    similarity: Similarity | None = None,
) -> list[TurnPair]:
    """Rank turn pairs as a perfect critic would: by what the environment says of them.

    Keeps the pairs of two questions (two answers) whose actions obtain different numbers
    of untold facts (pass different numbers of tests), the better action as ``chosen``
    (with its score); drops the rest, which carry no signal or cannot be judged without
    playing the dialogue on (a question against an answer). Training data for an upper
    bound, not for a method: it reads the simulated human and the hidden tests.

    Args:
        pairs: SWEET-RL's turn pairs, e.g. ``SweetRL.policy_pairs``.
        buffer: The episodes they were sampled from (see :func:`turn_pair_signal`).
        sandbox: Runs the answers' code.
        similarity: Scores Frontend pages (see :func:`turn_pair_signal`).

    Returns:
        The informative pairs, in their order, each oriented by the environment.

    """
    ranked = []
    verdicts = judge_turn_pairs(pairs, buffer, sandbox, similarity=similarity)
    for pair, verdict in zip(pairs, verdicts):
        if verdict.endswith("_more"):
            ranked.append(pair)
        elif verdict.endswith("_fewer"):
            ranked.append(pair.reversed())
    return ranked


def _verdict(chosen: int, rejected: int, *, prefix: str, same: str) -> str:
    if chosen == rejected:
        return same
    return prefix + ("more" if chosen > rejected else "fewer")


def _facts_obtained(
    human: RuleBasedSimulator, task: BackendTask, messages: Sequence[Any], question: str
) -> int:
    """Count the facts that matter which the human's reply to ``question`` tells first."""
    told = user_said(messages)
    reply = human.reply(task, [*messages, {"role": "assistant", "content": question}])
    facts = task.facts or facts_from_reference(task.ground_truth, task.test_cases)
    return sum(f.matters and f.answer in reply and f.answer not in told for f in facts)


def pair_signal_text(counts: Mapping[str, int], *, frontend: bool) -> str:
    """Return a paragraph saying how many turn pairs the environment bears out.

    Args:
        counts: :func:`turn_pair_signal`'s result.
        frontend: Whether the pairs are of pages (the Frontend) rather than code.

    """
    from agents.statistics import SIMILARITY_MARGIN

    c = counts
    if frontend:
        return (
            f"SWEET-RL's turn pairs, checked against the environment: of {c['question_pairs']} "
            f"pairs of two messages without a page, the chosen one obtains more untold design "
            f"facts from the simulated human in {c['chosen_obtains_more']}, fewer in "
            f"{c['chosen_obtains_fewer']} and as many in {c['same']}; of {c['answer_pairs']} "
            f"pairs of two pages, the chosen page is closer to the target (by more than "
            f"{SIMILARITY_MARGIN:g}) in {c['chosen_passes_more']}, farther in "
            f"{c['chosen_passes_fewer']} and as close in {c['same_tests']}; "
            f"{c['mixed_pairs']} pairs oppose a page to a message without one (not judged). "
            "Pairs that do as well carry no signal.\n"
        )
    return (
        f"SWEET-RL's turn pairs, checked against the environment: of {c['question_pairs']} "
        f"pairs of two questions, the chosen question obtains more untold facts that matter "
        f"from the simulated human in {c['chosen_obtains_more']}, fewer in "
        f"{c['chosen_obtains_fewer']} and as many in {c['same']}; of {c['answer_pairs']} "
        f"pairs of two answers, the chosen answer passes more hidden tests in "
        f"{c['chosen_passes_more']}, fewer in {c['chosen_passes_fewer']} and as many in "
        f"{c['same_tests']}; {c['mixed_pairs']} pairs oppose a question to an answer (not "
        "judged). Pairs that do as well carry no signal.\n"
    )


def pair_signal_summary(counts: Mapping[str, int]) -> str:
    """Return the counts in one line (chosen better / worse / as good), for pooled reports."""
    return (
        "turn pairs judged by the environment (chosen better / worse / as good): questions "
        f"{counts['chosen_obtains_more']} / {counts['chosen_obtains_fewer']} / "
        f"{counts['same']}, answers {counts['chosen_passes_more']} / "
        f"{counts['chosen_passes_fewer']} / {counts['same_tests']}"
    )
