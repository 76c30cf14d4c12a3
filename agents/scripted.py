"""Scripted agents: baselines and upper bounds that need no model."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from agents.base import Message
from sweetrl_gym.actions import ANSWER_MARKER
from sweetrl_gym.simulators import facts_from_reference
from sweetrl_gym.tasks import HiddenFact
from sweetrl_gym.tasks.family import Signature

__all__ = ["ImmediateAnswerAgent", "OracleAgent", "question_for"]


def question_for(fact: HiddenFact) -> str:
    """Return a question about ``fact`` that names its topic words."""
    if fact.topic == "signature":
        return "What should the function be called and what parameters does it take?"
    words = " ".join(fact.keywords[:4]) or fact.topic.replace("_", " ")
    return f"What about the {words}?"


class OracleAgent:
    """Privileged upper bound: asks about every hidden fact, then answers with the reference.

    It reads ``info["reference"]`` — cheating for a policy, useful to check that the
    simulated human conveys every fact and that the reference passes its tests.

    Args:
        max_turns: The environment's turn limit; questions are packed to fit in it.

    """

    privileged = True

    def __init__(self, max_turns: int = 10):
        self.max_turns = max_turns

    def act(
        self, batch: Sequence[Sequence[Message]], references: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        """Ask the next questions of each conversation, or answer when all are asked."""
        return [self._next(messages, ref) for messages, ref in zip(batch, references)]

    def _next(self, messages: Sequence[Message], reference: Mapping[str, Any]) -> str:
        facts = [HiddenFact.from_dict(f) for f in reference.get("facts") or ()]
        if not facts:
            facts = list(
                facts_from_reference(reference["ground_truth"], reference.get("test_cases"))
            )
        facts.sort(key=lambda f: not f.matters)  # the facts that matter first
        questions = [question_for(f) for f in facts]
        per_turn = max(1, math.ceil(len(questions) / max(1, self.max_turns - 1)))
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        asked = questions[turn * per_turn : (turn + 1) * per_turn]
        if asked and turn < self.max_turns - 1:
            return " ".join(asked)
        return f"{ANSWER_MARKER}\n{reference['ground_truth']}"


class ImmediateAnswerAgent:
    """Answers at once from the description alone, with no questions.

    Without a model it cannot implement anything: it writes a stub with the signature
    the request states (if any) that returns ``None``. The floor of any comparison.
    """

    def act(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """Answer every conversation immediately."""
        return [self._answer(str(messages[0].get("content", ""))) for messages in batch]

    @staticmethod
    def _answer(request: str) -> str:
        stated = Signature.find_in(request)
        header = stated.header() if stated else "def solution(*args):"
        return f"{ANSWER_MARKER}\n{header}\n    return None\n"
