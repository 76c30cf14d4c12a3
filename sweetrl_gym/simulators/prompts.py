"""The LLM simulated human's prompt: official semantics, our wording.

The official human simulator is an LLM told to play the user who asked for help, to
answer only from the hidden information (the reference solution), to say it does not
know otherwise, and to reply in two sentences. Both LLM simulators (OpenAI-compatible
and local transformers) build their chat with :func:`simulator_messages`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["HUMAN_SIMULATOR_PROMPT", "hidden_information", "simulator_messages"]

HUMAN_SIMULATOR_PROMPT = """\
You are role-playing a human user who asked an AI assistant for help writing a Python \
function. You know exactly what you want: it is the hidden information below, which the \
assistant cannot see.

Rules:
- Answer the assistant's latest message using only facts from the hidden information, \
in plain words as a user would: describe names, values and rules; never show code.
- If the hidden information does not answer the question, say that you don't know.
- Do not volunteer details the assistant did not ask about.
- Reply in at most two sentences.

Hidden information:
{hidden_information}
"""


def hidden_information(task: Any) -> str:
    """Return the text the simulated human may draw on: the task's reference solution.

    Args:
        task: A task with a ``ground_truth`` attribute, or a mapping with that key.

    Raises:
        TypeError: If the task has no ground truth.

    """
    truth = (
        task.get("ground_truth")
        if isinstance(task, Mapping)
        else getattr(task, "ground_truth", None)
    )
    if not isinstance(truth, str):
        raise TypeError(f"task has no ground_truth text: {type(task).__name__}")
    return truth


def simulator_messages(
    task: Any, messages: Sequence[Mapping[str, str]], prompt: str = HUMAN_SIMULATOR_PROMPT
) -> list[dict[str, str]]:
    """Build the simulator model's chat: the instructions, then the dialogue role-swapped.

    The simulator model plays the human, so the human's own earlier messages become
    ``assistant`` turns and the agent's messages become ``user`` turns; the chat thus
    ends with the agent's latest message, which the model answers.

    Args:
        task: The task being played (its ``ground_truth`` fills ``{hidden_information}``).
        messages: The episode's chat in OpenAI format (human = ``user``).
        prompt: A template with a ``{hidden_information}`` field.

    Returns:
        An OpenAI-format message list for the simulator model.

    """
    system = prompt.replace("{hidden_information}", hidden_information(task))
    swap = {"user": "assistant", "assistant": "user"}
    chat = [{"role": "system", "content": system}]
    chat += [
        {"role": swap.get(m["role"], m["role"]), "content": str(m["content"])}
        for m in messages
        if m.get("role") in swap
    ]
    return chat
