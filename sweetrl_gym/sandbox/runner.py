"""Scoring untrusted answers against a reference: :func:`run_tests` and :class:`Sandbox`."""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import json
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

from sweetrl_gym.actions import strip_code_fences
from sweetrl_gym.sandbox.compare import RaisedException, is_usable_reference, outputs_match
from sweetrl_gym.sandbox.executor import (
    Execution,
    ExecutionSpec,
    Outcome,
    SandboxError,
    Zygote,
    execute,
)
from sweetrl_gym.sandbox.scoring import DEFAULT_SCORING, check_scoring, official_answer_code

__all__ = ["Sandbox", "SandboxError", "TestReport", "TestResult", "run_tests"]

_MAX_SHOWN = 200
_MAX_CODE_CHARS = 1_000_000


@dataclasses.dataclass(frozen=True)
class TestResult:
    """The verdict on one test case.

    Attributes:
        name: Test name (``"test_1"``).
        expression: The call expression.
        passed: Whether the answer's output matched the reference's.
        status: ``"passed"``, ``"wrong_output"``, ``"raised"``, ``"timeout"``,
            ``"crashed"``, ``"output_too_large"``, ``"unreadable"``, ``"answer_error"``
            (the answer failed before any test ran) or ``"reference_error"`` (the
            reference gives no usable output, so nobody can pass this test).
        expected: Short text of the reference's output.
        got: Short text of the answer's output.

    """

    __test__ = False  # not a pytest class

    name: str
    expression: str
    passed: bool
    status: str
    expected: str
    got: str


@dataclasses.dataclass(frozen=True)
class TestReport:
    """Result of running an answer's tests.

    Attributes:
        results: One :class:`TestResult` per test case, in order.
        answer_error: Why the answer failed before any test ran, else ``None``.
        isolation: ``"seccomp"`` when children ran under the syscall filter, else
            ``"audit-hook"`` (rlimits and a Python audit hook only).

    """

    __test__ = False

    results: tuple[TestResult, ...]
    answer_error: str | None
    isolation: str

    @property
    def passed(self) -> int:
        """Number of tests passed."""
        return sum(r.passed for r in self.results)

    @property
    def total(self) -> int:
        """Number of tests."""
        return len(self.results)

    @property
    def fraction(self) -> float:
        """Fraction of tests passed (0.0 when there are none): the backend reward."""
        return self.passed / self.total if self.total else 0.0

    @property
    def success(self) -> bool:
        """Whether every test passed (and there was at least one)."""
        return self.total > 0 and self.passed == self.total

    def to_dict(self) -> dict[str, object]:
        """Return a JSON-serialisable summary."""
        return {
            "passed": self.passed,
            "total": self.total,
            "fraction": self.fraction,
            "success": self.success,
            "answer_error": self.answer_error,
            "isolation": self.isolation,
            "results": [dataclasses.asdict(r) for r in self.results],
        }


TestCases = Mapping[str, str] | Sequence[str]


