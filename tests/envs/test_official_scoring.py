"""``scoring="official"``: the official ColBench evaluator's rules, class by class.

Each test plays one answer through ``gym.make("ColBench-Backend-v0", scoring=...)`` and
checks the reward the official rules give it, beside ours where they differ.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import sweetrl_gym  # noqa: F401
from sweetrl_gym.sandbox import SCORINGS

SQUARE = "def f(x):\n    return x * x - 1\n"
TESTS = {"t1": "f(-1)", "t2": "f(0)", "t3": "f(2)", "t4": "f(5)"}


def _task(reference: str = SQUARE, tests: dict[str, str] = TESTS) -> dict:
    return {
        "task_id": "t",
        "problem_description": "Write f.",
        "ground_truth": reference,
        "test_cases": tests,
    }


def play(action: str, scoring: str = "official", reference: str = SQUARE, **kwargs):
    env = gym.make("ColBench-Backend-v0", tasks=[_task(reference)], scoring=scoring, **kwargs)
    env.reset(options={"task_index": 0})
    _, reward, done, _, info = env.step(action)
    assert done
    return reward, info


def rewards(action: str, reference: str = SQUARE, **kwargs) -> tuple[float, float]:
    """(official, ours) rewards of one final message."""
    return (
        play(action, "official", reference, **kwargs)[0],
        play(action, "ours", reference, **kwargs)[0],
    )


def test_scorings_are_named_and_ours_is_the_default():
    assert SCORINGS == ("ours", "official")
    env = gym.make("ColBench-Backend-v0", tasks=[_task()])
    assert env.unwrapped.scoring == "ours"


def test_unknown_scoring_is_refused_with_the_closest_name():
    with pytest.raises(ValueError, match="did you mean 'official'"):
        gym.make("ColBench-Backend-v0", scoring="offical")
    with pytest.raises(ValueError, match="'ours', 'official'"):
        gym.make("ColBench-Backend-v0", scoring=1)


def test_a_correct_answer_on_its_own_lines_passes_both():
    assert rewards("I WANT TO ANSWER:\n" + SQUARE) == (1.0, 1.0)


def test_an_answer_on_the_markers_line_is_an_indentation_error_officially():
    # " def f(x):" keeps its leading space: IndentationError for every test.
    reward, info = play("I WANT TO ANSWER: " + SQUARE)
    assert reward == 0.0
    assert {r["status"] for r in info["test_report"]["results"]} == {"raised"}
    assert play("I WANT TO ANSWER: " + SQUARE, "ours")[0] == 1.0
    # Without the space the first line is code again.
    assert play("I WANT TO ANSWER:" + SQUARE)[0] == 1.0


@pytest.mark.parametrize(
    "word",
    [
        "import os",
        "from os",
        "import sys",
        "from sys",
        "sudo",
        "transformers",
        "exit(",
        "quit(",
        "argparse",
    ],
)
def test_a_banned_substring_anywhere_scores_zero(word):
    reward, info = play(f"I WANT TO ANSWER:\n# no {word} here\n{SQUARE}")
    assert reward == 0.0
    assert word in info["test_report"]["answer_error"]
    assert play(f"I WANT TO ANSWER:\n# no {word} here\n{SQUARE}", "ours")[0] == 1.0


def test_only_the_first_python_block_counts_and_prose_is_dropped():
    action = f"I WANT TO ANSWER:\nHere:\n```python\n{SQUARE}```\nand\n```python\nf = 3\n```"
    assert rewards(action) == (1.0, 0.0)  # ours keeps the prose: a SyntaxError


def test_a_plain_fence_counts_when_there_is_no_python_one():
    assert rewards(f"I WANT TO ANSWER:\nHere it is.\n```\n{SQUARE}```\nDone.")[0] == 1.0
    # "```py": the block starts with the line "py", a NameError in every test.
    assert rewards(f"I WANT TO ANSWER:\n```py\n{SQUARE}```") == (0.0, 1.0)


def test_the_answer_ends_at_a_second_marker():
    action = f"I WANT TO ANSWER:\n{SQUARE}I WANT TO ANSWER: nothing more"
    assert rewards(action) == (1.0, 0.0)


def test_only_the_text_between_the_first_two_outputs_counts():
    action = f"THOUGHT: ready\nOUTPUT: I WANT TO ANSWER:\n{SQUARE}OUTPUT: bye"
    assert rewards(action) == (1.0, 0.0)


def test_at_the_turn_limit_the_whole_message_is_the_answer():
    assert rewards(SQUARE, max_turns=1) == (1.0, 1.0)


@pytest.mark.parametrize(
    "answer",
    [
        "import math\ndef f(x):\n    return math.floor(x * x - 1)\n",  # module-level import
        "def g(x):\n    return x * x\ndef f(x):\n    return g(x) - 1\n",  # helper
        "def f(x, again=True):\n    return f(x, False) if again else x * x - 1\n",  # recursion
        "class K:\n    one = 1\ndef f(x):\n    return x * x - K.one\n",  # top-level class
    ],
    ids=["import", "helper", "recursion", "class"],
)
def test_names_defined_at_the_top_level_are_not_seen_inside_functions(answer):
    reward, info = play("I WANT TO ANSWER:\n" + answer)
    assert reward == 0.0
    assert all("NameError" in r["got"] for r in info["test_report"]["results"])
    assert play("I WANT TO ANSWER:\n" + answer, "ours")[0] == 1.0


def test_top_level_names_bound_at_definition_time_still_work():
    # A default value and an import inside the function are looked up where they work.
    answer = (
        "ONE = 1\ndef f(x, one=ONE):\n    import operator\n    return operator.sub(x * x, one)\n"
    )
    assert rewards("I WANT TO ANSWER:\n" + answer) == (1.0, 1.0)


def test_a_reference_with_a_helper_fails_every_answer_officially():
    reference = "def _sq(x):\n    return x * x\ndef f(x):\n    return _sq(x) - 1\n"
    assert rewards("I WANT TO ANSWER:\n" + SQUARE, reference) == (0.0, 1.0)


def test_tests_where_the_reference_returns_none_or_raises_count_as_failed():
    reference = (
        "def f(x):\n    if x < 0:\n        raise ValueError('neg')\n"
        "    if x == 0:\n        return None\n    return x * x - 1\n"
    )
    official, ours = rewards("I WANT TO ANSWER:\n" + reference, reference)
    assert (official, ours) == (0.5, 1.0)


def test_outputs_compare_with_plain_equality():
    reference = "def f(x):\n    return x / 10 + 0.1 + 0.2\n"
    close = "def f(x):\n    return x / 10 + 0.3\n"  # equal up to rounding
    official, ours = rewards("I WANT TO ANSWER:\n" + close, reference)
    assert ours == 1.0 and official < 1.0
    # True == 1 and 1 == 1.0 pass; a list is not the tuple it holds.
    assert rewards("I WANT TO ANSWER:\ndef f(x):\n    return float(x * x - 1)\n")[0] == 1.0
    pair = "def f(x):\n    return (x, x)\n"
    assert rewards("I WANT TO ANSWER:\ndef f(x):\n    return [x, x]\n", pair)[0] == 0.0


def test_objects_of_the_codes_own_classes_never_match():
    reference = (
        "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n"
        "def f(x):\n    return P(x)\n"
    )
    # Even the reference itself: each run defines its own class P.
    assert rewards("I WANT TO ANSWER:\n" + reference, reference)[0] == 0.0


@pytest.mark.parametrize(
    "answer",
    [
        "def f(x):\n    while True:\n        pass\n",
        "def f(x):\n    return 'x' * 10**9\n",
        "def f(x):\n    return list(range(10**7))\n",
        "def f(x):\n    import ctypes\n    return ctypes.string_at(0)\n",
        "def f(x):\n    raise SystemExit(3)\n",
        "while True:\n    pass\n",
    ],
    ids=["loop", "memory", "huge-output", "segfault", "system-exit", "top-level-loop"],
)
def test_answers_that_break_the_evaluator_score_zero_and_the_env_lives(answer):
    env = gym.make("ColBench-Backend-v0", tasks=[_task(tests={"t": "f(2)"})], scoring="official")
    env.reset(options={"task_index": 0})
    assert env.step("I WANT TO ANSWER:\n" + answer)[1] == 0.0
    env.reset(options={"task_index": 0})
    assert env.step("I WANT TO ANSWER:\n" + SQUARE)[1] == 1.0


def test_the_final_info_says_which_scoring_gave_the_reward():
    _, info = play("I WANT TO ANSWER:\n" + SQUARE)
    assert info["scoring"] == "official" and info["success"]
