"""All families of the bundled backend tasks, in their canonical (hashed) order.

Appending or changing a family changes the bundled task set: regenerate it and update
the pinned hash (see :mod:`sweetrl_gym.tasks.generator`).
"""

from __future__ import annotations

from sweetrl_gym.tasks.families import (
    dates,
    everyday,
    finance,
    grading,
    inventory,
    money,
    scheduling,
    scoring,
    text,
)
from sweetrl_gym.tasks.family import Family

__all__ = ["FAMILIES", "family_named"]

FAMILIES: tuple[Family, ...] = (
    *money.FAMILIES,
    *finance.FAMILIES,
    *dates.FAMILIES,
    *text.FAMILIES,
    *scoring.FAMILIES,
    *inventory.FAMILIES,
    *scheduling.FAMILIES,
    *grading.FAMILIES,
    *everyday.FAMILIES,
)

_names = [f.name for f in FAMILIES]
if len(set(_names)) != len(_names):
    raise RuntimeError(f"duplicate family names: {_names}")
_BY_NAME = {family.name: family for family in FAMILIES}


def family_named(name: str) -> Family:
    """Return the family called ``name`` (a task's ``family``).

    Raises:
        KeyError: If no family has that name.

    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no task family {name!r}") from None
