r"""Check that ``scoring="official"`` gives the official evaluator's reward (issue 68).

Builds a corpus of (task, agent message) pairs, one or more per class of answer the
official rules treat differently from ours, scores each message twice and counts the
pairs where the two rewards differ:

* the official code, read from a clone of facebookresearch/sweet_rl (never copied
  here): ``HumanInteractionEnv.step`` cuts the answer out of the message, then
  ``check_correctness`` scores it (in this process, as the official script does, so run
  this only on the corpus it builds);
* ``gym.make("ColBench-Backend-v0", scoring=...)`` for ``"official"`` and ``"ours"``.

    python research/analyses/official_scoring_parity.py --sweet-rl ../sweet_rl \\
        --out research/results/official_scoring_parity.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import gymnasium as gym

import sweetrl_gym  # noqa: F401  (registers the environments)
from sweetrl_gym.sandbox.scoring import OFFICIAL_BANNED_SUBSTRINGS
from sweetrl_gym.tasks import load_backend_tasks

# References written here: each defines `f` the way one class of code does.
_REFERENCES = {
    "module_import": "import math\ndef f(x):\n    return math.floor(x * 2.5)\n",
    "helper": "def _double(x):\n    return 2 * x\ndef f(x):\n    return _double(x) + 1\n",
    "recursion": "def f(x):\n    return 1 if x <= 1 else x * f(x - 1)\n",
    "returns_none": "def f(x):\n    if x > 2:\n        return x * 3\n",
    "raises": "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x + 10\n",
    "float": "def f(x):\n    return x * 0.1 + 0.2\n",
    "tuple": "def f(x):\n    return (x, x + 1)\n",
    "default_constant": "RATE = 3\ndef f(x, rate=RATE):\n    return x * rate\n",
    "plain": "def f(x):\n    return x * x - 1\n",
}
_TESTS = {f"test{i}": f"f({x})" for i, x in enumerate([-1, 0, 1, 3, 4])}


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _variants(code: str) -> dict[str, str]:
    """Agent messages that answer with ``code``, one per way of writing the answer."""
    first, _, rest = code.partition("\n")
    return {
        "newline": f"I WANT TO ANSWER:\n{code}",
        "same_line": f"I WANT TO ANSWER: {first}\n{rest}",
        "same_line_no_space": f"I WANT TO ANSWER:{first}\n{rest}",
        "thought_output": f"THOUGHT: I know enough.\nOUTPUT: I WANT TO ANSWER:\n{code}",
        "second_output": f"THOUGHT: x\nOUTPUT: I WANT TO ANSWER:\n{code}\nOUTPUT: done",
        "fence_python": f"I WANT TO ANSWER:\nHere it is:\n```python\n{code}```\nEnjoy!",
        "fence_plain": f"I WANT TO ANSWER:\nHere it is:\n```\n{code}```\nEnjoy!",
        "fence_py": f"I WANT TO ANSWER:\n```py\n{code}```",
        "fence_unclosed": f"I WANT TO ANSWER:\n```python\n{code}",
        "two_fences": f"I WANT TO ANSWER:\n```python\n{code}```\nor\n```python\nx = 1\n```",
        "two_markers": f"I WANT TO ANSWER:\n{code}\nI WANT TO ANSWER: that is all",
        "prose_after": f"I WANT TO ANSWER:\n{code}\nThis function computes it.",
        "trailing_spaces": f"I WANT TO ANSWER:\n\n\n{code}\n\n   ",
        "crlf": "I WANT TO ANSWER:\r\n" + code.replace("\n", "\r\n"),
        "no_marker_turn_limit": code,
    }


def _answers(reference: str) -> dict[str, str]:
    """Answers of each kind the official rules score differently, for a reference."""
    banned = {
        f"banned_{word.strip('(').replace(' ', '_')}": f"# {word} is not needed\n{reference}"
        for word in OFFICIAL_BANNED_SUBSTRINGS
    }
    return {
        "reference": reference,
        "wrong": "def f(x):\n    return 0\n",
        "module_import": "import math\ndef f(x):\n    return math.floor(x * 2.5)\n",
        "helper": "def _double(x):\n    return 2 * x\ndef f(x):\n    return _double(x) + 1\n",
        "recursion": "def f(x):\n    return 1 if x <= 1 else x * f(x - 1)\n",
        "local_import": "def f(x):\n    import math\n    return math.floor(x * 2.5)\n",
        "float_close": "def f(x):\n    return (x * 1.0 + 2.0) / 10.0\n",
        "list_not_tuple": "def f(x):\n    return [x, x + 1]\n",
        "bool_for_int": "def f(x):\n    return True if x == 0 else x * x - 1\n",
        "infinite_loop": "def f(x):\n    while True:\n        pass\n",
        "syntax_error": "def f(x)\n    return x\n",
        "returns_none": "def f(x):\n    return None\n",
        "raises_same": (
            "def f(x):\n    if x < 0:\n        raise ValueError('n')\n    return x + 10\n"
        ),
        "top_level_class": ("class _Box:\n    k = 3\ndef f(x):\n    return x * _Box.k\n"),
        "lambda": "f = lambda x: x * x - 1\n",
        "prints": "def f(x):\n    print(x)\n    return x * x - 1\n",
        **banned,
    }


def corpus(num_bundled: int) -> list[dict]:
    """Return the corpus: ``{"task", "action", "kind"}`` records."""
    items = []
    for name, reference in _REFERENCES.items():
        task = {
            "task_id": f"parity-{name}",
            "problem_description": f"Write f ({name}).",
            "ground_truth": reference,
            "test_cases": _TESTS,
        }
        for answer_kind, answer in _answers(reference).items():
            items.append(
                {
                    "task": task,
                    "action": f"I WANT TO ANSWER:\n{answer}",
                    "kind": f"{name}/{answer_kind}",
                }
            )
        for variant, action in _variants(reference).items():
            items.append({"task": task, "action": action, "kind": f"{name}/{variant}"})
    for task in load_backend_tasks("bundled", split="test")[:num_bundled]:
        record = {
            "task_id": task.task_id,
            "problem_description": task.problem_description,
            "ground_truth": task.ground_truth,
            "test_cases": dict(task.test_cases),
        }
        for variant, action in _variants(task.ground_truth).items():
            items.append({"task": record, "action": action, "kind": f"bundled/{variant}"})
    return items


def official_reward(item: dict, env_module, code_utils) -> float:
    """Return the official reward: the official env's cut, then ``check_correctness``."""
    env = env_module.HumanInteractionEnv(client=None, human_prompt="", model_id="")
    env.reset(item["task"]["problem_description"], "")
    env.steps = env.max_steps - 1  # this message is the last one: no human is asked
    env.step(item["action"])
    task = item["task"]
    return float(code_utils.check_correctness(task["ground_truth"], env.answer, task["test_cases"]))


