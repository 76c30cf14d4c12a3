"""An imperfect scripted collaborator: the demonstrator of the warm start.

The paper's base policy (an 8B instruct model) already follows the protocol: it asks some
useful questions, misses others, and answers with code that uses what it learned. A
small model cloned from the privileged oracle copies the oracle's perfect questioning,
leaving nothing for turn-level credit to improve. :class:`ScriptedCollaborator` plays
that imperfect base instead: it asks about each hidden detail only with some
probability, in varied natural phrasings, and answers with the task family's function
written with what the user actually told it and the family's defaults for the rest.
Its failures come from details it never asked about — what better questions fix.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from agents.base import Message
from sweetrl_gym.actions import ANSWER_MARKER
from sweetrl_gym.simulators import user_said
from sweetrl_gym.tasks import HiddenFact
from sweetrl_gym.tasks.families import FAMILIES
from sweetrl_gym.tasks.family import Family, Signature

__all__ = ["ScriptedCollaborator", "natural_question"]

_FAMILIES: dict[str, Family] = {family.name: family for family in FAMILIES}

# Phrasings per fact topic; "{k}" is one or two of the fact's own keywords. No template
# has a comma or "and"/"or": the simulated human reads each clause as one question.
_PHRASINGS: dict[str, tuple[str, ...]] = {
    "threshold": (
        "Is there a {k} I should know about?",
        "What {k} should I use?",
        "Could you tell me the {k}?",
        "Does the {k} matter here?",
    ),
    "rate": (
        "What {k} should I use?",
        "How much is the {k}?",
        "Could you tell me the {k}?",
        "Which {k} applies?",
    ),
    "rounding": (
        "How should I round the result?",
        "Should the result be rounded to {k}?",
        "What {k} should the result have?",
    ),
    "boundary": (
        "What happens exactly at the {k}?",
        "Should the {k} be inclusive?",
        "How do you want the {k} counted?",
    ),
    "tie_break": (
        "How should I break a tie on the {k}?",
        "What if two entries have the same {k}?",
        "Which one wins a tie on {k}?",
    ),
    "edge_case": (
        "What should happen with {k} input?",
        "How should I handle {k} values?",
        "What if the input is {k}?",
    ),
    "return_format": (
        "What should the function return as {k}?",
        "What {k} should the output have?",
        "How should the result look in terms of {k}?",
    ),
    "ordering": (
        "In what {k} should the results come back?",
        "How should I sort by {k}?",
        "Does the {k} of the output matter?",
    ),
    "case": (
        "Should the {k} matter?",
        "How should I treat the {k}?",
        "Is the comparison {k} sensitive?",
    ),
    "unit": (
        "What {k} are the values in?",
        "Which {k} should I assume?",
        "Could you tell me the {k}?",
    ),
    "rule": (
        "How does the {k} work?",
        "What is the rule for the {k}?",
        "Could you explain the {k}?",
    ),
}
_GENERIC_PHRASINGS = ("What about the {k}?", "Could you tell me about the {k}?")
_SIGNATURE_PHRASINGS = (
    "What should the function be called? What parameters does it take?",
    "What name should the function have? What are its arguments in order?",
    "How should I name the function? Which parameters should it accept?",
    "What is the function signature you want?",
)


def natural_question(fact: HiddenFact, rng: random.Random) -> str:
    """Return a question about ``fact`` in one of several natural phrasings.

    Args:
        fact: The hidden detail to ask about.
        rng: Picks the phrasing and which of the fact's keywords it uses.

    Returns:
        One sentence (for the signature, two short ones).

    """
    if fact.topic == "signature":
        return rng.choice(_SIGNATURE_PHRASINGS)
    keywords = list(fact.keywords[:3]) or [fact.topic.replace("_", " ")]
    first, second = keywords[0], keywords[1] if len(keywords) > 1 else ""
    if second and first[:4] != second[:4] and rng.random() < 0.5:
        words = f"{first} {second}"  # the first two often read as a phrase
    else:
        words = rng.choice(keywords)
    template = rng.choice(_PHRASINGS.get(fact.topic, _GENERIC_PHRASINGS))
    return template.format(k=words)


class ScriptedCollaborator:
    """A privileged but imperfect questioner; the demonstrator of the warm start.

    For each episode it decides, once, which hidden details to ask about: each with
    probability ``ask_probability`` (the signature only when the request does not state
    it), never more than ``max_turns - 1`` turns of questions. It asks them one or more
    per turn in varied phrasings (:func:`natural_question`), then answers with the task
    family's function rendered with the values the user *stated* in the dialogue and the
    family's defaults for everything else — so a detail it did not ask about (or that the
    user did not state) is wrong in its code exactly when that detail matters.

    Decisions are seeded by ``seed`` and the task, so an episode is the same whatever
    the batch it plays in. It needs the bundled tasks' structured facts and family; on
    other backend tasks (official data) it answers with the reference when every detail
    was stated and a stub otherwise.

    Args:
        ask_probability: Chance of asking about each hidden detail.
        max_turns: The environment's turn limit (the last turn is the answer).
        questions_per_turn: Questions per message (more when they would not fit).
        seed: Seed of its choices.

    Raises:
        ValueError: On a probability outside [0, 1] or counts below 1.

    """

    privileged = True
    own_system_prompt = True  # reads the conversation as the environment has it: no prompt

    def __init__(
        self,
        ask_probability: float = 0.5,
        max_turns: int = 10,
        questions_per_turn: int = 1,
        seed: int = 0,
    ):
        if not 0.0 <= ask_probability <= 1.0:
            raise ValueError(f"ask_probability must be in [0, 1], got {ask_probability}")
        if max_turns < 1 or questions_per_turn < 1:
            raise ValueError("max_turns and questions_per_turn must be at least 1")
        self.ask_probability = float(ask_probability)
        self.max_turns = int(max_turns)
        self.questions_per_turn = int(questions_per_turn)
        self.seed = int(seed)

    def act(
        self, batch: Sequence[Sequence[Message]], references: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        """Ask the next planned questions of each conversation, or answer."""
        return [self._next(messages, ref) for messages, ref in zip(batch, references)]

    def plan(self, request: str, reference: Mapping[str, Any]) -> list[list[str]]:
        """Return the questions of each question turn for a task (deterministic).

        Args:
            request: The user's first message.
            reference: The task's ``info["reference"]``.

        Returns:
            One list of questions per question turn (possibly none).

        """
        if "test_cases" not in reference:
            raise ValueError("ScriptedCollaborator plays backend tasks only")
        rng = random.Random(self._episode_seed(request, reference))
        stated = Signature.find_in(request) is not None
        asked = []
        for fact in _facts(reference):
            if fact.topic == "signature" and stated:
                continue
            if rng.random() < self.ask_probability:
                asked.append(natural_question(fact, rng))
        turns = max(0, self.max_turns - 1)
        if not asked or not turns:
            return []
        per_turn = max(self.questions_per_turn, math.ceil(len(asked) / turns))
        return [asked[i : i + per_turn] for i in range(0, len(asked), per_turn)]

    def _next(self, messages: Sequence[Message], reference: Mapping[str, Any]) -> str:
        request = str(messages[0].get("content", "")) if messages else ""
        plan = self.plan(request, reference)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if turn < len(plan) and turn < self.max_turns - 1:
            return " ".join(plan[turn])
        return f"{ANSWER_MARKER}\n{answer_from(user_said(messages), request, reference)}"

    def _episode_seed(self, request: str, reference: Mapping[str, Any]) -> int:
        text = f"{self.seed}\0{request}\0{reference.get('ground_truth', '')}"
        return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def answer_from(told: str, request: str, reference: Mapping[str, Any]) -> str:
    """Write the function from what the user stated; defaults for the rest.

    Args:
        told: Everything the user said (their messages joined).
        request: The first request (it may state the signature).
        reference: The task's reference (facts, family, ground truth).

    Returns:
        Python source of one function.

    """
    facts = _facts(reference)
    family = _FAMILIES.get(str(reference.get("family") or ""))
    known = {fact.key for fact in facts if fact.answer and fact.answer in told}
    if family is None:  # no family to render: all or nothing
        if all(fact.key in known or not fact.matters for fact in facts):
            return str(reference["ground_truth"])
        signature = Signature.find_in(request)
        header = signature.header() if signature else "def solution(*args):"
        return f"{header}\n    return None\n"
    values = {
        fact.key: _fact_value(fact, facts) if fact.key in known else fact.default
        for fact in family.facts
    }
    signature = Signature.find_in(request)
    if signature is None:
        stated = next((f for f in facts if f.topic == "signature" and f.key in known), None)
        if stated is not None and isinstance(stated.value, Mapping):
            signature = Signature(str(stated.value["name"]), tuple(stated.value["params"]))
        else:
            signature = family.signature_options()[0]
    return family.render(values, signature)


def _facts(reference: Mapping[str, Any]) -> list[HiddenFact]:
    return [HiddenFact.from_dict(f) for f in reference.get("facts") or ()]


def _fact_value(fact_def: Any, facts: list[HiddenFact]) -> Any:
    value = next(f.value for f in facts if f.key == fact_def.key)
    # JSON turns tuples into lists; the family's options say which it expects.
    if isinstance(value, list) and any(isinstance(o, tuple) for o in fact_def.options):
        return tuple(value)
    return value
