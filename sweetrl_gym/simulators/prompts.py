"""The LLM simulated human's prompt, in one of two formats: ours (default) or the official.

The official human simulator is an LLM told to play the user who asked for help, to
answer only from the hidden information (the reference solution), to say it does not
know otherwise, and to reply in two sentences. Both LLM simulators (OpenAI-compatible
and local transformers) build their chat with :func:`simulator_messages`, in one of
:data:`PROMPT_FORMATS`:

* ``"ours"`` (the default): :data:`HUMAN_SIMULATOR_PROMPT`, the official semantics in
  our words, as a system message, then the dialogue with roles swapped (the model plays
  the user). It exists because the official text is CC-BY-NC and cannot ship in this
  MIT package; it adds "never show code" (the official text does not forbid it, so its
  human may paste the reference). How the two change success rates is not measured.
* ``"official"``: the official pipeline's request, for reproducing the paper. The text
  is the official prompt file, which is CC-BY-NC and so not shipped here: read your
  copy with :func:`read_official_prompt`. It is sent as one user message (after the
  generic system message "You are a helpful assistant."), its placeholders filled with
  the request, the hidden information and the dialogue as a transcript
  (``role:content`` blocks ending in ``agent:``); 4,096 tokens at most.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweetrl_gym.official_data import HUMAN_PROMPT_FILES, REPOSITORY

__all__ = [
    "HUMAN_SIMULATOR_PROMPT",
    "OFFICIAL_MAX_TOKENS",
    "OFFICIAL_PLACEHOLDERS",
    "PROMPT_FORMATS",
    "check_human_prompt",
    "hidden_information",
    "read_official_prompt",
    "simulator_messages",
]

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

PROMPT_FORMATS = ("ours", "official")
"""How the simulated human's request is built: our wording, or the official prompt file's."""


OFFICIAL_PLACEHOLDERS = ("problem_description", "hidden_information", "dialogue_history")
"""The fields of the official Backend prompt (the Frontend one has none: it is sent as is)."""

OFFICIAL_MAX_TOKENS = 4096
"""The official simulated human's most tokens per reply (the environment keeps the first
400 characters, 1,000 on the Frontend)."""

_OFFICIAL_SYSTEM = "You are a helpful assistant."  # the generic system message it is sent after
_KINDS = tuple(HUMAN_PROMPT_FILES)


def read_official_prompt(path: str | Path, kind: str = "backend") -> str:
    """Read your copy of the official human prompt file, checked.

    Args:
        path: The file: ``prompts/human_simulator_code_prompt.txt`` (Backend) or
            ``prompts/human_simulator_html_prompt.txt`` (Frontend) of a clone of
            https://github.com/facebookresearch/sweet_rl.
        kind: ``"backend"`` or ``"frontend"``.

    Returns:
        The file's text, as is.

    Raises:
        FileNotFoundError: If there is no such file; the message names the official one.
        ValueError: If the text is not that prompt (a missing or unknown placeholder),
            naming the file and the placeholders it must have.

    """
    expected = _official_file(kind)
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(
            f"no official human prompt at {str(path)!r}: give the path of your copy of "
            f"{expected} from {REPOSITORY} (CC-BY-NC, so not shipped here; "
            f"`git clone {REPOSITORY}` fetches it)"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text ({err}); expected {expected}") from err
    try:
        return check_human_prompt(text, "official", kind)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


def check_human_prompt(prompt: Any, prompt_format: str, kind: str = "backend") -> str:
    """Return ``prompt`` if it fits ``prompt_format`` for the ``kind`` of task.

    ``"ours"`` (Backend) needs a ``{hidden_information}`` field. ``"official"`` needs the
    official file's text: on the Backend its fields are exactly
    :data:`OFFICIAL_PLACEHOLDERS`; on the Frontend it has none of them.

    Raises:
        ValueError: Saying what is wrong and, for the official format, which file and
            placeholders are expected.

    """
    if prompt_format not in PROMPT_FORMATS:
        raise ValueError(f"prompt_format must be one of {PROMPT_FORMATS}, got {prompt_format!r}")
    expected = _official_file(kind)
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"the prompt must be a non-empty string, got {prompt!r:.80}")
    if prompt_format == "ours":
        if kind == "backend" and "{hidden_information}" not in prompt:
            raise ValueError(
                "prompt must be a string with a {hidden_information} field, where the task's "
                "reference solution goes"
            )
        return prompt
    if kind == "frontend":
        found = [p for p in OFFICIAL_PLACEHOLDERS if "{" + p + "}" in prompt]
        if found:
            raise ValueError(
                f"this is not the official Frontend human prompt ({expected}): it has "
                f"{{{found[0]}}}, a field of the Backend's ({HUMAN_PROMPT_FILES['backend']}); "
                "the Frontend's is sent as is, with no placeholders"
            )
        return prompt
    must = ", ".join("{" + p + "}" for p in OFFICIAL_PLACEHOLDERS)
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(prompt) if name is not None}
    except ValueError as err:
        raise ValueError(
            f"not a format template ({err}); the official human prompt ({expected}) has the "
            f"placeholders {must}"
        ) from None
    missing = [p for p in OFFICIAL_PLACEHOLDERS if p not in fields]
    unknown = sorted(fields - set(OFFICIAL_PLACEHOLDERS))
    if missing or unknown:
        what = (
            f"missing {', '.join('{' + p + '}' for p in missing)}"
            if missing
            else f"unknown placeholder(s) {', '.join('{' + p + '}' for p in unknown)}"
        )
        raise ValueError(
            f"not the official Backend human prompt ({expected} of {REPOSITORY}): "
            f"{what}; it must have exactly the placeholders {must}"
        )
    return prompt


def hidden_information(task: Any) -> str:
    """Return the text the simulated human may draw on: the task's reference solution.

    Args:
        task: A task with a ``ground_truth`` attribute, or a mapping with that key.

    Raises:
        TypeError: If the task has no ground truth.

    """
    return _task_text(task, "ground_truth")


def simulator_messages(
    task: Any,
    messages: Sequence[Mapping[str, str]],
    prompt: str = HUMAN_SIMULATOR_PROMPT,
    *,
    prompt_format: str = "ours",
) -> list[dict[str, str]]:
    """Build the simulator model's chat, in ``prompt_format`` (see :data:`PROMPT_FORMATS`).

    ``"ours"``: the instructions as a system message, then the dialogue role-swapped
    (the human's own messages become ``assistant`` turns and the agent's ``user`` turns),
    so the chat ends with the agent's latest message, which the model answers.
    ``"official"``: the generic system message, then one user message, the official
    template filled with the task's request, its hidden information and the dialogue
    as a transcript: a ``role:content`` block per message (roles ``user`` and
    ``assistant``, each block followed by four newlines), then ``agent:``.

    Args:
        task: The task being played (its ``ground_truth`` is the hidden information;
            the official format also uses its ``problem_description``).
        messages: The episode's chat in OpenAI format (human = ``user``).
        prompt: Ours: a template with a ``{hidden_information}`` field. Official: the
            official file's text (:func:`read_official_prompt`).
        prompt_format: ``"ours"`` or ``"official"``.

    Returns:
        An OpenAI-format message list for the simulator model: a system message first.

    Raises:
        ValueError: If ``prompt_format`` is unknown.

    """
    said = [m for m in messages if m.get("role") in ("user", "assistant")]
    if prompt_format == "official":
        transcript = "".join(f"{m['role']}:{m['content']}\n\n\n\n" for m in said) + "agent:"
        filled = prompt.format(
            problem_description=_task_text(task, "problem_description"),
            hidden_information=hidden_information(task),
            dialogue_history=transcript,
        )
        return [
            {"role": "system", "content": _OFFICIAL_SYSTEM},
            {"role": "user", "content": filled},
        ]
    if prompt_format != "ours":
        raise ValueError(f"prompt_format must be one of {PROMPT_FORMATS}, got {prompt_format!r}")
    system = prompt.replace("{hidden_information}", hidden_information(task))
    swap = {"user": "assistant", "assistant": "user"}
    chat = [{"role": "system", "content": system}]
    chat += [{"role": swap[m["role"]], "content": str(m["content"])} for m in said]
    return chat


def _task_text(task: Any, field: str) -> str:
    value = task.get(field) if isinstance(task, Mapping) else getattr(task, field, None)
    if not isinstance(value, str):
        raise TypeError(f"task has no {field} text: {type(task).__name__}")
    return value


def _official_file(kind: str) -> str:
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    return HUMAN_PROMPT_FILES[kind]
