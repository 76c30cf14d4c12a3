"""Your own agent by name: an import path or an installed package's entry point.

``sweetrl eval --agent mypkg.agents:MyAgent`` (and ``collect``, ``play``) and
:func:`load_agent` take an agent from anything importable, or by a short name that an
installed package declares in the entry-point group ``sweetrl_gym.agents``
(:data:`~sweetrl_gym.plugins.AGENT_GROUP`), e.g. in its ``pyproject.toml``::

    [project.entry-points."sweetrl_gym.agents"]
    my-agent = "mypkg.agents:MyAgent"

The named object is an agent class, a function that returns an agent (both called with
the keyword options given, none on the command line), or an agent itself.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any

from agents.base import Agent, PrivilegedAgent
from sweetrl_gym.plugins import (
    AGENT_GROUP,
    PluginError,
    entry_point_names,
    is_import_path,
    load_entry_point,
    load_import_path,
)

__all__ = ["AGENT_GROUP", "agent_entry_points", "is_agent_spec", "load_agent"]


def agent_entry_points() -> list[str]:
    """Return the agent names installed packages declare (group ``sweetrl_gym.agents``)."""
    return entry_point_names(AGENT_GROUP)


def is_agent_spec(spec: str) -> bool:
    """Whether ``spec`` is an import path or the name of an installed agent entry point."""
    return is_import_path(spec) or spec in agent_entry_points()


def load_agent(spec: Any, **options: Any) -> Agent | PrivilegedAgent:
    """Return the agent ``spec`` names, built with ``options``.

    Args:
        spec: ``"package.module:name"`` (``name`` may be dotted), the name of an entry
            point in the group ``sweetrl_gym.agents``, or the named object itself. The
            object is an agent class or a factory function, called with ``options``,
            or an agent (anything with a callable ``act``), returned as it is.
        **options: Keyword arguments for the class or the factory.

    Returns:
        The agent.

    Raises:
        PluginError: If ``spec`` names nothing (no such module, attribute or entry
            point: the message says which and why), the class or factory does not take
            ``options``, or what it returns has no callable ``act`` (the message says
            what it returned). The class or factory's own errors pass through.

    """
    if isinstance(spec, str):
        target = _load(spec)
        name = spec
    else:
        target = spec
        name = getattr(spec, "__qualname__", type(spec).__name__)
    if _is_agent(target):
        if options:
            raise PluginError(
                f"agent {name!r} is an agent object, not a class or factory: it takes no "
                f"options (got {', '.join(sorted(options))})"
            )
        return target
    if not callable(target):
        raise PluginError(
            f"agent {name!r} is {_describe(target)}: neither an agent (no callable act), "
            "nor an agent class or a function that returns one"
        )
    _check_arguments(target, options, name)
    agent = target(**options)
    if not _is_agent(agent):
        called = f"{name}({', '.join(f'{k}=...' for k in sorted(options))})"
        raise PluginError(
            f"agent {name!r}: {called} returned {_describe(agent)}, which is not an agent: "
            "an agent has an act(batch) method"
        )
    return agent


def _load(spec: str) -> Any:
    if is_import_path(spec):
        return load_import_path(spec, what="agent")
    try:
        return load_entry_point(spec, AGENT_GROUP, what="agent")
    except KeyError:
        installed = agent_entry_points()
        listed = ", ".join(installed) if installed else "none installed"
        close = difflib.get_close_matches(spec, installed, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise PluginError(
            f"agent {spec!r} is neither an import path (package.module:name) nor an entry "
            f"point of the group {AGENT_GROUP} ({listed}){hint}"
        ) from None


def _is_agent(value: Any) -> bool:
    return not isinstance(value, type) and callable(getattr(value, "act", None))


def _check_arguments(target: Any, options: dict[str, Any], name: str) -> None:
    """Refuse a class or factory that cannot take ``options`` before calling it."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return
    try:
        signature.bind(**options)
    except TypeError as err:
        given = f"the options {', '.join(sorted(options))}" if options else "no arguments"
        raise PluginError(f"agent {name!r} cannot be called with {given}: {err}") from None


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} (type {type(value).__name__})"
