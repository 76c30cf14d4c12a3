"""What an agent is, as recorded with its episodes: a resume must continue the same one."""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = ["describe_agent", "description_differences"]

# Settings that change speed or memory, not what an agent says.
_NOT_SETTINGS = frozenset({"batch_size", "max_concurrency", "last_prompts", "stats"})
_LONG_TEXT = 64


def describe_agent(agent: object) -> dict[str, Any]:
    """Return the agent's kind and public scalar settings, JSON-ready.

    The kind is the nearest library class (``TransformersAgent``, ``RandomAgent``; a
    test's crashing subclass is still its parent) or, for one's own agent, its class
    name. Settings are the instance's public ``str``/number/``bool``/``None``
    attributes (the model's name, temperature, seed, system prompt, ...), long texts
    as a short hash; batch sizes and concurrency are left out (they do not change what
    the agent says).

    Args:
        agent: Any agent.

    Returns:
        ``{"kind": ..., setting: value, ...}``.

    """
    kind = next(
        (c.__name__ for c in type(agent).__mro__ if c.__module__.startswith("agents.")),
        type(agent).__qualname__,
    )
    description: dict[str, Any] = {"kind": kind}
    for key, value in sorted(getattr(agent, "__dict__", {}).items()):
        if key.startswith("_") or key in _NOT_SETTINGS:
            continue
        if isinstance(value, str) and len(value) > _LONG_TEXT:
            value = "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:16]
        if value is None or isinstance(value, (str, int, float, bool)):
            description[key] = value
    return description


def description_differences(recorded: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Name what differs between two descriptions: ``["temperature: 0.5 then, 1.0 now"]``."""
    return [
        f"{key}: {recorded.get(key, '(unset)')!r} then, {current.get(key, '(unset)')!r} now"
        for key in sorted(set(recorded) | set(current))
        if recorded.get(key) != current.get(key)
    ]
