"""ColBench Backend Programming as a Gymnasium environment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from sweetrl_gym.actions import ParsedAction, parse_action_official
from sweetrl_gym.envs.agent_prompts import BACKEND_AGENT_PROMPT
from sweetrl_gym.envs.collaborative import CollaborativeEnv, check_max_turns
from sweetrl_gym.sandbox import (
    DEFAULT_SCORING,
    Sandbox,
    TestReport,
    check_scoring,
    default_sandbox,
)
from sweetrl_gym.simulators import RuleBasedSimulator, Simulator
from sweetrl_gym.tasks import BackendTask, load_backend_tasks
from sweetrl_gym.tasks.loaders import TaskSource, task_from_record

__all__ = ["ColBenchBackendEnv", "score_backend_answer"]


def score_backend_answer(
    answer: str,
    task: BackendTask | Mapping[str, Any],
    *,
    scoring: str = DEFAULT_SCORING,
    timeout_s: float = 1.0,
    sandbox: Sandbox | None = None,
) -> TestReport:
    """Score a final answer against a task's hidden tests, as the environment does.

    Args:
        answer: The answer text (what follows ``I WANT TO ANSWER:``).
        task: A :class:`~sweetrl_gym.tasks.BackendTask`, or an official task record
            (``problem_description``, ``ground_truth``, ``test_cases``).
        scoring: ``"ours"`` or ``"official"`` (see :mod:`sweetrl_gym.sandbox.scoring`).
        timeout_s: Seconds each hidden test may run.
        sandbox: The sandbox to score in (default: the shared one).

    Returns:
        The sandbox's report; its ``fraction`` is the reward.

    Raises:
        ValueError: ``scoring`` names no scoring rule.
        sweetrl_gym.tasks.TaskFormatError: The record is not a Backend task.

    """
    if not isinstance(task, BackendTask):
        task = task_from_record(task)
    sandbox = sandbox if sandbox is not None else default_sandbox()
    return sandbox.run_tests(answer, task.ground_truth, task.test_cases, timeout_s, scoring=scoring)


class ColBenchBackendEnv(CollaborativeEnv):
    """An agent collaborates with a simulated human to write a Python function.

    The episode starts with the human's vague request. Each step the agent sends a
    message (the action); the human answers (the observation). A message containing
    ``I WANT TO ANSWER:`` ends the episode with the code after it as the answer; after
    ``max_turns`` agent messages the last one is the answer. If a message contains
    ``OUTPUT:``, only the text after the first ``OUTPUT:`` counts. The answer runs in
    the sandbox against the hidden tests; the final reward is the fraction passed
    (every other step: 0). ``scoring="official"`` cuts the answer and scores it as
    the official evaluator does (the paper's metric; see
    :mod:`sweetrl_gym.sandbox.scoring`).

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
        scoring: ``"ours"`` (default: whether the answer computes what the reference
            computes) or ``"official"`` (the official evaluator's rules: the answer cut
            between the markers unstripped, its banned substrings, its first code
            block, both codes run inside a function scope, ``==`` on outputs).
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
        scoring: str = DEFAULT_SCORING,
        max_reply_chars: int = 400,
        turn_notice: bool = False,
        sandbox: Sandbox | None = None,
    ):
        check_max_turns(max_turns)  # before the tasks load
        self.scoring = check_scoring(scoring)
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
        self._sandbox = sandbox

    def _parse(self, action: str) -> ParsedAction:
        if self.scoring == "official":
            return parse_action_official(action)
        return super()._parse(action)

    def _finish(self, answer: str) -> tuple[float, dict[str, Any]]:
        report = score_backend_answer(
            answer,
            self.task,
            scoring=self.scoring,
            timeout_s=self.timeout_s,
            sandbox=self._sandbox,
        )
        details = {
            "scoring": self.scoring,
            "success": report.success,
            "tests_passed": report.passed,
            "tests_total": report.total,
            "test_report": report.to_dict(),
        }
        return float(report.fraction), details
