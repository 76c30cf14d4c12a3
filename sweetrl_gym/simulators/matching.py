"""Recognising what a question is about: tokens, stems, topic vocabularies, prose vs code."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["GENERIC_REQUEST_WORDS", "TOPICS", "prose", "split_clauses", "stems"]

_STOPWORDS = frozenset(
    """a an the is are was were be been being am do does did done doing should would could
    can will shall may might must i me my we our you your it its this that these those to of
    for in on at by with and or but if so than then there here what which who whom whose how
    when where why please tell know let like want need just also any some into about from as
    have has had get got go going make sure okay ok yes no not hi hello thanks thank great
    sound good one would're i'm it's that's what's don't""".split()
)

# Generic question words per topic; a fact's own keywords are matched on top of these.
TOPICS: dict[str, tuple[str, ...]] = {
    "signature": (
        "name",
        "named",
        "call",
        "called",
        "signature",
        "parameter",
        "param",
        "argument",
        "arg",
        "input",
        "take",
        "accept",
        "define",
    ),
    "threshold": (
        "threshold",
        "cutoff",
        "limit",
        "minimum",
        "maximum",
        "min",
        "max",
        "above",
        "below",
        "over",
        "under",
        "least",
        "most",
        "bound",
        "level",
    ),
    "rate": (
        "rate",
        "percent",
        "percentage",
        "fee",
        "price",
        "cost",
        "factor",
        "multiplier",
        "amount",
        "much",
        "charge",
    ),
    "rounding": ("round", "decimal", "precision", "place", "digit", "cent", "integer", "whole"),
    "boundary": (
        "exactly",
        "equal",
        "inclusive",
        "exclusive",
        "boundary",
        "strict",
        "include",
        "count",
    ),
    "tie_break": ("tie", "same", "equal", "duplicate", "first", "break", "both"),
    "edge_case": (
        "empty",
        "zero",
        "negative",
        "none",
        "missing",
        "invalid",
        "edge",
        "blank",
        "null",
        "nothing",
        "error",
    ),
    "return_format": (
        "return",
        "output",
        "format",
        "result",
        "type",
        "string",
        "list",
        "dict",
        "dictionary",
        "tuple",
        "look",
        "print",
    ),
    "ordering": ("sort", "order", "ascending", "descending", "rank", "reverse"),
    "case": ("case", "uppercase", "lowercase", "capital", "capitalize", "sensitive"),
    "unit": (
        "unit",
        "minute",
        "hour",
        "second",
        "day",
        "week",
        "month",
        "year",
        "km",
        "mile",
        "meter",
        "currency",
        "measure",
    ),
    "rule": ("rule", "work", "calculate", "compute", "logic", "formula", "handle", "special"),
}

GENERIC_REQUEST_WORDS = frozenset(
    [
        "detail",
        "more",
        "anything",
        "else",
        "requirement",
        "specific",
        "specification",
        "information",
        "info",
        "elaborate",
        "clarify",
        "context",
        "other",
        "additional",
        "everything",
    ]
)

_WORD = re.compile(r"[A-Za-z]+|\d+(?:\.\d+)?")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
# Sentence ends (not decimal points), and joins between separate questions.
_CLAUSE_SPLIT = re.compile(r"(?<!\d)\.(?!\d)|[?!;\n]|,|\b(?:and|also|plus|or)\b", re.IGNORECASE)


def stem(word: str) -> str:
    """Reduce a word to a light stem: plurals, -ing/-ed/-ly, doubled final consonants, final e."""
    w = word.lower()
    for suffix in ("ingly", "edly", "ing", "ed", "ly", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def stems(text: str | Iterable[str]) -> set[str]:
    """Content-word stems of a text (or of an iterable of words / identifiers)."""
    words = text if not isinstance(text, str) else [text]
    out: set[str] = set()
    for chunk in words:
        for piece in _CAMEL.sub(" ", chunk).replace("_", " ").split():
            for token in _WORD.findall(piece):
                low = token.lower()
                if low not in _STOPWORDS and (len(low) > 1 or low.isdigit()):
                    out.add(stem(low) if not low[0].isdigit() else low)
    return out


def split_clauses(text: str) -> list[str]:
    """Split a message into short clauses, each asking about (at most) one thing."""
    return [c.strip() for c in _CLAUSE_SPLIT.split(text) if c and c.strip()]


# A fenced block, from its opening fence (any info string) to its closing one or the end;
# not anchored to line starts, so a fence opened mid-line still hides its code.
_FENCED = re.compile(r"(`{3,}|~{3,}).*?(?:\1|\Z)", re.DOTALL)
_INLINE = re.compile(r"`([^`]+)`")
# Characters prose in backticks (`late_fee`, `grace period`) does not use.
_CODE_CHARS = frozenset("()[]{}=:;<>+*/%#\\\n")
_MAX_INLINE_WORDS = 3
_CODE_KEYWORDS = frozenset(("def", "class", "return", "import", "from", "lambda", "for", "if"))
# Unfenced Python statements, by how the line opens (case-sensitive: prose capitalises).
_STATEMENT = re.compile(
    r"[ \t]*(?:return\b|import[ \t]|from[ \t]+[\w.]+[ \t]+import\b|@\w"
    r"|[A-Za-z_][\w.]*(?:\[[^\]]*\])?[ \t]*[-+*/%]?=(?!=))"
)
_BLOCK_OPENER = re.compile(
    r"[ \t]*(?:(?:async[ \t]+)?def[ \t]+\w+[ \t]*\(|class[ \t]+\w+[ \t]*[(:])"
)


def _inline_is_code(span: str) -> bool:
    words = span.split()
    return (
        any(ch in _CODE_CHARS for ch in span)
        or len(words) > _MAX_INLINE_WORDS
        or (len(words) > 1 and words[0] in _CODE_KEYWORDS)
    )


def _is_statement(line: str) -> bool:
    # "return a list or a dict?" is a question, whatever word it opens with.
    return bool(_STATEMENT.match(line)) and not line.rstrip().endswith("?")


def _drop_code_lines(text: str) -> str:
    kept: list[str] = []
    in_body = False  # inside the indented body of an unfenced def / class
    for line in text.split("\n"):
        if in_body and (not line.strip() or line[0] in " \t"):
            kept.append("")
            continue
        in_body = bool(_BLOCK_OPENER.match(line))
        kept.append("" if in_body or _is_statement(line) else line)
    return "\n".join(kept)


def prose(text: str) -> str:
    r"""Return a message without the code in it, so that only its prose asks questions.

    Why: the simulated human states the facts whose words a message uses, so an agent
    could otherwise paste keyword-laden code to have facts stated it never asked about.

    Dropped, each replaced by a line break (a clause boundary):

    * fenced blocks (with or without a language tag; an unclosed fence runs to the end);
    * backtick spans that look like code: code punctuation such as ``(``, ``=`` or
      ``:``, a line break, more than three words, or a keyword then more (``return x``).
      A backticked name or short phrase (``late_fee``) is prose and stays;
    * unfenced Python: a ``def`` or ``class`` line with its indented body, and lines
      opening with ``return``, ``import``, ``from ... import``, a decorator or an
      assignment, unless the line ends with ``?`` (then it is a question).

    Example:
        >>> prose("Is there a fee?\n```python\ndef f(grace):\n    return 0\n```")
        'Is there a fee?\n\n'

    """
    text = _FENCED.sub("\n", text)
    text = _INLINE.sub(lambda m: "\n" if _inline_is_code(m.group(1)) else m.group(0), text)
    return _drop_code_lines(text)
