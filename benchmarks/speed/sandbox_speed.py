"""Sandbox throughput: candidates scored per second, against baselines in the same run.

Reads top to bottom: take the first N bundled test tasks; for each, two candidates
(the reference, which passes, and the description-only guess, which fails) -> score them
all with (a) a fresh Python interpreter per candidate (the usual "safe" way), (b) the
official in-process approach (``exec`` + ``SIGALRM``; fast, no isolation at all),
(c) our warm sandbox one candidate at a time, and (d) our sandbox in one batch. Every
approach computes each reference's outputs once and reuses them, and all four must
agree on which candidates pass.

    python -m benchmarks.speed.sandbox_speed --tasks 100
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from benchmarks.speed.output import run_from_command_line
from sweetrl_gym.sandbox import Sandbox
from sweetrl_gym.tasks import load_backend_tasks
from sweetrl_gym.tasks.guesses import guess_answer

# The baseline runner: a fresh interpreter executes the code and prints its outputs.
_FRESH_RUNNER = """
import json, sys
job = json.load(sys.stdin)
namespace = {"__name__": "answer"}
out = []
try:
    exec(job["code"], namespace)
    for call in job["calls"]:
        try:
            out.append(["ok", repr(eval(call, namespace))])
        except Exception as exc:
            out.append(["raise", type(exc).__name__])
except Exception as exc:
    out = [["raise", type(exc).__name__]] * len(job["calls"])
print(json.dumps(out))
"""


def fresh_interpreter_outputs(code: str, calls: list[str]) -> list[Any]:
    """Run code in a new interpreter (with a wall-clock limit)."""
    proc = subprocess.run(
        [sys.executable, "-I", "-c", _FRESH_RUNNER],
        input=json.dumps({"code": code, "calls": calls}),
        capture_output=True,
        text=True,
        timeout=1.0 * (len(calls) + 1) + 5,
    )
    return json.loads(proc.stdout) if proc.returncode == 0 else [["crash", None]] * len(calls)


def in_process_outputs(code: str, calls: list[str]) -> list[Any]:
    """Run code the official way: exec in this process, a 1-second SIGALRM per test."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, on_alarm)
    out: list[Any] = []
    try:

        def execute() -> None:  # exec inside a function scope, as the official evaluator does
            namespace: dict[str, Any] = {}
            exec(code, namespace)
            for call in calls:
                signal.alarm(1)
                try:
                    out.append(["ok", repr(eval(call, namespace))])
                except Exception as exc:
                    out.append(["raise", type(exc).__name__])
                finally:
                    signal.alarm(0)

        execute()
    except Exception as exc:
        out = [["raise", type(exc).__name__]] * len(calls)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return out


def score_with(
    outputs: Callable[[str, list[str]], list[Any]], jobs: list[tuple[str, str, list[str]]]
) -> tuple[list[bool], float]:
    """Score every job with ``outputs`` (code, calls -> results); each reference runs once."""
    start = time.perf_counter()
    reference_outputs: dict[str, list[Any]] = {}
    verdicts = []
    for candidate, reference, calls in jobs:
        if reference not in reference_outputs:
            reference_outputs[reference] = outputs(reference, calls)
        expected = reference_outputs[reference]
        got = outputs(candidate, calls)
        verdicts.append(all(e[0] == "ok" and e == g for e, g in zip(expected, got)))
    return verdicts, time.perf_counter() - start


def run(*, tasks: int = 100) -> dict[str, Any]:
    """Score the candidates of the first ``tasks`` bundled test tasks four ways; return the rates.

    Args:
        tasks: How many bundled test tasks to take; each gives two candidates (the
            reference, which passes, and the description-only guess, which fails).

    Returns:
        The machine, the number of candidates, the candidates/s of each approach, the
        speedups over a fresh interpreter, whether all four approaches agree on which
        candidates pass, how many pass, and the sandbox's isolation.

    Raises:
        ValueError: If ``tasks`` is below 1.

    """
    if tasks < 1:
        raise ValueError(f"tasks must be >= 1, got {tasks}")
    jobs = []
    for task in load_backend_tasks("bundled", split="test")[:tasks]:
        calls = list(task.test_cases.values())
        jobs.append((task.ground_truth, task.ground_truth, calls))
        jobs.append((guess_answer(task), task.ground_truth, calls))

    fresh, fresh_s = score_with(fresh_interpreter_outputs, jobs)
    official, official_s = score_with(in_process_outputs, jobs)

    sandbox = Sandbox()
    sandbox.run_tests("x = 1", "x = 1", ["x"])  # start the workers outside the timing
    start = time.perf_counter()
    ours = [sandbox.run_tests(c, r, calls).success for c, r, calls in jobs]
    ours_s = time.perf_counter() - start
    sandbox.close()

    sandbox = Sandbox()
    sandbox.run_tests("x = 1", "x = 1", ["x"])
    start = time.perf_counter()
    batched = [r.success for r in sandbox.run_tests_many(jobs)]
    batched_s = time.perf_counter() - start
    isolation = sandbox.run_tests("x = 1", "x = 1", ["x"]).isolation
    sandbox.close()

    n = len(jobs)
    return {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "candidates": n,
        "candidates_per_s": {
            "fresh_interpreter": round(n / fresh_s, 1),
            "official_in_process": round(n / official_s, 1),
            "sandbox_sequential": round(n / ours_s, 1),
            "sandbox_batched": round(n / batched_s, 1),
        },
        "speedup_vs_fresh_interpreter": {
            "sequential": round(fresh_s / ours_s, 2),
            "batched": round(fresh_s / batched_s, 2),
        },
        "verdicts_agree": fresh == official == ours == batched,
        "passed": sum(ours),
        "isolation": isolation,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark from the command line; prints and returns the result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=100, help="first N bundled test tasks")
    return run_from_command_line(parser, argv, run)


if __name__ == "__main__":
    main()
