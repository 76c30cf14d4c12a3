"""Recognising what a question is about: tokens, stems and topic vocabularies."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["GENERIC_REQUEST_WORDS", "TOPICS", "split_clauses", "stems"]

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
