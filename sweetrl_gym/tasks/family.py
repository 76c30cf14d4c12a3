"""The building block of the bundled task generator: a family of personalised functions.

A family is one kind of request ("work out a late fee", "clean up a product title")
whose details vary from user to user. Each detail is a :class:`Fact` with a handful of
options and a *default*: the value someone would write after reading the vague request
alone. The generator draws a user (one option per fact), renders the reference function,
and keeps the tests that tell every wrong option from the right one.

Writing a family::

    class LateFee(Family):
        name = "late_fee"
        domain = "money"
        function_names = ("late_fee", "compute_late_fee", "overdue_charge")
        params = ("days_late", "balance")
        descriptions = ("I need a function that works out the late fee on an overdue bill.",)
        facts = (
            Fact("grace_days", "threshold", options=(0, 3, 5), default=0,
                 keywords=("grace", "period", "days"),
                 answer="There is a grace period of {v} days before any fee."),
        )

        def body(self, v):
            return f'''
            if days_late <= {v["grace_days"]}:
                return 0.0
            return round(balance * 0.01 * days_late, 2)
            '''

        def inputs(self, v, rng):
            return [(d, b) for d in range(0, 12, 2) for b in (80.0, 155.5)]
"""

from __future__ import annotations

import random
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["Fact", "Family", "Signature"]

_QUOTED_SIGNATURE = re.compile(r"`([A-Za-z_]\w*)\(([^`]*)\)`")


@dataclass(frozen=True)
class Fact:
    """A hidden detail of a family, with its possible values.

    Attributes:
        key: Name of the detail, unique within the family; the key in ``v`` for ``body``.
        topic: Kind of detail, one of :data:`sweetrl_gym.simulators.TOPICS` (e.g.
            ``"threshold"``, ``"rate"``, ``"rounding"``, ``"boundary"``, ``"tie_break"``,
            ``"edge_case"``, ``"return_format"``, ``"ordering"``, ``"case"``, ``"unit"``,
            ``"rule"``).
        options: Possible values; plain JSON data (numbers, strings, bools, None, lists).
        default: The value an answer written from the description alone would use. Must
            be one of ``options``.
        keywords: Words a question about this detail would use (beyond the topic's
            generic words). They must tell this fact apart from the family's others.
        answer: The user's one-sentence statement of the detail: a format string with
            ``{v}``, a mapping option -> sentence (list options are looked up as tuples)
            or a callable ``value -> str``. Different options must give different
            sentences.

    """

    key: str
    topic: str
    options: tuple[Any, ...]
    default: Any
    keywords: tuple[str, ...]
    answer: str | Mapping[Any, str] | Callable[[Any], str]

    def __post_init__(self) -> None:
        if self.default not in self.options:
            raise ValueError(f"fact {self.key!r}: default {self.default!r} not in options")
        if len(self.options) < 2:
            raise ValueError(f"fact {self.key!r} needs at least two options")

    def state(self, value: Any) -> str:
        """Return the user's sentence for ``value``."""
        if isinstance(self.answer, Mapping):
            return self.answer[tuple(value) if isinstance(value, list) else value]
        if callable(self.answer):
            return self.answer(value)
        return self.answer.format(v=value)


@dataclass(frozen=True)
class Signature:
    """A function name and its parameters in call order."""

    name: str
    params: tuple[str, ...]

    def header(self) -> str:
        """Return ``def name(a, b):``."""
        return f"def {self.name}({', '.join(self.params)}):"

    def call(self, args_by_name: dict[str, Any]) -> str:
        """Return the call expression for keyword-free, positional ``args_by_name``."""
        return f"{self.name}({', '.join(repr(args_by_name[p]) for p in self.params)})"

    def display(self) -> str:
        """Return ``name(a, b)`` for sentences."""
        return f"{self.name}({', '.join(self.params)})"

    @classmethod
    def find_in(cls, text: str) -> Signature | None:
        """Return the first signature written as ```name(a, b)``` in ``text``, if any."""
        match = _QUOTED_SIGNATURE.search(text)
        if match is None:
            return None
        params = tuple(p.strip() for p in match.group(2).split(",") if p.strip())
        return cls(match.group(1), params)


class Family:
    """A kind of personalised function task; subclass it and fill the class attributes.

    Class attributes:
        name: Unique family id (snake_case).
        domain: Broad area (``"money"``, ``"dates"``, ``"text"``, ``"scoring"``,
            ``"inventory"``, ``"scheduling"``, ``"grading"``, ...).
        function_names: Possible function names; the first is the default guess.
        params: Parameter names in their natural order (the default guess).
        descriptions: Vague first requests; none may reveal a fact's value.
        facts: The hidden details.
    """

    name: ClassVar[str]
    domain: ClassVar[str]
    function_names: ClassVar[tuple[str, ...]]
    params: ClassVar[tuple[str, ...]]
    descriptions: ClassVar[tuple[str, ...]]
    facts: ClassVar[tuple[Fact, ...]]

    def body(self, v: dict[str, Any]) -> str:
        """Return the function body for fact values ``v`` (any common indentation).

        The body refers to parameters by the names in :attr:`params` and may use
        ``import`` lines and helper functions defined inside it.
        """
        raise NotImplementedError

    def inputs(self, v: dict[str, Any], rng: random.Random) -> Sequence[tuple[Any, ...]]:
        """Return candidate test inputs, each a tuple in :attr:`params` order.

        Give at least 20, mixing typical values with the boundaries the facts care
        about (exactly at a threshold, ties, empty input, ...). Inputs whose reference
        output is ``None`` or an exception are dropped; the generator keeps the 10 that
        best tell wrong options from the right one.
        """
        raise NotImplementedError

    # -- used by the generator -------------------------------------------------------

    def signature_options(self) -> list[Signature]:
        """Return the possible signatures; the first is the default guess."""
        orders = [tuple(self.params)]
        if len(self.params) >= 2:
            swapped = (self.params[1], self.params[0], *self.params[2:])
            orders.append(swapped)
        return [Signature(name, order) for name in self.function_names for order in orders]

    def render(self, v: dict[str, Any], signature: Signature) -> str:
        """Return the full reference source for fact values ``v``."""
        body = textwrap.dedent(self.body(v)).strip("\n")
        return signature.header() + "\n" + textwrap.indent(body, "    ") + "\n"
