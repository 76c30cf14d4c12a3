import pytest

from sweetrl_gym.sandbox import Sandbox, run_tests

REF = "def double(x):\n    return x * 2\n"
TESTS = {"t1": "double(1)", "t2": "double(2.5)", "t3": "double('ab')"}


def test_correct_answer_passes_every_test(sandbox):
    report = sandbox.run_tests("def double(x):\n    return x + x\n", REF, TESTS)
    assert (report.passed, report.total, report.fraction, report.success) == (3, 3, 1.0, True)
    assert [r.name for r in report.results] == ["t1", "t2", "t3"]
    assert all(r.status == "passed" for r in report.results)


def test_wrong_output_is_reported_per_test(sandbox):
    report = sandbox.run_tests(
        "def double(x):\n    return x * 3 if x == 1 else x * 2\n", REF, TESTS
    )
    assert report.passed == 2 and not report.success
    first = report.results[0]
    assert (first.status, first.expected, first.got) == ("wrong_output", "2", "3")


def test_module_semantics_imports_helpers_recursion(sandbox):
    answer = (
        "import math\n"
        "FACTOR = 2\n"
        "def _helper(x):\n    return x * FACTOR\n"
        "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n"
        "def double(x):\n    assert fact(4) == 24 and math.sqrt(4) == 2\n    return _helper(x)\n"
    )
    assert sandbox.run_tests(answer, REF, TESTS).success


def test_answer_errors(sandbox):
    syntax = sandbox.run_tests("def double(x) return x", REF, TESTS)
    assert syntax.answer_error and "SyntaxError" in syntax.answer_error
    assert {r.status for r in syntax.results} == {"answer_error"}
    raised = sandbox.run_tests("def double(x):\n    raise ValueError('no')\n", REF, TESTS)
    assert {r.status for r in raised.results} == {"raised"}
    wrong_name = sandbox.run_tests("def twice(x):\n    return x * 2\n", REF, TESTS)
    assert wrong_name.passed == 0


def test_fences_are_stripped_and_list_tests_accepted(sandbox):
    report = sandbox.run_tests(
        "```python\ndef double(x):\n    return 2 * x\n```", REF, ["double(4)"]
    )
    assert report.success and report.results[0].name == "test_1"


def test_rich_values_compare_as_data(sandbox):
    ref = (
        "import datetime, decimal, dataclasses\n"
        "@dataclasses.dataclass\nclass P:\n    x: int\n"
        "def f(k):\n    return [(1, 2), {(1, 'a'): {3}}, decimal.Decimal('1.5'),\n"
        "            datetime.date(2024, 2, 29), frozenset({k}), P(k), b'ab', 2 ** 70]\n"
    )
    assert sandbox.run_tests(ref, ref, ["f(1)", "f(2)"]).success
    tuples_for_lists = ref.replace("[(1, 2)", "[[1, 2]")
    assert sandbox.run_tests(tuples_for_lists, ref, ["f(1)"]).passed == 0


def test_set_iteration_order_agrees_between_processes(sandbox):
    code = "def f(words):\n    return list(set(words))\n"
    report = sandbox.run_tests(code, code, ["f(['pear', 'apple', 'fig', 'kiwi', 'plum'])"])
    assert report.success


def test_default_rule_vs_official_scoring(sandbox):
    ref = (
        "def check(x):\n"
        "    if x < 0:\n        raise ValueError('negative')\n"
        "    if x == 0:\n        return None\n"
        "    return x / 3\n"
    )
    answer = ref.replace("x / 3", "x * (1 / 3)")  # equal up to rounding
    tests = ["check(-1)", "check(0)", "check(1)", "check(0.7)"]
    ours = sandbox.run_tests(answer, ref, tests)
    assert ours.success
    official = sandbox.run_tests(answer, ref, tests, scoring="official")
    assert [r.status for r in official.results[:2]] == ["reference_error", "reference_error"]
    assert not official.results[0].passed and not official.results[1].passed
    assert official.passed == sum(r.status == "passed" for r in official.results)
    assert official.passed < 4


def test_broken_reference_fails_every_answer(sandbox):
    report = sandbox.run_tests(
        "def f():\n    return 1\n", "def f():\n    return undefined\n", ["f()"]
    )
    assert report.results[0].status == "reference_error" and report.passed == 0
    invalid = sandbox.run_tests("def f():\n    return 1\n", "def f():\n    return 1\n", ["f(("])
    assert invalid.results[0].status == "reference_error"


def test_bad_arguments_raise_clear_errors(sandbox):
    with pytest.raises(TypeError, match="candidate must be a str"):
        sandbox.run_tests(b"x", REF, TESTS)
    with pytest.raises(TypeError, match="test_cases"):
        sandbox.run_tests("x", REF, "double(1)")
    with pytest.raises(TypeError, match="expression must be a str"):
        sandbox.run_tests("x", REF, {"a": 1})
    with pytest.raises(ValueError, match="timeout_s"):
        sandbox.run_tests("x", REF, TESTS, timeout_s=0)


def test_run_tests_many_keeps_order_and_module_function_works(sandbox):
    jobs = [(f"def double(x):\n    return x * {k}\n", REF, TESTS) for k in (2, 3, 2)]
    assert [r.success for r in sandbox.run_tests_many(jobs)] == [True, False, True]
    assert run_tests("def double(x):\n    return x*2", REF, TESTS).success


def test_empty_test_set_is_not_a_success(sandbox):
    report = sandbox.run_tests("x = 1", "x = 1", {})
    assert report.total == 0 and report.fraction == 0.0 and not report.success


def test_sandbox_survives_fork_of_the_parent(sandbox):
    import os

    sandbox.run_tests("def double(x):\n    return x*2", REF, TESTS)
    pid = os.fork()
    if pid == 0:  # the child must start its own workers, not share the parent's
        ok = sandbox.run_tests("def double(x):\n    return x*2", REF, TESTS).success
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert sandbox.run_tests("def double(x):\n    return x*2", REF, TESTS).success


def test_close_and_reuse():
    box = Sandbox(max_parallel=1)
    assert box.run_tests("def double(x):\n    return x*2", REF, TESTS).success
    box.close()
    assert box.run_tests("def double(x):\n    return x*2", REF, TESTS).success
    box.close()