class Sandbox:
    """Isolated, warm execution of untrusted Python for scoring answers.

    Two warm worker processes (one for references, one for answers) fork a fresh child
    per execution, so reference and answer never share a process and no answer sees
    another's state. Each child runs under CPU, wall-clock, memory, file-size and
    open-file limits, with stdin/stdout/stderr on ``/dev/null``, and on Linux x86-64
    a seccomp filter that refuses new processes, programs, signals to other processes,
    sockets and any file-system change; a Python audit hook adds the same refusals
    everywhere. Outputs travel as plain data and are compared in this process.

    Reference outputs are cached (by code, tests and limits), so scoring many answers
    to one task runs the reference once.

    Args:
        max_parallel: Most sandbox children alive at once (default: CPU count).
        memory_mb: Address-space allowance of a child beyond the warm interpreter.
        cache_size: Reference executions kept in the cache.

    """

    def __init__(
        self, max_parallel: int | None = None, memory_mb: int = 256, cache_size: int = 4096
    ):
        if sys.platform == "win32":
            raise SandboxError("the sandbox needs fork(); it runs on Linux and macOS")
        self.max_parallel = max(1, max_parallel or os.cpu_count() or 1)
        self.memory_mb = int(memory_mb)
        self._cache: OrderedDict[str, Execution] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._zygotes: dict[str, Zygote] = {}

    def _zygote(self, role: str) -> Zygote:
        with self._lock:
            zygote = self._zygotes.get(role)
            if zygote is not None and (zygote.owner_pid != os.getpid() or not zygote.alive):
                # Forked into a new process, or the worker died: start a fresh one.
                if zygote.owner_pid == os.getpid():
                    zygote.close()
                zygote = None
            if zygote is None:
                zygote = self._zygotes[role] = Zygote()
            return zygote

    def close(self) -> None:
        """Stop the worker processes (they restart on the next call)."""
        with self._lock:
            zygotes, self._zygotes = self._zygotes, {}
        for zygote in zygotes.values():
            if zygote.owner_pid == os.getpid():
                zygote.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_tests(
        self,
        candidate: str,
        reference: str,
        test_cases: TestCases,
        timeout_s: float = 1.0,
        *,
        scoring: str = DEFAULT_SCORING,
    ) -> TestReport:
        """Run ``test_cases`` against an answer and the reference; see :func:`run_tests`."""
        return self.run_tests_many(
            [(candidate, reference, test_cases)], timeout_s, scoring=scoring
        )[0]

    def run_tests_many(
        self,
        jobs: Iterable[tuple[str, str, TestCases]],
        timeout_s: float = 1.0,
        *,
        scoring: str = DEFAULT_SCORING,
    ) -> list[TestReport]:
        """Score many ``(candidate, reference, test_cases)`` jobs in parallel.

        Returns:
            One :class:`TestReport` per job, in order.

        """
        check_scoring(scoring)
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        official = scoring == "official"
        scope = "function" if official else "module"
        prepared = []
        refused: dict[int, str] = {}  # job index -> why the official rules run no code
        for index, (candidate, reference, test_cases) in enumerate(jobs):
            names, calls = _normalise_tests(test_cases)
            if official:
                code, reason = official_answer_code(_text(candidate, "candidate"))
                if reason is not None:
                    refused[index] = reason
                    code = ""
                cand = _bounded(code or "")
                ref = _bounded(_text(reference, "reference"))
            else:
                cand, ref = _code(candidate, "candidate"), _code(reference, "reference")
            prepared.append((cand, ref, names, calls))

        # References: from the cache, else executed (once per distinct reference).
        ref_keys = [self._cache_key(ref, calls, timeout_s, scope) for _, ref, _, calls in prepared]
        with self._lock:  # a snapshot: other threads may evict entries meanwhile
            references = {key: self._cache[key] for key in ref_keys if key in self._cache}
            for key in references:
                self._cache.move_to_end(key)  # least recently used goes first
        missing: dict[str, ExecutionSpec] = {}
        for key, (_, ref, _, calls) in zip(ref_keys, prepared):
            if key not in references and key not in missing:
                missing[key] = ExecutionSpec(ref, calls, timeout_s, self.memory_mb, scope)
        roles = [(spec, "reference") for spec in missing.values()]
        # A refused answer runs nothing: its execution is an empty one marked failed.
        candidate_at = [i for i in range(len(prepared)) if i not in refused]
        roles += [
            (
                ExecutionSpec(prepared[i][0], prepared[i][3], timeout_s, self.memory_mb, scope),
                "candidate",
            )
            for i in candidate_at
        ]
        try:
            executions = self._execute(roles)
        except SandboxError:
            # A worker died (killed from outside, out of memory): restart it and retry once.
            self.close()
            executions = self._execute(roles)
        for key, result in zip(missing, executions[: len(missing)]):
            references[key] = result
            self._remember(key, result)
        candidates = dict(zip(candidate_at, executions[len(missing) :]))
        for index, reason in refused.items():
            candidates[index] = Execution(module_error=reason)
        reports = []
        for index, (key, (_, _, names, calls)) in enumerate(zip(ref_keys, prepared)):
            reports.append(_score(names, calls, references[key], candidates[index], scoring))
        return reports

    def _execute(self, roles: list[tuple[ExecutionSpec, str]]) -> list[Execution]:
        return execute([(spec, self._zygote(role)) for spec, role in roles], self.max_parallel)

    def _cache_key(
        self, reference: str, calls: tuple[str, ...], timeout_s: float, scope: str
    ) -> str:
        payload = json.dumps([reference, calls, timeout_s, self.memory_mb, scope])
        return hashlib.sha256(payload.encode()).hexdigest()

    def _remember(self, key: str, result: Execution) -> None:
        with self._lock:
            self._cache[key] = result
            self._cache.move_to_end(key)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)