def our_reward(item: dict, scoring: str) -> float:
    env = gym.make("ColBench-Backend-v0", tasks=[item["task"]], scoring=scoring, max_turns=1)
    env.reset(options={"task_index": 0})
    _, reward, done, _, _ = env.step(item["action"])
    assert done
    return float(reward)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sweet-rl", type=Path, required=True, help="a sweet_rl clone")
    parser.add_argument("--bundled", type=int, default=8, help="bundled test tasks used")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    env_module = _load(
        args.sweet_rl / "sweet_rl/environments/human_interaction_env.py", "official_human_env"
    )
    code_utils = _load(args.sweet_rl / "sweet_rl/utils/code_utils.py", "official_code_utils")
    rows = []
    for item in corpus(args.bundled):
        official = official_reward(item, env_module, code_utils)
        rows.append(
            {
                "kind": item["kind"],
                "official": official,
                "ours_official": our_reward(item, "official"),
                "ours_default": our_reward(item, "ours"),
            }
        )
    same = sum(r["official"] == r["ours_official"] for r in rows)
    same_default = sum(r["official"] == r["ours_default"] for r in rows)
    differ = [r for r in rows if r["official"] != r["ours_official"]]
    summary = {
        "pairs": len(rows),
        "equal_under_official": same,
        "equal_under_ours": same_default,
        "classes": len({r["kind"].split("/")[1] for r in rows}),
        "differ": differ,
        "by_kind_ours_differs": Counter(
            r["kind"].split("/")[1] for r in rows if r["official"] != r["ours_default"]
        ),
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "by_kind_ours_differs"}, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
