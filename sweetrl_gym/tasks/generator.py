"""Deterministic generator of the bundled ColBench-style backend tasks.

Each task is drawn from a :class:`~sweetrl_gym.tasks.family.Family`: a target difficulty
``d`` is drawn uniformly, ``d`` hidden details get a non-default value (so an answer
written from the description alone gets exactly those wrong) and the rest keep their
default. The reference is rendered, run on the family's candidate inputs, and 10 tests
are chosen so that every wrong option of every detail fails at least one of them.

The generated set is shipped as a data file and pinned by a content hash
(:mod:`sweetrl_gym.tasks.bundled`). Regenerate it with::

    python -m sweetrl_gym.tasks.generator --write

and update ``BUNDLED_BACKEND_SHA256`` with the hash it prints.
"""

from __future__ import annotations

import argparse
import builtins
import collections
import contextlib
import gzip
import hashlib
import io
import json
import math
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from sweetrl_gym.sandbox.compare import outputs_match
from sweetrl_gym.tasks.family import Family, Signature
from sweetrl_gym.tasks.types import BackendTask, HiddenFact

__all__ = [
    "TESTS_PER_TASK",
    "TaskDraft",
    "check_family",
    "draft_task",
    "generate_bundled_tasks",
    "iter_bundled_tasks",
    "serialize_tasks",
]

TESTS_PER_TASK = 10
_SEED_NAMESPACE = "sweetrl-gym/backend/v1"
# Every 11th unique task goes to the test split. The shipped file keeps the stream's first
# 10,000 train and 3,000 test tasks: the first 1,000 test tasks are the official split's size
# (10k / 1k), the rest give held-out sets of one family or difficulty enough tasks to tell
# methods apart (a paired interval's width shrinks with the square root of the tasks).
_TEST_EVERY = 11


@dataclass(frozen=True)
class TaskDraft:
    """A generated task before it is given an id and a split."""

    family: Family
    values: dict[str, Any]
    signature: Signature
    signature_stated: bool
    description: str
    code: str
    test_cases: dict[str, str]
    facts: tuple[HiddenFact, ...]

    @property
    def difficulty(self) -> int:
        """Number of hidden facts an answer from the description alone gets wrong."""
        return sum(fact.matters for fact in self.facts)

    def to_task(self, task_id: str, split: str | None = None) -> BackendTask:
        """Return the finished task."""
        return BackendTask(
            task_id=task_id,
            problem_description=self.description,
            ground_truth=self.code,
            test_cases=self.test_cases,
            facts=self.facts,
            difficulty=self.difficulty,
            family=self.family.name,
            split=split,
        )


class _FragileInput(Exception):
    """The reference rounded a value that float noise could push either way."""


# "Near" is what float noise can reach: a tiny floor plus ~100 ulps of the value itself.
_NEAR_ABS, _NEAR_REL = 1e-9, 2e-14
_real_round, _real_floor, _real_ceil = round, math.floor, math.ceil


_FRAGILE = object()  # an output that float noise could change: neither right nor wrong


def _near(x: float, target: float) -> bool:
    return abs(x - target) <= _NEAR_ABS + _NEAR_REL * abs(x)


def _checked_round(x: Any, ndigits: int | None = None) -> Any:
    if isinstance(x, float):
        scaled = x * 10 ** (ndigits or 0)
        if _near(scaled, _real_floor(scaled) + 0.5):  # a tie: noise decides the result
            raise _FragileInput
    return _real_round(x) if ndigits is None else _real_round(x, ndigits)


def _checked_floor_ceil(real: Callable[[Any], int]) -> Callable[[Any], int]:
    def checked(x: Any) -> int:
        # An inexact near-integer (3.0000000000000004) came from noise; an exact one did not.
        if isinstance(x, float) and x != _real_round(x) and _near(x, _real_round(x)):
            raise _FragileInput
        return real(x)

    return checked


@contextlib.contextmanager
def _tie_detection() -> Iterator[None]:
    """Make rounding near a tie raise :class:`_FragileInput` while references run."""
    math.floor, math.ceil = _checked_floor_ceil(_real_floor), _checked_floor_ceil(_real_ceil)
    try:
        yield
    finally:
        math.floor, math.ceil = _real_floor, _real_ceil


def _compile(code: str, name: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {
        "__name__": "reference",
        "__builtins__": {**builtins.__dict__, "round": _checked_round},
    }
    exec(compile(code, f"<{name}>", "exec"), namespace)
    return namespace[name]


def _outputs(fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]]) -> list[Any]:
    outs = []
    with _tie_detection():
        for args in calls:
            try:
                outs.append(fn(*args))
            except _FragileInput:
                outs.append(_FRAGILE)
            except Exception as exc:  # a wrong variant may raise where the reference does not
                outs.append(exc)
    return outs


