"""Quality of the bundled backend tasks, measured in the sandbox and the environment.

Reads top to bottom. Over the tasks of a split it measures:
1. the reference passes its own tests;
2. answers written from the description alone rarely pass: the conventional guess
   (every hidden detail at its default) and a random guess (every detail drawn at
   random), each with the signature the request states, if any;
3. an answer written from all the facts always passes: the facts are asked for one
   by one through the environment and its simulated human, recovered from the replies,
   and the code written from them is submitted as the final answer;
4. the tests tell every wrong value of every detail from the right one: each single
   wrong option fails at least one test.

    python -m research.analyses.task_quality --split test          # all 3,000 test tasks
    python -m research.analyses.task_quality --limit 50             # a quick look
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections import Counter
from typing import Any

import gymnasium as gym
from tqdm import tqdm

import sweetrl_gym  # noqa: F401
from agents.scripted import question_for
from sweetrl_gym.sandbox import Sandbox
from sweetrl_gym.tasks import BackendTask, load_backend_tasks
from sweetrl_gym.tasks.families import family_named
from sweetrl_gym.tasks.family import Family, Signature
from sweetrl_gym.tasks.guesses import guess_answer

_SIGNATURE_SENTENCE = re.compile(r"called `(\w+)` and take `\(([^`]*)\)`")


def answer_from_dialogue(env: gym.Env, task: BackendTask) -> tuple[bool, bool]:
    """Ask for each fact, rebuild the code from the replies, submit it.

    Returns:
        (every fact was recovered from the replies, the rebuilt answer succeeded)

    """
    family: Family = family_named(task.family)
    env.reset(options={"task_id": task.task_id})
    replies = [task.problem_description]
    for fact in task.facts:
        obs, _, terminated, _, _ = env.step(question_for(fact))
        assert not terminated
        replies.append(obs)
    heard = " ".join(replies)
    values: dict[str, Any] = {}
    for fact in family.facts:
        matching = [o for o in fact.options if fact.state(o) in heard]
        if matching:
            values[fact.key] = max(matching, key=lambda o: len(fact.state(o)))
    match = _SIGNATURE_SENTENCE.search(heard)
    signature = (
        Signature(match.group(1), tuple(p.strip() for p in match.group(2).split(",")))
        if match
        else Signature.find_in(task.problem_description)
    )
    recovered = len(values) == len(family.facts) and signature is not None
    if not recovered:
        env.step("I WANT TO ANSWER: pass")
        return False, False
    _, _, _, _, info = env.step("I WANT TO ANSWER:\n" + family.render(values, signature))
    return True, bool(info["success"])


def true_values(task: BackendTask) -> tuple[dict[str, Any], Signature]:
    """Return the family's own option objects for the task's facts (stored via JSON)."""
    family = family_named(task.family)
    stored = {f.key: json.dumps(f.value, sort_keys=True) for f in task.facts}
    values = {
        fact.key: next(o for o in fact.options if json.dumps(o, sort_keys=True) == stored[fact.key])
        for fact in family.facts
    }
    sig = next(f.value for f in task.facts if f.key == "signature")
    return values, Signature(sig["name"], tuple(sig["params"]))


def one_wrong_variants(task: BackendTask) -> list[str]:
    """Return the reference with one detail changed to each of its wrong options."""
    family = family_named(task.family)
    truth, signature = true_values(task)
    return [
        family.render({**truth, fact.key: option}, signature)
        for fact in family.facts
        for option in fact.options
        if option != truth[fact.key]
    ]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="test", choices=["train", "test"])
    parser.add_argument("--limit", type=int, default=None, help="first N tasks only")
    parser.add_argument("--out", default=None, help="write the summary as JSON here")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    tasks = load_backend_tasks("bundled", split=args.split)[: args.limit]
    sandbox = Sandbox()
    env = gym.make("ColBench-Backend-v0", split=args.split, tasks=tasks, sandbox=sandbox)
    rng = random.Random(0)

    # 1-2: the reference and the description-only guesses, scored in the sandbox.
    jobs = []
    for task in tasks:
        for answer in (task.ground_truth, guess_answer(task), guess_answer(task, rng)):
            jobs.append((answer, task.ground_truth, task.test_cases))
    reports = []
    for i in tqdm(range(0, len(jobs), 300), desc="guesses", unit="batch"):
        reports += sandbox.run_tests_many(jobs[i : i + 300])
    reference_ok = [r.success for r in reports[0::3]]
    conventional = [r.success for r in reports[1::3]]
    random_guess = [r.success for r in reports[2::3]]

    # 3: all facts, asked through the environment.
    dialogue = [answer_from_dialogue(env, task) for task in tqdm(tasks, desc="dialogues")]

    # 4: every single wrong detail is caught.
    variant_jobs = [(v, t.ground_truth, t.test_cases) for t in tasks for v in one_wrong_variants(t)]
    caught = []
    for i in tqdm(range(0, len(variant_jobs), 300), desc="one-wrong", unit="batch"):
        caught += [not r.success for r in sandbox.run_tests_many(variant_jobs[i : i + 300])]

    n = len(tasks)
    summary = {
        "split": args.split,
        "tasks": n,
        "families": len({t.family for t in tasks}),
        "difficulty": dict(sorted(Counter(t.difficulty for t in tasks).items())),
        "reference_passes_own_tests": sum(reference_ok) / n,
        "description_only_conventional_success": sum(conventional) / n,
        "description_only_random_success": sum(random_guess) / n,
        "all_facts_recovered_from_dialogue": sum(r for r, _ in dialogue) / n,
        "all_facts_answer_success": sum(s for _, s in dialogue) / n,
        "one_wrong_detail_variants": len(caught),
        "one_wrong_detail_caught": sum(caught) / max(1, len(caught)),
        "isolation": reports[0].isolation,
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(summary, handle, indent=2)
    sandbox.close()
    return summary


if __name__ == "__main__":
    main()
