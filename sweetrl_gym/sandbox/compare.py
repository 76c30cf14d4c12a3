"""The rules for when a candidate's output counts as the reference's output.

Both rules compare plain data (decoded in the trusted parent process), never live
objects from untrusted code, so an object whose ``__eq__`` always says True cannot pass.
"""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from sweetrl_gym.sandbox.codec import Opaque, Tagged

__all__ = ["RaisedException", "is_usable_reference", "outputs_match"]

_REL_TOL = 1e-9
_ABS_TOL = 1e-12
# Builtin exceptions a reference raises on purpose. Others (NameError, ImportError,
# RecursionError, ...) mean the reference or the test is broken, so they never match.
# Exceptions defined by the code itself are named "module.Class" and always count.
_POLICY_EXCEPTIONS = frozenset(
    {
        "ValueError",
        "TypeError",
        "KeyError",
        "IndexError",
        "LookupError",
        "ZeroDivisionError",
        "ArithmeticError",
        "OverflowError",
        "AssertionError",
    }
)


class RaisedException:
    """Marker for a call that raised instead of returning.

    Attributes:
        type_names: Names of the exception's class and its bases, most derived first
            (builtins by bare name, others as ``module.QualName``).
        message: ``str(exception)``, truncated.

    """

    __slots__ = ("message", "type_names")

    def __init__(self, type_names: tuple[str, ...], message: str = ""):
        self.type_names = tuple(type_names)
        self.message = message

    def __repr__(self) -> str:
        name = self.type_names[0] if self.type_names else "Exception"
        return f"raise {name}({self.message!r})"


def outputs_match(expected: Any, got: Any, *, scoring: str = "ours") -> bool:
    """Return whether a candidate output ``got`` passes against the reference ``expected``.

    Default rule: Python ``==`` on plain data, except that floats (also inside
    containers) match within a relative tolerance of 1e-9, NaN matches NaN, a reference
    returning ``None`` is an ordinary expected value, and a reference that raises is
    matched by a candidate raising the same exception type (or a subclass).

    Official rule (``scoring="official"``): the test passes only when the reference
    returned something other than ``None``, neither side raised, and the outputs are
    ``==`` — the official ColBench evaluator's comparison. Values of classes the code
    defines (dataclasses, enums, other objects) never match there: reference and
    answer each define their own class, and their instances are not ``==``.

    Args:
        expected: The reference's output (or a :class:`RaisedException`).
        got: The candidate's output (or a :class:`RaisedException`).
        scoring: ``"ours"`` or ``"official"``.

    Returns:
        Whether the test passes.

    """
    if scoring == "official":
        if expected is None or isinstance(expected, RaisedException):
            return False
        if isinstance(got, RaisedException) or _has_foreign_object(got):
            return False
        try:
            return bool(expected == got)
        except Exception:
            return False
    if isinstance(expected, RaisedException):
        # The candidate must raise the reference's (deliberate) exception type or a subclass.
        return (
            is_usable_reference(expected)
            and isinstance(got, RaisedException)
            and expected.type_names[0] in got.type_names
        )
    if isinstance(got, RaisedException):
        return False
    try:
        return _close(expected, got)
    except RecursionError:
        return False


def is_usable_reference(expected: Any, *, scoring: str = "ours") -> bool:
    """Return whether a reference output defines what a passing answer must produce.

    Under the official rule only a returned value other than ``None`` does. Under ours
    any returned value does, and so does raising a deliberate error (a builtin such as
    ``ValueError`` on bad input, or an exception class the code defines); other
    exceptions (``NameError``, ``ImportError``, ...) mean the reference or the test is
    broken.
    """
    if isinstance(expected, RaisedException):
        wanted = expected.type_names[0] if expected.type_names else ""
        return scoring != "official" and (wanted in _POLICY_EXCEPTIONS or "." in wanted)
    return not (scoring == "official" and expected is None)


def _has_foreign_object(value: Any, depth: int = 0) -> bool:
    """Whether a decoded value holds an instance of a class the executed code defined."""
    if isinstance(value, (Tagged, Opaque)):
        return True
    if depth > 200:
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_foreign_object(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return any(
            _has_foreign_object(k, depth + 1) or _has_foreign_object(v, depth + 1)
            for k, v in value.items()
        )
    return False


def _close(a: Any, b: Any) -> bool:
    if _is_real(a) and _is_real(b) and (isinstance(a, float) or isinstance(b, float)):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=_ABS_TOL)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            type(a) is type(b)
            and a.keys() == b.keys()
            and all(_close(value, b[key]) for key, value in a.items())
        )
    return bool(a == b)


def _is_real(x: Any) -> bool:
    return isinstance(x, Number) and not isinstance(x, complex)
