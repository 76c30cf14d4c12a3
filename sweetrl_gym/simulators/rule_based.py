"""The offline simulated human: answers from the task's hidden facts, deterministically."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sweetrl_gym.simulators.base import user_said
from sweetrl_gym.simulators.derive import facts_from_reference
from sweetrl_gym.simulators.matching import (
    GENERIC_REQUEST_WORDS,
    TOPICS,
    prose,
    split_clauses,
    stems,
)
from sweetrl_gym.tasks.types import BackendTask, HiddenFact

__all__ = ["RuleBasedSimulator"]

_KEYWORD_WEIGHT = 2.0
_TOPIC_WEIGHT = 1.0
_ANSWER_WEIGHT = 0.5
_NEAR_BEST = 0.75
_TOPIC_STEMS = {topic: frozenset(stems(words)) for topic, words in TOPICS.items()}
_GENERIC_STEMS = frozenset(stems(GENERIC_REQUEST_WORDS))


@dataclass(frozen=True)
class _IndexedFact:
    fact: HiddenFact
    keyword_stems: frozenset[str]
    topic_stems: frozenset[str]
    answer_stems: frozenset[str]

    def score(self, words: set[str]) -> float:
        return (
            _KEYWORD_WEIGHT * len(words & self.keyword_stems)
            + _TOPIC_WEIGHT * len(words & self.topic_stems)
            + _ANSWER_WEIGHT * len(words & self.answer_stems)
        )


class RuleBasedSimulator:
    """A deterministic simulated human that answers only what it is asked.

    For each clause of the agent's message it finds the hidden facts whose words the
    clause uses (the fact's own keywords, its topic's question words, and words of the
    fact's sentence) and states them, at most ``max_sentences`` facts a reply, in the
    order asked. It never states a fact the message does not ask about, with one
    exception: a general request for more detail ("any other requirements?") is
    answered with the single most important fact not yet told. Questions it cannot
    match get "I don't know". Code in the message (fenced blocks, code-like backtick
    spans, unfenced ``def`` blocks and statements; see
    :func:`~sweetrl_gym.simulators.matching.prose`) asks nothing: only its prose is
    matched, so pasting keyword-laden code reveals no fact. Tasks without structured
    facts (official data) get facts derived from the reference code.

    Args:
        max_sentences: Most facts stated in one reply (the official human answers in
            two sentences).

    """

    def __init__(self, max_sentences: int = 2):
        if max_sentences < 1:
            raise ValueError("max_sentences must be at least 1")
        self.max_sentences = max_sentences
        # v2: code in the agent's message is ignored (replies differ from v1's).
        self.name = f"rule-based-v2(max_sentences={max_sentences})"

    def reply(self, task: BackendTask, messages: Sequence[Mapping[str, str]]) -> str:
        """Answer the agent's latest message from the task's hidden facts."""
        if not messages:
            raise ValueError("messages must end with the agent's message")
        question = prose(str(messages[-1].get("content", "")))
        facts = _index(task)
        chosen: list[_IndexedFact] = []
        unmatched = generic = False
        for clause in split_clauses(question):
            words = stems(clause)
            scored = [(f.score(words), i) for i, f in enumerate(facts)]
            best = max((s for s, _ in scored), default=0.0)
            if best >= _TOPIC_WEIGHT:
                for score, i in sorted(scored, key=lambda si: (-si[0], si[1])):
                    if score >= _NEAR_BEST * best and facts[i] not in chosen:
                        chosen.append(facts[i])
            elif words & _GENERIC_STEMS:
                generic = True
            elif "?" in question and words:
                unmatched = True
        if chosen:
            answers = [f.fact.answer for f in chosen[: self.max_sentences]]
            if unmatched and len(answers) < self.max_sentences:
                answers.append("I don't know about the rest.")
            return " ".join(answers)
        if generic:
            told = user_said(messages)
            for item in sorted(facts, key=lambda f: not f.fact.matters):
                if item.fact.answer not in told:
                    return item.fact.answer
            return "That's everything I can think of."
        if "?" in question:
            return "I don't know about that."
        return "Please ask me about anything that is unclear, or give me your final answer."


@functools.lru_cache(maxsize=4096)
def _index(task: BackendTask) -> tuple[_IndexedFact, ...]:
    facts = task.facts or facts_from_reference(task.ground_truth, task.test_cases)
    return tuple(
        _IndexedFact(
            fact=fact,
            keyword_stems=frozenset(stems(fact.keywords)),
            topic_stems=_TOPIC_STEMS.get(fact.topic, frozenset()),
            answer_stems=frozenset(stems(fact.answer)),
        )
        for fact in facts
    )
