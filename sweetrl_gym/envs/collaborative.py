"""What every ColBench environment shares: the dialogue with a simulated human."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym

from sweetrl_gym.actions import ParsedAction, parse_action
from sweetrl_gym.simulators import Simulator, SimulatorError
from sweetrl_gym.spaces import Utterance

__all__ = ["CollaborativeEnv", "check_max_turns", "format_dialogue", "turn_notice"]

_MAX_MESSAGE_CHARS = 1_000_000


def turn_notice(left: int) -> str:
    """Return what the human's reply ends with when the agent is told its turns left.

    Not in the official environment (its agent is never told): an option, because the
    decision to answer depends on how many messages are left, which an agent otherwise
    has to count from the dialogue.
    """
    if left == 1:
        return " (One message left: your next message is your final answer.)"
    return f" ({left} messages left.)"


def check_max_turns(max_turns: Any) -> None:
    """Refuse a turn limit that is not a positive integer (before any task is loaded).

    Raises:
        ValueError: Naming the value.

    """
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be an integer of at least 1, got {max_turns!r}")


class CollaborativeEnv(gym.Env[str, str]):
    """An agent and a simulated human talk until the agent answers or runs out of turns.

    The episode starts with the human's vague request. Each step the agent sends a
    message (the action); the human answers (the observation). A message containing
    ``I WANT TO ANSWER:`` ends the episode with the text after it as the answer; after
    ``max_turns`` agent messages the last one is the answer. If a message contains
    ``OUTPUT:``, only the text after the first ``OUTPUT:`` counts.

    Subclasses load ``tasks`` and score the answer in :meth:`_finish`; they may react to
    every agent message in :meth:`_on_message` and add to ``info`` in :meth:`_extra_info`.
    They name the instructions of the agent that plays them in :attr:`agent_prompt`.

    Attributes:
        agent_prompt: The system prompt of the agent that plays this environment (what
            the task is, how to answer). It is not part of the observation or of
            ``info["messages"]``: rollouts hand it to agents that have no system prompt
            of their own (see :func:`agents.prompts.prompt_for`).

    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}
    agent_prompt: ClassVar[str | None] = None

    def __init__(
        self,
        *,
        tasks: Sequence[Any],
        split: str,
        simulator: Simulator,
        max_turns: int,
        render_mode: str | None,
        max_reply_chars: int,
        turn_notice: bool = False,
    ):
        check_max_turns(max_turns)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        if not callable(getattr(simulator, "reply", None)):
            raise TypeError("simulator must have a reply(task, messages) -> str method")
        self.tasks = list(tasks)
        self._by_id = {task.task_id: i for i, task in enumerate(self.tasks)}
        self.split = split
        self.simulator = simulator
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.max_reply_chars = max_reply_chars
        self.turn_notice = bool(turn_notice)
        self.observation_space = Utterance(_MAX_MESSAGE_CHARS)
        self.action_space = Utterance(_MAX_MESSAGE_CHARS)
        self._task: Any = None
        self._messages: list[dict[str, str]] = []
        self._turn = 0
        self._finished = False

    @property
    def task(self) -> Any:
        """The task of the current episode."""
        if self._task is None:
            raise RuntimeError("call reset() first")
        return self._task

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode.

        Args:
            seed: Seeds ``self.np_random``, which draws the task when no option names it.
            options: ``{"task_index": i}`` or ``{"task_id": "..."}``.

        Returns:
            The human's request and the info dict.

        """
        super().reset(seed=seed)
        self._task = self.tasks[self._task_index(options or {})]
        self._messages = [{"role": "user", "content": self._task.problem_description}]
        self._turn = 0
        self._finished = False
        self._on_reset()
        return self._task.problem_description, self._info()

    def _task_index(self, options: dict[str, Any]) -> int:
        unknown = set(options) - {"task_index", "task_id"}
        if unknown:
            raise ValueError(
                f"unknown reset options {sorted(unknown)}; use 'task_index' or 'task_id'"
            )
        if "task_index" in options and "task_id" in options:
            raise ValueError("give either 'task_index' or 'task_id', not both")
        if "task_id" in options:
            task_id = options["task_id"]
            if task_id not in self._by_id:
                raise KeyError(
                    f"unknown task_id {task_id!r} in the {self.split} split "
                    f"({len(self.tasks)} tasks)"
                )
            return self._by_id[task_id]
        if "task_index" in options:
            index = options["task_index"]
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(f"task_index must be an int, got {type(index).__name__}")
            if not 0 <= index < len(self.tasks):
                raise IndexError(f"task_index {index} out of range: {len(self.tasks)} tasks")
            return index
        return int(self.np_random.integers(len(self.tasks)))

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send the agent's message; get the human's reply (or the final score)."""
        if self._task is None:
            raise RuntimeError("call reset() before step()")
        if self._finished:
            raise RuntimeError("the episode has ended; call reset() to start a new one")
        if not isinstance(action, str):
            raise TypeError(
                f"action must be a str (the agent's message), got {type(action).__name__}"
            )
        if len(action) > _MAX_MESSAGE_CHARS:
            raise ValueError(
                f"action is {len(action)} characters; the limit is {_MAX_MESSAGE_CHARS}"
            )
        self._turn += 1
        self._messages.append({"role": "assistant", "content": action})
        parsed = self._parse(action)
        self._on_message(parsed)
        limit = self._turn >= self.max_turns
        if parsed.is_answer or limit:
            answer = parsed.answer if parsed.answer is not None else parsed.message
            reward, details = self._finish(answer)
            self._finished = True
            info = self._info()
            info.update(answer=answer, turn_limit_reached=not parsed.is_answer, **details)
            return "", reward, True, False, info
        reply = self._ask_human()
        if self.turn_notice:
            reply += turn_notice(self.max_turns - self._turn)
        self._messages.append({"role": "user", "content": reply})
        return reply, 0.0, False, False, self._info()

    def _ask_human(self) -> str:
        # The human sees what counts of each agent message (the text after OUTPUT:).
        view = [
            {"role": m["role"], "content": parse_action(m["content"]).message}
            if m["role"] == "assistant"
            else dict(m)
            for m in self._messages
        ]
        reply = self.simulator.reply(self.task, view)
        if not isinstance(reply, str):
            raise SimulatorError(
                f"simulator {getattr(self.simulator, 'name', self.simulator)!r} returned "
                f"{type(reply).__name__}, not str"
            )
        return reply.strip()[: self.max_reply_chars]

    def _parse(self, action: str) -> ParsedAction:
        """Cut an agent message into what counts and the answer (our rule by default)."""
        return parse_action(action)

    def _on_reset(self) -> None:
        """Prepare the new episode's task (called by :meth:`reset`)."""

    def _on_message(self, parsed: ParsedAction) -> None:
        """React to an agent message before the human answers (called by :meth:`step`)."""

    def _finish(self, answer: str) -> tuple[float, dict[str, Any]]:
        """Score the final answer: return the reward and what to add to ``info``."""
        raise NotImplementedError

    def _extra_info(self) -> dict[str, Any]:
        """Return environment-specific ``info`` entries for every step."""
        return {}

    def _info(self) -> dict[str, Any]:
        task = self.task
        info = {
            "messages": [dict(m) for m in self._messages],
            "turn": self._turn,
            "task_id": task.task_id,
            "reference": task.reference(),
        }
        info.update(self._extra_info())
        return info

    def render(self) -> Any:
        """Return (``"ansi"``) or print (``"human"``) the dialogue so far."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        text = format_dialogue(self._messages)
        if self.render_mode == "human":
            print(text)
            return None
        return text


def format_dialogue(messages: Sequence[dict[str, str]]) -> str:
    """Format a chat as text, one block per message."""
    names = {"user": "HUMAN", "assistant": "AGENT", "system": "SYSTEM"}
    return "\n".join(f"[{names.get(m['role'], m['role'])}] {m['content']}" for m in messages) + "\n"
