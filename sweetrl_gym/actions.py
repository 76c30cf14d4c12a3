"""Parsing agent messages: what the human sees, whether the agent answers, and its answer."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ANSWER_MARKER",
    "OUTPUT_MARKER",
    "ParsedAction",
    "extract_html",
    "parse_action",
    "parse_action_official",
    "strip_code_fences",
]

ANSWER_MARKER = "I WANT TO ANSWER:"
OUTPUT_MARKER = "OUTPUT:"

_FENCE_LINE = re.compile(r"^[ \t]*```[^\n`]*$", re.MULTILINE)
# The page, with the <!DOCTYPE> before it if any (without one, browsers use quirks mode).
_HTML_SNIPPET = re.compile(
    r"(?:<!doctype\s+html[^>]*>\s*)?<html\b.*?</html\s*>", re.IGNORECASE | re.DOTALL
)
_HTML_START = re.compile(r"(?:<!doctype\s+html[^>]*>\s*)?<html\b", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedAction:
    """What an agent message means to the environment.

    Attributes:
        message: The text the simulated human sees (after the first ``OUTPUT:`` if any).
        is_answer: Whether the message contains ``I WANT TO ANSWER:``.
        answer: The text after ``I WANT TO ANSWER:`` (or ``None`` when not answering).

    """

    message: str
    is_answer: bool
    answer: str | None


def parse_action(action: str) -> ParsedAction:
    """Split an agent message into what the human sees and, if present, the final answer.

    Our semantics: if the message contains ``OUTPUT:``, only the text after the first
    ``OUTPUT:`` counts; if what counts contains ``I WANT TO ANSWER:``, the text after it
    (stripped) is the final answer and the episode ends. The official environment cuts
    differently: see :func:`parse_action_official`.

    Args:
        action: The agent's raw message.

    Returns:
        The parsed action.

    """
    _, sep, after = action.partition(OUTPUT_MARKER)
    message = after if sep else action
    _, sep, answer = message.partition(ANSWER_MARKER)
    if sep:
        return ParsedAction(message=message.strip(), is_answer=True, answer=answer.strip())
    return ParsedAction(message=message.strip(), is_answer=False, answer=None)


def parse_action_official(action: str) -> ParsedAction:
    """Split an agent message as the official ColBench environment does.

    What counts is the text between the first and the second ``OUTPUT:`` (the whole
    message without one); the answer is the text between the first and the second
    ``I WANT TO ANSWER:`` in it. Nothing is stripped: an answer that starts on the
    marker's own line keeps the text after the marker on its first line.

    Args:
        action: The agent's raw message.

    Returns:
        The parsed action; ``message`` is the official ``content`` of the turn.

    """
    if OUTPUT_MARKER in action:
        action = action.split(OUTPUT_MARKER)[1]
    if ANSWER_MARKER in action:
        return ParsedAction(message=action, is_answer=True, answer=action.split(ANSWER_MARKER)[1])
    return ParsedAction(message=action, is_answer=False, answer=None)


def strip_code_fences(text: str) -> str:
    """Remove Markdown code-fence lines (```` ``` ```` / ```` ```python ````) from an answer.

    Our scoring's rule: code outside fences is kept, so an answer that mixes a sentence
    with a fenced block is scored on everything that is left (the official evaluator
    keeps only the first block instead: :mod:`sweetrl_gym.sandbox.scoring`).
    """
    return _FENCE_LINE.sub("", text).strip("\n")


def extract_html(text: str) -> str | None:
    """Return the ``<html>…</html>`` snippet of a frontend agent message, if any.

    An agent message may carry one page (official semantics): the first complete
    ``<html>…</html>`` element counts, with the ``<!DOCTYPE html>`` before it if any. A
    page cut off before ``</html>`` (a generation that hit its token limit) is taken to
    the end of the text, as a browser would.

    Args:
        text: The agent's message (or the answer after ``I WANT TO ANSWER:``).

    Returns:
        The snippet, or ``None`` when the text has no ``<html`` tag.

    """
    match = _HTML_SNIPPET.search(text)
    if match:
        return match.group(0)
    start = _HTML_START.search(text)
    return text[start.start() :] if start else None
