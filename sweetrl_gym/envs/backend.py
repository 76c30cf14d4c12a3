"""ColBench Backend Programming as a Gymnasium environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from sweetrl_gym.actions import parse_action
from sweetrl_gym.sandbox import Sandbox, TestReport, default_sandbox
from sweetrl_gym.simulators import RuleBasedSimulator, Simulator, SimulatorError
from sweetrl_gym.spaces import Utterance
from sweetrl_gym.tasks import BackendTask, load_backend_tasks
from sweetrl_gym.tasks.loaders import TaskSource

__all__ = ["ColBenchBackendEnv"]

_MAX_MESSAGE_CHARS = 1_000_000


class ColBenchBackendEnv(gym.Env[str, str]):
    """An agent collaborates with a simulated human to write a Python function.

    The episode starts with the human's vague request. Each step the agent sends a
    message (the action); the human answers (the observation). A message containing
    ``I WANT TO ANSWER:`` ends the episode with the code after it as the answer; after
    ``max_turns`` agent messages the last one is the answer. If a message contains
    ``OUTPUT:``, only the text after the first ``OUTPUT:`` counts. The answer runs in
    the sandbox against the hidden tests; the final reward is the fraction passed
    (every other step: 0).

    ``info`` on every step: ``messages`` (the whole chat, OpenAI format, agent messages
    as sent), ``turn`` (agent messages so far), ``task_id`` and ``reference`` — the
    training-time information (reference code, tests, hidden facts) for critics. Never
    show ``reference`` to the acting policy. On the final step also: ``answer``,
    ``success``, ``tests_passed``, ``tests_total``, ``test_report`` and
    ``turn_limit_reached``.

    Args:
        split: ``"train"`` or ``"test"``.
        tasks: ``None``/``"bundled"``, a path to the official JSONL, or a list of tasks.
        simulator: The simulated human (default: :class:`RuleBasedSimulator`).
        max_turns: Agent messages before the last one is taken as the answer.
        render_mode: ``"ansi"`` (``render()`` returns the dialogue) or ``"human"``
            (prints it).
        timeout_s: Seconds each hidden test may run.
        official_parity: Score with the official comparison rule.
        max_reply_chars: The human's replies are cut to this length (official: 400).
        sandbox: The sandbox to score in (default: the shared one).

    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        split: str = "train",
        tasks: TaskSource | None = None,
        simulator: Simulator | None = None,
        max_turns: int = 10,
        render_mode: str | None = None,
        timeout_s: float = 1.0,
        official_parity: bool = False,
        max_reply_chars: int = 400,
        sandbox: Sandbox | None = None,
    ):
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        if simulator is not None and not callable(getattr(simulator, "reply", None)):
            raise TypeError("simulator must have a reply(task, messages) -> str method")
        self.tasks: list[BackendTask] = load_backend_tasks(
            "bundled" if tasks is None else tasks, split=split
        )
        self._by_id = {task.task_id: i for i, task in enumerate(self.tasks)}
        self.split = split
        self.simulator = simulator if simulator is not None else RuleBasedSimulator()
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.timeout_s = timeout_s
        self.official_parity = official_parity
        self.max_reply_chars = max_reply_chars
        self._sandbox = sandbox
        self.observation_space = Utterance(_MAX_MESSAGE_CHARS)
        self.action_space = Utterance(_MAX_MESSAGE_CHARS)
        self._task: BackendTask | None = None
        self._messages: list[dict[str, str]] = []
        self._turn = 0
        self._finished = False

    @property
    def task(self) -> BackendTask:
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
        parsed = parse_action(action)
        limit = self._turn >= self.max_turns
        if parsed.is_answer or limit:
            answer = parsed.answer if parsed.answer is not None else parsed.message
            return self._finish(answer, turn_limit_reached=not parsed.is_answer)
        reply = self._ask_human()
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

    def _finish(
        self, answer: str, turn_limit_reached: bool
    ) -> tuple[str, float, bool, bool, dict[str, Any]]:
        task = self.task
        sandbox = self._sandbox if self._sandbox is not None else default_sandbox()
        report: TestReport = sandbox.run_tests(
            answer,
            task.ground_truth,
            task.test_cases,
            self.timeout_s,
            official_parity=self.official_parity,
        )
        self._finished = True
        info = self._info()
        info.update(
            answer=answer,
            success=report.success,
            tests_passed=report.passed,
            tests_total=report.total,
            test_report=report.to_dict(),
            turn_limit_reached=turn_limit_reached,
        )
        return "", float(report.fraction), True, False, info

    def _info(self) -> dict[str, Any]:
        task = self.task
        return {
            "messages": [dict(m) for m in self._messages],
            "turn": self._turn,
            "task_id": task.task_id,
            "reference": task.reference(),
        }

    def render(self) -> str | None:
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