def _differs(expected: Any, got: Any) -> bool:
    if got is _FRAGILE:
        return False  # a wrong variant that only differs by float noise is not caught
    return isinstance(got, Exception) or not outputs_match(expected, got)


def _signature_fact(signature: Signature, stated: bool, default: Signature) -> HiddenFact:
    return HiddenFact(
        key="signature",
        topic="signature",
        answer=(
            f"The function should be called `{signature.name}` and take "
            f"`({', '.join(signature.params)})` in that order."
        ),
        keywords=(),
        matters=(not stated) and signature != default,
        value={"name": signature.name, "params": list(signature.params)},
    )


def draft_task(family: Family, rng: random.Random) -> TaskDraft | None:
    """Draw one task of ``family``; ``None`` when the draw cannot be tested well.

    A draw is rejected when some wrong option of a detail that varies is not caught by
    any candidate input, or when fewer than :data:`TESTS_PER_TASK` inputs are usable.

    Args:
        family: The family to draw from.
        rng: The source of randomness (the only one).

    Returns:
        The draft, or ``None``.

    """
    signatures = family.signature_options()
    stated = rng.random() < 0.5
    varying = [fact.key for fact in family.facts] + ([] if stated else ["signature"])
    difficulty = rng.randint(1, len(varying))
    changed = set(rng.sample(varying, difficulty))

    values: dict[str, Any] = {}
    for fact in family.facts:
        if fact.key in changed:
            values[fact.key] = rng.choice([o for o in fact.options if o != fact.default])
        else:
            values[fact.key] = fact.default
    if stated:  # the request names the signature, so any one will do
        signature = rng.choice(signatures)
    elif "signature" in changed:
        signature = rng.choice(signatures[1:])
    else:
        signature = signatures[0]

    code = family.render(values, signature)
    reference = _compile(code, signature.name)

    # Candidate inputs, in the family's natural parameter order, deduplicated.
    pool: list[tuple[Any, ...]] = []
    seen: set[str] = set()
    for args in family.inputs(values, rng):
        key = repr(args)
        if key not in seen:
            seen.add(key)
            pool.append(tuple(args))
    by_name = [dict(zip(family.params, args)) for args in pool]
    calls = [tuple(named[p] for p in signature.params) for named in by_name]
    ref_outs = _outputs(reference, calls)
    # Inputs where the reference returns None, raises, or rounds a near-tie are dropped.
    usable = [
        i
        for i, out in enumerate(ref_outs)
        if out is not None and out is not _FRAGILE and not isinstance(out, Exception)
    ]
    if len(usable) < TESTS_PER_TASK:
        return None

    # Every wrong option of every fact must differ from the reference on some usable input.
    variant_hits: list[set[int]] = []
    for fact in family.facts:
        for option in fact.options:
            if option == values[fact.key]:
                continue
            variant = _compile(
                family.render({**values, fact.key: option}, signature), signature.name
            )
            outs = _outputs(variant, [calls[i] for i in usable])
            hits = {i for i, out in zip(usable, outs) if _differs(ref_outs[i], out)}
            if not hits:
                return None
            variant_hits.append(hits)
    if not stated:
        for other in signatures:
            if other.name != signature.name or other == signature:
                continue  # a wrong name fails every test; only argument order needs checking
            variant = _compile(family.render(values, other), other.name)
            outs = _outputs(variant, [calls[i] for i in usable])
            hits = {i for i, out in zip(usable, outs) if _differs(ref_outs[i], out)}
            if not hits:
                return None
            variant_hits.append(hits)

    chosen = _choose_tests(usable, variant_hits, rng)
    test_cases = {f"test_{n + 1}": signature.call(by_name[i]) for n, i in enumerate(sorted(chosen))}

    facts = [_signature_fact(signature, stated, signatures[0])]
    for fact in family.facts:
        value = values[fact.key]
        facts.append(
            HiddenFact(
                key=fact.key,
                topic=fact.topic,
                answer=fact.state(value),
                keywords=tuple(fact.keywords),
                matters=value != fact.default,
                value=value,
            )
        )
    description = rng.choice(family.descriptions)
    if stated:
        description += f" The function should be `{signature.display()}`."
    return TaskDraft(
        family=family,
        values=values,
        signature=signature,
        signature_stated=stated,
        description=description,
        code=code,
        test_cases=test_cases,
        facts=tuple(facts),
    )


