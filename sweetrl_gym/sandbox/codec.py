"""Decoding the sandbox's tagged-JSON outputs into plain Python values (parent side)."""

from __future__ import annotations

import datetime
import decimal
import fractions
from typing import Any

__all__ = ["Opaque", "Tagged", "decode"]


class Tagged:
    """A value with no plain-data equivalent (dataclass, enum member, numpy array).

    Two tagged values are equal when tag and payload are equal.
    """

    __slots__ = ("payload", "tag")

    def __init__(self, tag: str, payload: Any):
        self.tag = tag
        self.payload = payload

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tagged) and (self.tag, self.payload) == (other.tag, other.payload)

    def __hash__(self) -> int:
        return hash((self.tag, _freeze(self.payload)))

    def __repr__(self) -> str:
        return f"<{self.tag} {self.payload!r}>"


class Opaque:
    """An arbitrary object from another process.

    It equals nothing, as ``==`` on two objects of another process would (identity).
    """

    __slots__ = ("type_name",)

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def _freeze(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_freeze(v) for v in x)
    return x


def decode(tree: Any) -> Any:
    """Rebuild a value from the worker's tagged JSON.

    Raises:
        ValueError: The tree is malformed (forged by the code under test).

    """
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    if isinstance(tree, list):
        return [decode(item) for item in tree]
    if not isinstance(tree, dict) or len(tree) != 1:
        raise ValueError("malformed value")
    ((tag, payload),) = tree.items()
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise ValueError(f"unknown tag {tag!r}")
    try:
        return decoder(payload)
    except ValueError:
        raise
    except Exception as exc:  # forged payloads: wrong types, unhashable set items, ...
        raise ValueError(f"malformed {tag}") from exc


def _pairs(payload: Any) -> dict[Any, Any]:
    return {decode(k): decode(v) for k, v in payload}


_DECODERS = {
    "int": lambda p: int(p),
    "float": lambda p: float(p),
    "tuple": lambda p: tuple(decode(x) for x in p),
    "dict": _pairs,
    "set": lambda p: {decode(x) for x in p},
    "frozenset": lambda p: frozenset(decode(x) for x in p),
    "bytes": lambda p: bytes.fromhex(p),
    "complex": lambda p: complex(float(decode(p[0])), float(decode(p[1]))),
    "decimal": lambda p: decimal.Decimal(p),
    "fraction": lambda p: fractions.Fraction(int(p[0]), int(p[1])),
    "datetime": lambda p: datetime.datetime.fromisoformat(p),
    "date": lambda p: datetime.date.fromisoformat(p),
    "time": lambda p: datetime.time.fromisoformat(p),
    "timedelta": lambda p: datetime.timedelta(days=p[0], seconds=p[1], microseconds=p[2]),
    "range": lambda p: range(int(p[0]), int(p[1]), int(p[2])),
    "enum": lambda p: Tagged("enum", str(p)),
    "dataclass": lambda p: Tagged(
        "dataclass", (str(p[0]), tuple((str(k), _freeze(decode(v))) for k, v in p[1]))
    ),
    "ndarray": lambda p: Tagged("ndarray", _freeze(decode(p))),
    "object": lambda p: Opaque(str(p)),
}
