"""Scripted agents: baselines and upper bounds that need no model."""

from __future__ import annotations

import math
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from agents.base import Message
from sweetrl_gym.actions import ANSWER_MARKER
from sweetrl_gym.simulators import facts_from_reference
from sweetrl_gym.tasks import HiddenFact
from sweetrl_gym.tasks.family import Signature

__all__ = ["HumanAgent", "ImmediateAnswerAgent", "OracleAgent", "RandomAgent", "question_for"]


def question_for(fact: HiddenFact) -> str:
    """Return a question about ``fact`` that names its topic words."""
    if fact.topic == "signature":
        return "What should the function be called and what parameters does it take?"
    words = " ".join(fact.keywords[:4]) or fact.topic.replace("_", " ")
    return f"What about the {words}?"


class OracleAgent:
    """Privileged upper bound: asks about every hidden fact, then answers with the reference.

    It reads ``info["reference"]`` — cheating for a policy, useful to check that the
    simulated human conveys every fact and that the reference passes its tests. On a
    frontend task it answers with the target page at once.

    Args:
        max_turns: The environment's turn limit; questions are packed to fit in it.

    """

    privileged = True
    own_system_prompt = True  # reads the conversation as the environment has it: no prompt

    def __init__(self, max_turns: int = 10):
        self.max_turns = max_turns

    def act(
        self, batch: Sequence[Sequence[Message]], references: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        """Ask the next questions of each conversation, or answer when all are asked."""
        return [self._next(messages, ref) for messages, ref in zip(batch, references)]

    def _next(self, messages: Sequence[Message], reference: Mapping[str, Any]) -> str:
        if "test_cases" not in reference:
            # A frontend task: the reference is the target page itself.
            return f"{ANSWER_MARKER}\n{reference['ground_truth']}"
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

    own_system_prompt = True  # reads the conversation as the environment has it: no prompt

    def act(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """Answer every conversation immediately."""
        return [_stub_answer(messages) for messages in batch]


def _stub_answer(messages: Sequence[Message]) -> str:
    """Answer with a stub that has the signature the request states and returns None."""
    stated = Signature.find_in(str(messages[0].get("content", "")))
    header = stated.header() if stated else "def solution(*args):"
    return f"{ANSWER_MARKER}\n{header}\n    return None\n"


_GENERIC_QUESTIONS = (
    "What should the function be called and what parameters does it take?",
    "What should it return?",
    "Are there any thresholds or limits I should know about?",
    "How should the result be rounded?",
    "What should happen with empty or invalid input?",
    "How should ties be broken?",
    "Are there any special cases?",
    "What units are the values in?",
    "Any other details I should know?",
)


class RandomAgent:
    """A seeded random baseline: asks generic questions, answers with a stub at random.

    Each turn it answers with probability ``answer_probability`` (always on the last
    turn); otherwise it asks one of a fixed list of generic clarification questions.
    Its answer is a stub with the stated signature that returns ``None``. In
    :func:`~agents.collect` each episode's choices come from its own seed, so an episode
    is the same whatever ``num_envs`` and after a resume.

    Args:
        answer_probability: Chance of answering on each turn before the last.
        max_turns: The environment's turn limit.
        seed: Seed of the agent's own random generator.

    """

    seeded_per_episode = True
    own_system_prompt = True  # reads the conversation as the environment has it: no prompt

    def __init__(self, answer_probability: float = 0.2, max_turns: int = 10, seed: int = 0):
        if not 0.0 <= answer_probability <= 1.0:
            raise ValueError(f"answer_probability must be in [0, 1], got {answer_probability}")
        self.answer_probability = answer_probability
        self.max_turns = max_turns
        self.seed = seed
        self._rng = random.Random(seed)

    def act(
        self, batch: Sequence[Sequence[Message]], seeds: Sequence[int] | None = None
    ) -> list[str]:
        """Ask a random question or answer, for every conversation.

        Args:
            batch: One conversation per episode.
            seeds: Each conversation's episode seed; without them the choices come from
                one generator, in call order.

        """
        if seeds is None:
            return [self._next(messages, self._rng) for messages in batch]
        if len(seeds) != len(batch):
            raise ValueError(f"{len(seeds)} seeds for {len(batch)} conversations")
        return [
            self._next(messages, random.Random(f"{self.seed}:{seed}:{_turn(messages)}"))
            for messages, seed in zip(batch, seeds)
        ]

    def _next(self, messages: Sequence[Message], rng: random.Random) -> str:
        if _turn(messages) >= self.max_turns - 1 or rng.random() < self.answer_probability:
            return _stub_answer(messages)
        return rng.choice(_GENERIC_QUESTIONS)


def _turn(messages: Sequence[Message]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant")


class HumanAgent:
    """A person plays the agent from the terminal (``sweetrl play``).

    Shows each new message of the conversation, then reads the reply: lines until an
    empty line. Start the reply with ``I WANT TO ANSWER:`` to submit code; code ends
    with two empty lines in a row, so it may hold single blank lines.

    Args:
        input_fn: Reads one line (default: the builtin ``input``).
        output: Where the dialogue is printed (default: standard output).

    """

    own_system_prompt = True  # the person reads the dialogue, not an agent prompt

    def __init__(self, input_fn: Callable[[str], str] = input, output: TextIO | None = None):
        self._input = input_fn
        self._output = output
        self._shown: list[int] = []

    def act(self, batch: Sequence[Sequence[Message]]) -> list[str]:
        """Show what is new in each conversation and read the person's reply to it."""
        if len(self._shown) != len(batch):
            self._shown = [0] * len(batch)
        replies = []
        for index, messages in enumerate(batch):
            if len(messages) < self._shown[index]:
                self._shown[index] = 0  # a new episode in this slot
            if len(batch) > 1:
                self._print(f"--- conversation {index + 1} of {len(batch)} ---")
            for message in messages[self._shown[index] :]:
                name = "HUMAN" if message.get("role") == "user" else "AGENT"
                self._print(f"[{name}] {message.get('content', '')}")
            self._shown[index] = len(messages) + 1  # the reply comes back in the chat
            replies.append(self._read())
        return replies

    def _read(self) -> str:
        self._print(
            f"Your message (end with an empty line; '{ANSWER_MARKER}' submits code, "
            "which ends with two empty lines so that it may hold blank lines):"
        )
        lines: list[str] = []
        while True:
            try:
                line = self._input("> " if not lines else ". ")
            except EOFError:
                if lines:
                    break
                raise EOFError("no input: the terminal closed before a message") from None
            if not line.strip() and lines:
                code = lines[0].lstrip().startswith(ANSWER_MARKER)
                if not code or not lines[-1].strip():  # code: a second empty line in a row
                    break
            if line.strip() or lines:
                lines.append(line)
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines)

    def _print(self, text: str) -> None:
        print(text, file=self._output if self._output is not None else sys.stdout)
