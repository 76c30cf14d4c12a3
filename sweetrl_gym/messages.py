"""OpenAI-format chats: the one check every agent, client and critic input goes through."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["validate_messages"]


def validate_messages(
    messages: Any, *, where: str = "messages", text_only: bool = False
) -> list[dict[str, Any]]:
    """Check an OpenAI-format chat and return it as a list of plain dicts.

    Args:
        messages: A non-empty sequence of mappings, each with a string ``role`` and a
            string ``content`` (or, unless ``text_only``, a list of OpenAI content
            parts: dicts with a ``type``, e.g. ``{"type": "image_url", ...}``).
        where: What the chat is, for error messages (``"conversation 3"``).
        text_only: Require string contents and keep only ``role`` and ``content`` (what
            a chat template reads); otherwise every key of each message is kept.

    Returns:
        Copies of the messages.

    Raises:
        TypeError: If ``messages`` or one of its messages is not of the right type.
        ValueError: If the chat is empty or a message lacks its role or content.

    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise TypeError(
            f"{where} must be a list of {{'role': ..., 'content': ...}} dicts, "
            f"got {type(messages).__name__}"
        )
    if not messages:
        raise ValueError(f"{where} is empty: a chat needs at least one message")
    chat = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise TypeError(f"{where}: message {i} must be a dict, got {type(message).__name__}")
        role = message.get("role")
        if not isinstance(role, str):
            raise ValueError(f"{where}: message {i} needs a string 'role', got {role!r:.80}")
        content = message.get("content")
        if text_only and not isinstance(content, str):
            raise ValueError(
                f"{where}: message {i} ({role}) needs a string 'content', got {content!r:.80}"
            )
        if not (isinstance(content, str) or _is_content_parts(content)):
            raise ValueError(
                f"{where}: message {i} needs a string 'content' or a list of content parts "
                f"(dicts with a 'type'), got {content!r:.80}"
            )
        chat.append({"role": role, "content": content} if text_only else dict(message))
    return chat


def _is_content_parts(content: Any) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(part, Mapping) and isinstance(part.get("type"), str) for part in content)
    )
