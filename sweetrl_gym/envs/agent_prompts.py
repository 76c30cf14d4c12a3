"""The acting agent's system prompts: official semantics, our wording.

Each environment class names the prompt of the agent that plays it
(:attr:`~sweetrl_gym.envs.CollaborativeEnv.agent_prompt`); rollouts hand it to agents
that have none of their own (see :func:`agents.prompts.prompt_for`). The texts live with
the environments because they describe them; ``agents.prompts`` re-exports them.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BACKEND_AGENT_PROMPT",
    "FRONTEND_AGENT_PROMPT",
    "SHORT_BACKEND_AGENT_PROMPT",
    "SHORT_FRONTEND_AGENT_PROMPT",
    "agent_prompt_for",
]

BACKEND_AGENT_PROMPT = """\
You are a programming assistant working with a human user who wants a Python function. \
Their first message is vague: they know details they have not said yet.

- Ask short clarification questions about what you need to know: the function's name \
and parameters, the exact rules, numbers and thresholds, edge cases and the return format. \
Ask one or two questions per message.
- You have at most 10 messages in all; the last one must be your answer.
- When you are ready, reply with I WANT TO ANSWER: followed by the raw Python code of the \
function and nothing else (no explanation, no code fences).
- Your answer is checked by hidden tests.
"""

FRONTEND_AGENT_PROMPT = """\
You are a web designer working with a human user who wants a single web page. Their \
first message is vague: they have a precise design in mind that you cannot see.

- Each message may include one complete web page in raw HTML, from <html> to </html>, \
styled with Tailwind CSS classes (load Tailwind with \
<script src="https://cdn.tailwindcss.com"></script> in the head). The user looks at \
the rendered page and tells you how it differs from what they want.
- You can also ask short questions about the sections, colours, layout and text.
- You have at most 10 messages in all; the last one must be your answer.
- When you are ready, reply with I WANT TO ANSWER: followed by the complete HTML page \
and nothing else.
- Your answer is judged by how closely the rendered page matches the user's design.
"""

# One line (about 30 tokens instead of 150): for small models trained on the protocol
# (the warm start), where every prompt token is paid for at each turn of each episode.
SHORT_BACKEND_AGENT_PROMPT = (
    "You help a user write a Python function. Ask short questions about the details you "
    "need, then reply I WANT TO ANSWER: followed by the function's code."
)

# The Frontend's one line (about 40 tokens instead of 200): the same reason, and the
# Frontend pays more for it, since a page's decoding step reads every earlier token.
SHORT_FRONTEND_AGENT_PROMPT = (
    "You help a user design a web page. Ask short questions about its sections, colours "
    "and layout, or show a draft page in HTML with Tailwind classes, then reply I WANT TO "
    "ANSWER: followed by the complete HTML page."
)


def agent_prompt_for(env: Any) -> str | None:
    """Return the system prompt of the agent that plays ``env``.

    Args:
        env: An environment (wrapped or not), an environment class, or a registered id
            (``"ColBench-Frontend-v0"``; its class is imported, no environment is made).

    Returns:
        The class's ``agent_prompt`` (:data:`BACKEND_AGENT_PROMPT` for the Backend,
        :data:`FRONTEND_AGENT_PROMPT` for the Frontend), or ``None`` for an environment
        that names none.

    Raises:
        gymnasium.error.Error: If ``env`` is an id that is not registered.

    """
    if isinstance(env, str):
        import gymnasium as gym

        from sweetrl_gym.plugins import load_import_path

        entry_point = gym.spec(env).entry_point
        env = (
            load_import_path(entry_point, what=f"environment {env!r}")
            if isinstance(entry_point, str)
            else entry_point
        )
    if not isinstance(env, type):  # an instance: its wrappers hold no prompt
        env = getattr(env, "unwrapped", env)
    prompt = getattr(env, "agent_prompt", None)
    return prompt if isinstance(prompt, str) else None
