"""Type checks of settings that arrive as text (TOML files, ``--set`` overrides, JSON).

A wrong type must fail when a run is configured, by the setting's name, not as
``'>' not supported between 'str' and 'int'`` hours later. Standard library only, so
config files can be checked without importing torch.
"""

from __future__ import annotations

import math
import types
import typing
from typing import Any

__all__ = ["describe_type", "is_finite_number", "matches_type"]

_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def is_finite_number(value: Any) -> bool:
    """Whether ``value`` is an int or float other than NaN and infinity (a bool is not).

    Args:
        value: A value read from a setting, a file or a server's answer.

    Returns:
        Whether arithmetic on it means what it says.

    """
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def matches_type(value: Any, hint: Any) -> bool:
    """Whether ``value`` fits an annotation: an int fits a float, a bool fits no number.

    Args:
        value: The setting's value.
        hint: A resolved annotation: a class, ``X | Y``, ``Optional[X]``,
            ``tuple[X, ...]`` or ``list[X]``. Other annotations (callables, ``Any``)
            accept anything: the code that uses them checks them.

    Returns:
        Whether the value is of that type (a list stands for a tuple).

    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(matches_type(value, option) for option in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint in (int, float):
        numbers = (int, float) if hint is float else (int,)
        return isinstance(value, numbers) and not isinstance(value, bool)
    if origin in (tuple, list):
        args = typing.get_args(hint)
        if not isinstance(value, (tuple, list)):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(matches_type(item, args[0]) for item in value)
        return True
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def describe_type(hint: Any) -> str:
    """Name an annotation for an error message: ``"a number or None"``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(describe_type(option) for option in typing.get_args(hint))
    if hint is type(None):
        return "None"
    if hint in (list, tuple) or typing.get_origin(hint) in (tuple, list):
        return "a list"
    return _NAMES.get(hint, getattr(hint, "__name__", str(hint)))