def _choose_tests(usable: list[int], variant_hits: list[set[int]], rng: random.Random) -> list[int]:
    """Greedy set cover of the wrong variants, then random fill up to 10 tests."""
    chosen: list[int] = []
    uncovered = list(range(len(variant_hits)))
    while uncovered and len(chosen) < TESTS_PER_TASK:
        best = max(
            (i for i in usable if i not in chosen),
            key=lambda i: (sum(i in variant_hits[v] for v in uncovered), -usable.index(i)),
        )
        chosen.append(best)
        uncovered = [v for v in uncovered if best not in variant_hits[v]]
    rest = [i for i in usable if i not in chosen]
    rng.shuffle(rest)
    chosen.extend(rest[: TESTS_PER_TASK - len(chosen)])
    return chosen


def _stream_rng(index: int) -> random.Random:
    digest = hashlib.sha256(f"{_SEED_NAMESPACE}/{index}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def iter_bundled_tasks(families: Sequence[Family] | None = None) -> Iterator[BackendTask]:
    """Yield the bundled tasks in their canonical order (endless; both splits interleaved).

    Draw ``i`` uses family ``i % len(families)`` and a seed derived from ``i`` alone, so
    the stream is reproducible and any prefix can be regenerated on its own. A draw whose
    reference duplicates an earlier task's is skipped, which keeps every task unique and
    the splits disjoint.

    Args:
        families: Families to draw from (default: all registered families).

    Yields:
        Tasks with ids ``backend-train-00000`` / ``backend-test-00000`` onwards.

    """
    if families is None:
        from sweetrl_gym.tasks.families import FAMILIES

        families = FAMILIES
    seen: set[str] = set()
    counts = {"train": 0, "test": 0}
    index = 0
    while True:
        family = families[index % len(families)]
        draft = draft_task(family, _stream_rng(index))
        index += 1
        if draft is None or draft.code in seen:
            continue
        seen.add(draft.code)
        split = "test" if len(seen) % _TEST_EVERY == 0 else "train"
        task_id = f"backend-{split}-{counts[split]:05d}"
        counts[split] += 1
        yield draft.to_task(task_id, split)


def generate_bundled_tasks(
    num_train: int = 10_000, num_test: int = 3_000, progress: bool = False
) -> list[BackendTask]:
    """Return the first ``num_train`` train and ``num_test`` test tasks of the stream."""
    tasks: list[BackendTask] = []
    want = {"train": num_train, "test": num_test}
    with tqdm(total=num_train + num_test, desc="generating tasks", disable=not progress) as bar:
        for task in iter_bundled_tasks():
            assert task.split is not None
            if want[task.split] > 0:
                tasks.append(task)
                want[task.split] -= 1
                bar.update()
            if not any(want.values()):
                return tasks
    raise AssertionError("unreachable: the stream is endless")


def serialize_tasks(tasks: Sequence[BackendTask]) -> bytes:
    """Return the canonical JSONL bytes of ``tasks`` (the content that is hashed)."""
    buf = io.StringIO()
    for task in tasks:
        buf.write(json.dumps(task.to_dict(), ensure_ascii=True))  # dicts keep insertion order
        buf.write("\n")
    return buf.getvalue().encode("ascii")


def check_family(family: Family, draws: int = 300) -> dict[str, Any]:
    """Draw ``draws`` tasks of one family and summarise their quality (for authors).

    Returns:
        Rejection rate, unique references, difficulty histogram and one example.

    """
    drafts = [draft_task(family, random.Random(f"check/{family.name}/{i}")) for i in range(draws)]
    kept = [d for d in drafts if d is not None]
    if not kept:
        return {"family": family.name, "rejected": 1.0, "unique": 0}
    example = kept[0]
    return {
        "family": family.name,
        "rejected": round(1 - len(kept) / draws, 3),
        "unique": len({d.code for d in kept}),
        "difficulty": dict(sorted(collections.Counter(d.difficulty for d in kept).items())),
        "example_description": example.description,
        "example_code": example.code,
        "example_tests": example.test_cases,
        "example_facts": [f.answer for f in example.facts],
    }


def _main(argv: Sequence[str] | None = None) -> int:
    from sweetrl_gym.tasks.bundled import BUNDLED_BACKEND_PATH

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the bundled data file")
    parser.add_argument("--check", metavar="FAMILY", help="summarise one family ('all' for every)")
    args = parser.parse_args(argv)
    if args.check:
        from sweetrl_gym.tasks.families import FAMILIES

        for family in FAMILIES:
            if args.check in ("all", family.name):
                print(json.dumps(check_family(family), indent=2, default=str))
        return 0
    tasks = generate_bundled_tasks(progress=True)
    data = serialize_tasks(tasks)
    print(f"sha256 {hashlib.sha256(data).hexdigest()}  ({len(tasks)} tasks)")
    if args.write:
        with (
            open(BUNDLED_BACKEND_PATH, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz,
        ):
            gz.write(data)
        print(f"wrote {Path(BUNDLED_BACKEND_PATH)}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