def _text(text: object, what: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str of Python code, got {type(text).__name__}")
    return text


def _bounded(code: str) -> str:
    # An over-long answer is garbage, not an error: it simply cannot run.
    return code if len(code) <= _MAX_CODE_CHARS else "raise MemoryError('answer too long')"


def _code(text: object, what: str) -> str:
    return _bounded(strip_code_fences(_text(text, what)))


def _normalise_tests(test_cases: TestCases) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if isinstance(test_cases, Mapping):
        items = list(test_cases.items())
    elif isinstance(test_cases, Sequence) and not isinstance(test_cases, str):
        items = [(f"test_{i + 1}", expr) for i, expr in enumerate(test_cases)]
    else:
        raise TypeError("test_cases must be a mapping name -> expression or a list of expressions")
    for name, expr in items:
        if not isinstance(expr, str):
            raise TypeError(f"test {name!r}: expression must be a str, got {type(expr).__name__}")
    return tuple(str(n) for n, _ in items), tuple(e for _, e in items)


def _short(x: object) -> str:
    try:
        text = repr(x)
    except Exception:
        text = "<unprintable>"
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _describe(outcome: Outcome | None) -> str:
    if outcome is None:
        return "<not run>"
    if outcome.kind in ("value", "raise"):
        return _short(outcome.value)
    return f"<{outcome.kind}>"


def _score(
    names: tuple[str, ...],
    calls: tuple[str, ...],
    ref: Execution,
    cand: Execution,
    scoring: str,
) -> TestReport:
    answer_error = None
    if cand.module_error is not None:
        answer_error = (
            _short(cand.module_error)
            if isinstance(cand.module_error, RaisedException)
            else cand.module_error
        )
    results = []
    for index, (name, expr) in enumerate(zip(names, calls)):
        expected = None if ref.module_error is not None else ref.outcomes[index]
        got = None if cand.module_error is not None else cand.outcomes[index]
        usable_ref = (
            expected is not None
            and expected.kind in ("value", "raise")
            and is_usable_reference(expected.value, scoring=scoring)
        )
        if not usable_ref:
            status, passed = "reference_error", False
        elif answer_error is not None:
            status, passed = "answer_error", False
        elif got is None or got.kind not in ("value", "raise"):
            kind = got.kind if got is not None else "crashed"
            status, passed = {"too_large": "output_too_large"}.get(kind, kind), False
        else:
            passed = outputs_match(expected.value, got.value, scoring=scoring)
            failed_as = "raised" if got.kind == "raise" else "wrong_output"
            status = "passed" if passed else failed_as
        results.append(
            TestResult(
                name=name,
                expression=expr,
                passed=passed,
                status=status,
                expected=_describe(expected)
                if ref.module_error is None
                else f"<reference failed: {_short(ref.module_error)}>",
                got=_describe(got) if answer_error is None else f"<{answer_error}>",
            )
        )
    isolation = "seccomp" if cand.seccomp else "audit-hook"
    return TestReport(results=tuple(results), answer_error=answer_error, isolation=isolation)


_default_sandbox: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """Return the process-wide sandbox used by :func:`run_tests` and the environments."""
    global _default_sandbox
    with _default_lock:
        if _default_sandbox is None:
            _default_sandbox = Sandbox()
            atexit.register(_default_sandbox.close)
        return _default_sandbox


def run_tests(
    candidate: str,
    reference: str,
    test_cases: TestCases,
    timeout_s: float = 1.0,
    *,
    scoring: str = DEFAULT_SCORING,
) -> TestReport:
    """Run hidden tests on an untrusted answer, comparing it with the reference.

    The answer runs as a module (imports, helper functions and recursion work), in a
    fresh sandboxed process; each test expression is then evaluated in its namespace
    with a wall-clock limit of ``timeout_s`` (so an answer costs at most
    ``timeout_s`` per test plus one for the module). The reference runs the same way in
    a different process. Code fences are stripped from both. ``scoring="official"``
    scores as the official ColBench evaluator does instead (see
    :mod:`sweetrl_gym.sandbox.scoring`), still in the sandbox.

    Args:
        candidate: The answer's Python source.
        reference: The reference Python source.
        test_cases: ``{"name": "call expression"}`` (the official format) or a list of
            call expressions.
        timeout_s: Wall-clock seconds allowed per test (and for the module itself).
        scoring: ``"ours"`` (the default) or ``"official"``, the official evaluator's
            rules: its banned substrings, its code-block extraction, execution inside
            a function scope and its comparison (see
            :func:`~sweetrl_gym.sandbox.compare.outputs_match`).

    Returns:
        A :class:`TestReport` with ``passed``, ``total``, ``fraction``, ``success`` and
        per-test results. Hostile or broken answers score 0; they never raise here.

    Raises:
        TypeError: ``candidate``/``reference`` is not a str or the tests are malformed.
        ValueError: ``scoring`` names no scoring rule.
        SandboxError: The sandbox itself could not run.

    """
    return default_sandbox().run_tests(candidate, reference, test_cases, timeout_s, scoring=scoring)
