"""Isolated execution of untrusted Python answers and their hidden tests.

See :func:`run_tests` (the one-call API) and :class:`Sandbox` (batches, own limits).
"""

from sweetrl_gym.sandbox.compare import RaisedException, outputs_match
from sweetrl_gym.sandbox.executor import SandboxError
from sweetrl_gym.sandbox.runner import (
    Sandbox,
    TestReport,
    TestResult,
    default_sandbox,
    run_tests,
)
from sweetrl_gym.sandbox.scoring import DEFAULT_SCORING, SCORINGS, check_scoring

__all__ = [
    "DEFAULT_SCORING",
    "SCORINGS",
    "RaisedException",
    "Sandbox",
    "SandboxError",
    "TestReport",
    "TestResult",
    "check_scoring",
    "default_sandbox",
    "outputs_match",
    "run_tests",
]
