"""ColBench Backend Programming as a Gymnasium environment."""

from __future__ import annotations

from typing import Any, ClassVar

from sweetrl_gym.envs.agent_prompts import BACKEND_AGENT_PROMPT
from sweetrl_gym.envs.collaborative import CollaborativeEnv, check_max_turns
from sweetrl_gym.sandbox import Sandbox, TestReport, default_sandbox
from sweetrl_gym.simulators import RuleBasedSimulator, Simulator
from sweetrl_gym.tasks import BackendTask, load_backend_tasks
from sweetrl_gym.tasks.loaders import TaskSource

__all__ = ["ColBenchBackendEnv"]


class ColBenchBackendEnv(CollaborativeEnv):
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
        turn_notice: End each reply of the human with how many agent messages are left
            ("(2 messages left.)"; with one: that it is the final answer). Not official.
        sandbox: The sandbox to score in (default: the shared one).

    Attributes:
        agent_prompt: :data:`~sweetrl_gym.envs.agent_prompts.BACKEND_AGENT_PROMPT`, the
            system prompt rollouts hand to an agent without one of its own.

    """

    agent_prompt: ClassVar[str | None] = BACKEND_AGENT_PROMPT

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
        turn_notice: bool = False,
        sandbox: Sandbox | None = None,
    ):
        check_max_turns(max_turns)  # before the tasks load
        tasks_: list[BackendTask] = load_backend_tasks(
            "bundled" if tasks is None else tasks, split=split
        )
        super().__init__(
            tasks=tasks_,
            split=split,
            simulator=simulator if simulator is not None else RuleBasedSimulator(),
            max_turns=max_turns,
            render_mode=render_mode,
            max_reply_chars=max_reply_chars,
            turn_notice=turn_notice,
        )
        self.timeout_s = timeout_s
        self.official_parity = official_parity
        self._sandbox = sandbox

    def _finish(self, answer: str) -> tuple[float, dict[str, Any]]:
        task = self.task
        sandbox = self._sandbox if self._sandbox is not None else default_sandbox()
        report: TestReport = sandbox.run_tests(
            answer,
            task.ground_truth,
            task.test_cases,
            self.timeout_s,
            official_parity=self.official_parity,
        )
        details = {
            "success": report.success,
            "tests_passed": report.passed,
            "tests_total": report.total,
            "test_report": report.to_dict(),
        }
        return float(report.fraction), details
