"""What an agent is, as recorded with its episodes: a resume must continue the same one."""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

__all__ = ["describe_agent", "description_differences"]

# Settings that change speed or memory, not what an agent says.
_NOT_SETTINGS = frozenset({"batch_size", "max_concurrency"})
_LONG_TEXT = 64


def describe_agent(agent: object) -> dict[str, Any]:
    """Return the agent's kind and the settings it was built with, JSON-ready.

    The kind is the nearest library class (``TransformersAgent``, ``RandomAgent``; a
    subclass of one is still its parent) or, for one's own agent, its class name. The
    settings are the kind's constructor parameters that the agent keeps as public
    ``str``/number/``bool``/``None`` attributes (temperature, seed, system prompt, ...;
    long texts as a short hash), and its ``name`` (a local model's path or hub id);
    batch sizes and concurrency are left out: they do not change what the agent says.
    An agent that takes each environment's prompt (``own_system_prompt`` false) records
    ``system_prompt: "environment"``.

    Args:
        agent: Any agent.

    Returns:
        ``{"kind": ..., setting: value, ...}``.

    """
    kind = next((c for c in type(agent).__mro__ if c.__module__.startswith("agents.")), type(agent))
    try:
        parameters = set(inspect.signature(kind.__init__).parameters)
    except (TypeError, ValueError):  # a builtin __init__: no parameters to read
        parameters = set()
    description: dict[str, Any] = {"kind": kind.__name__}
    attributes = getattr(agent, "__dict__", {})
    for key in sorted((parameters | {"name"}) & set(attributes)):
        value = attributes[key]
        if key.startswith("_") or key in _NOT_SETTINGS:
            continue
        if isinstance(value, str) and len(value) > _LONG_TEXT:
            value = "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:16]
        if value is None or isinstance(value, (str, int, float, bool)):
            description[key] = value
    if "system_prompt" in description and getattr(agent, "own_system_prompt", None) is False:
        description["system_prompt"] = "environment"
    return description


def description_differences(recorded: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Name what differs between two descriptions: ``["temperature: 0.5 then, 1.0 now"]``."""
    return [
        f"{key}: {recorded.get(key, '(unset)')!r} then, {current.get(key, '(unset)')!r} now"
        for key in sorted(set(recorded) | set(current))
        if recorded.get(key) != current.get(key)
    ]
