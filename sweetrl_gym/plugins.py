"""Objects named by an import path (``package.module:attribute``) or by a package's entry point.

Users bring their own algorithms and agents either way: ``mypkg.algos:MyAlgorithm`` from
anything importable (a package on ``PYTHONPATH``), or a short name that an installed
package declares in one of our entry-point groups (:data:`ALGORITHM_GROUP`,
:data:`AGENT_GROUP`), e.g. in its ``pyproject.toml``::

    [project.entry-points."sweetrl_gym.algorithms"]
    my-algorithm = "mypkg.algos:MyAlgorithm"

Every failure is a :class:`PluginError` that names the spec, the module and why.
"""

from __future__ import annotations

import difflib
import importlib
import re
from importlib import metadata
from typing import Any

__all__ = [
    "AGENT_GROUP",
    "ALGORITHM_GROUP",
    "PluginError",
    "entry_point_names",
    "is_import_path",
    "load_entry_point",
    "load_import_path",
]

ALGORITHM_GROUP = "sweetrl_gym.algorithms"
"""Entry-point group of algorithm classes (``sweetrl compare``'s ``methods.run``, ``--algo``)."""
AGENT_GROUP = "sweetrl_gym.agents"
"""Entry-point group of agent classes or factories (``eval``/``collect``/``play --agent``)."""

_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class PluginError(ValueError):
    """A named object could not be loaded; the message says which, from where and why."""


def is_import_path(spec: str) -> bool:
    """Whether ``spec`` reads ``package.module:attribute`` (the attribute may be dotted)."""
    return bool(_IMPORT_PATH.match(spec))


def load_import_path(spec: str, *, what: str) -> Any:
    """Import ``package.module`` and return its ``attribute`` (``a.b`` walks attributes).

    Args:
        spec: ``package.module:attribute``.
        what: What is being loaded, for messages (``"algorithm"``, ``"agent"``).

    Raises:
        PluginError: If ``spec`` is not an import path, the module fails to import (with
            the import's own error), or it has no such attribute (with did-you-mean).

    """
    if not is_import_path(spec):
        raise PluginError(f"{what} {spec!r} is not an import path of the form package.module:name")
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as err:
        raise PluginError(
            f"{what} {spec!r}: importing module {module_name!r} failed: {type(err).__name__}: {err}"
        ) from err
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            public = [name for name in dir(value) if not name.startswith("_")]
            close = difflib.get_close_matches(part, public, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise PluginError(
                f"{what} {spec!r}: module {module_name!r} has no attribute {attribute!r}{hint}"
            )
        value = getattr(value, part)
    return value


def entry_point_names(group: str) -> list[str]:
    """Return the names installed packages declare in the entry-point ``group``, sorted."""
    return sorted({point.name for point in metadata.entry_points(group=group)})


def load_entry_point(name: str, group: str, *, what: str) -> Any:
    """Load the object an installed package declares as ``name`` in ``group``.

    Raises:
        KeyError: If no installed package declares ``name`` in ``group``.
        PluginError: If loading it fails (naming the package's module and the error).

    """
    points = [point for point in metadata.entry_points(group=group) if point.name == name]
    if not points:
        raise KeyError(name)
    point = points[0]
    try:
        return point.load()
    except Exception as err:
        package = point.dist.name if point.dist is not None else "an installed package"
        raise PluginError(
            f"{what} {name!r} (entry point of {package} in {group}: {point.value}): loading "
            f"failed: {type(err).__name__}: {err}"
        ) from err
