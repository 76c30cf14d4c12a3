"""What a critic reads: the turn, formatted like the policy's, plus training-time information.

SWEET-RL's asymmetric critic (and ArCHer's privileged variant) sees the reference
solution the policy never sees. The paper words it as ``"In light that the final answer
is: {ground_truth}."``; we add that sentence to the policy's system prompt so the rest of
the input is exactly what the policy saw.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

from agents.prompts import agent_history
from agents.transformers_agent import TransformersAgent
from sweetrl_gym.lm import chat_prompt
from sweetrl_gym.messages import validate_messages
from sweetrl_gym.trajectory import Turn

__all__ = [
    "FACTS_HINT",
    "HINT_POSITIONS",
    "REFERENCE_HINT",
    "critic_prompt",
    "critic_prompts",
    "hint_fields",
]

HINT_POSITIONS = ("system", "prefix")
"""Where a critic prompt puts the hint (:func:`critic_prompt`)."""

REFERENCE_HINT = "In light that the final answer is: {ground_truth}."
"""The paper's sentence giving the critic the reference solution (``str.format`` fields
name keys of :func:`hint_fields`)."""

FACTS_HINT = (
    "In light that the user knows these details, which the request leaves out and the "
    "answer needs:\n{hidden_facts}"
)
"""A Backend hint that names what the simulated human holds instead of the code it implies:
the facts that decide the hidden tests, in the user's words (:func:`hint_fields`)."""


def critic_prompts(
    policy: TransformersAgent,
    items: Sequence[tuple[Turn, Mapping[str, Any]]],
    hint_template: str | None = REFERENCE_HINT,
) -> list[str]:
    """Format each turn's state as a critic sees it.

    The turn's messages go through the policy's chat template with the policy's system
    prompt (or the conversation's own), its past turns read as its ``history`` says,
    exactly as :meth:`TransformersAgent.format_prompts` does; with a ``hint_template``
    (e.g. :data:`REFERENCE_HINT`) the hint, formatted with the turn's reference, is
    appended to that system prompt.

    Args:
        policy: Gives the chat template and the system prompt.
        items: ``(turn, reference)`` pairs; the reference is the trajectory's.
        hint_template: A ``str.format`` template over the reference's keys; ``None``:
            no hint.

    Returns:
        One prompt per item, ending with the assistant generation prompt.

    Raises:
        ValueError: If a reference lacks a key the template needs, or a turn's messages
            are malformed.

    """
    return [
        critic_prompt(policy, turn, reference, hint_template, where=f"critic prompt {index}")
        for index, (turn, reference) in enumerate(items)
    ]


def critic_prompt(
    policy: TransformersAgent,
    turn: Turn,
    reference: Mapping[str, Any],
    hint_template: str | None = REFERENCE_HINT,
    *,
    where: str = "critic prompt",
    hint_position: str = "system",
) -> str:
    """Format one turn's state as a critic sees it (see :func:`critic_prompts`).

    Args:
        policy: Gives the chat template and the system prompt.
        turn: The turn; its messages are the state.
        reference: The trajectory's training-time information.
        hint_template: ``str.format`` template over the reference's keys; ``None``: no hint.
        where: Names the turn in error messages.
        hint_position: ``"system"``: the hint ends the system prompt, inside the chat
            template. ``"prefix"`` (the official code): the hint, then the formatted
            prompt, its start token and all.

    """
    if hint_position not in HINT_POSITIONS:
        raise ValueError(f"hint_position must be one of {HINT_POSITIONS}, got {hint_position!r}")
    messages = validate_messages(turn.messages, where="the turn's messages", text_only=True)
    messages = [dict(m) for m in agent_history(messages, getattr(policy, "history", "raw"))]
    system = policy.system_prompt
    if messages and messages[0]["role"] == "system":  # the conversation brings its own
        system, messages = messages[0]["content"], messages[1:]
    hint = None if hint_template is None else _format_hint(hint_template, reference, where)
    if hint is not None and hint_position == "system":
        system = hint if system is None else f"{system}\n\n{hint}"
    prompt = chat_prompt(policy.tokenizer, messages, system)
    return prompt if hint is None or hint_position == "system" else hint + prompt


def _format_hint(template: str, reference: Mapping[str, Any], where: str) -> str:
    fields = {
        re.split(r"[.\[]", name, maxsplit=1)[0]
        for _, name, _, _ in string.Formatter().parse(template)
        if name
    }
    available = hint_fields(reference)
    missing = sorted(fields - set(available))
    if missing:
        raise ValueError(
            f"{where}: the reference has no {', '.join(map(repr, missing))} (it has "
            f"{sorted(available)}); the critic's hint {template!r} needs it — collect with "
            f"agents.collect (it records info['reference']) or turn critic_uses_reference off"
        )
    return template.format_map(available)


def hint_fields(reference: Mapping[str, Any]) -> dict[str, Any]:
    """Return the fields a hint template may name: the reference's keys and derived ones.

    Derived (only where the reference has what they come from, so any recorded buffer
    with ``facts`` gives them):

    - ``hidden_facts``: a Backend task's hidden facts that matter (those an answer written
      from the request alone gets wrong and the tests notice), one ``- sentence`` a line
      in the user's words; ``"- none"`` when no fact matters.

    Args:
        reference: A trajectory's training-time information.

    Returns:
        A new dict: ``reference``'s items and the derived fields.

    """
    fields = dict(reference)
    facts = reference.get("facts")
    if isinstance(facts, list) and "hidden_facts" not in fields:
        lines = [
            f"- {fact['answer']}"
            for fact in facts
            if isinstance(fact, Mapping) and fact.get("matters", True) and "answer" in fact
        ]
        fields["hidden_facts"] = "\n".join(lines) or "- none"
    return fields
