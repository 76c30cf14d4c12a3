"""Deterministic generator of the bundled ColBench-style frontend (design) tasks.

Each task is a single-page Tailwind design for an invented business (a bakery, a
software startup, a photographer, ...): 3-7 sections (navigation, hero, features,
pricing, testimonials, stats, call to action, gallery, FAQ, contact, footer) with their
own background and text colours, layouts, alignment, sizes and copy, and a vague request
in the user's voice that names the business but not the design.

Page ``i`` of a split is drawn from ``random.Random("sweetrl-gym/frontend/v1/<split>/<i>")``
alone, so a split can be built without the other, and the pages are generated at load
time (no data file). Business names start with a word only that split uses, so no
train page equals a test page. Each split is pinned by the sha256 of its canonical JSONL
(:data:`BUNDLED_FRONTEND_SHA256`), checked whenever it is built. After a deliberate
change to the generator or its word lists, print the new pins with::

    python -m sweetrl_gym.tasks.frontend_generator --print-hash

and paste them into :data:`BUNDLED_FRONTEND_SHA256` (the task set has then changed:
say so in the change log, since results on the old set are not comparable).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import io
import json
import random
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sweetrl_gym.tasks.frontend_sections.html import el, render_document
from sweetrl_gym.tasks.frontend_sections.palette import draw_theme
from sweetrl_gym.tasks.frontend_sections.sections import RENDERERS, SECTION_KINDS, PageContext
from sweetrl_gym.tasks.frontend_sections.vocab import (
    BUSINESSES,
    FIRST_NAMES,
    GENERAL_WISHES,
    LAST_NAMES,
    NAME_STEMS,
    SECTION_WISHES,
    STREETS,
    Business,
    words_for_split,
)
from sweetrl_gym.tasks.frontend_types import FrontendTask
from sweetrl_gym.tasks.records import SPLITS

__all__ = [
    "BUNDLED_FRONTEND_COUNTS",
    "BUNDLED_FRONTEND_SHA256",
    "TAILWIND_CDN_TAG",
    "PageDraft",
    "bundled_frontend_tasks",
    "draft_page",
    "generate_frontend_tasks",
    "iter_frontend_tasks",
    "serialize_frontend_tasks",
]

TAILWIND_CDN_URL = "https://cdn.tailwindcss.com"
TAILWIND_CDN_TAG = f'<script src="{TAILWIND_CDN_URL}"></script>'
BUNDLED_FRONTEND_COUNTS = {"train": 10_000, "test": 500}
# sha256 of each split's canonical JSONL (serialize_frontend_tasks). Update deliberately only:
# `python -m sweetrl_gym.tasks.frontend_generator --print-hash` prints the current values.
BUNDLED_FRONTEND_SHA256 = {
    "train": "6a3f0c39377ab7c981d734f7b841eb3b89e74ff31b18f058e284703835b349cc",
    "test": "9ff429748b8f47187d5204bd5073473db40ad2c31df22861d60713c77d6f5a6c",
}
_SEED_NAMESPACE = "sweetrl-gym/frontend/v1"
_MIDDLE_KINDS = SECTION_KINDS[2:-1]  # everything between the hero and the footer


@dataclass(frozen=True)
class PageDraft:
    """A generated page before it is given an id and a split.

    Attributes:
        description: The vague request.
        html: The target page.
        family: The business family.
        sections: Section kinds in page order.

    """

    description: str
    html: str
    family: str
    sections: tuple[str, ...]

    def to_task(self, task_id: str, split: str | None = None) -> FrontendTask:
        """Return the finished task."""
        return FrontendTask(
            task_id=task_id,
            problem_description=self.description,
            ground_truth=self.html,
            split=split,
            family=self.family,
            sections=self.sections,
        )


def _draw_sections(rng: random.Random, business: Business) -> tuple[str, ...]:
    """3-7 distinct kinds: navigation and hero first, footer last, the rest in between."""
    total = rng.randint(3, 7)
    head = [kind for kind, chance in (("navigation", 0.8), ("hero", 0.9)) if rng.random() < chance]
    tail = ["footer"] if rng.random() < 0.8 else []
    pool = list(_MIDDLE_KINDS)
    weights = [3 if kind in business.preferred else 1 for kind in pool]
    middle = []
    for _ in range(total - len(head) - len(tail)):
        kind = rng.choices(pool, weights)[0]
        index = pool.index(kind)
        del pool[index], weights[index]
        middle.append(kind)
    return (*head, *middle, *tail)


def _article(noun: str) -> str:
    return "an" if noun[0] in "aeiou" else "a"


_PLURAL = re.compile(r"\b(we|us|our)\b", re.IGNORECASE)
_BRAND_REQUESTS = (
    "I need a website for my {noun}, {name}.",
    "Can you build a homepage for {name}? It's {a} {noun}.",
    "I run {a} {noun} called {name} and want a simple website for it.",
    "We're {name}, {a} {noun}, and we need a landing page.",
    "Please make a one-page site for {name}, our {noun}.",
    "I'd like a website for {name}, {a} {noun} I just started.",
    "Could you design a page for my {noun}? It's called {name}.",
    "{name} needs a website. We're {a} {noun}.",
)
_PERSON_REQUESTS = (
    "I'm {person}, {a} {noun}, and I need a portfolio site.",
    "Can you make me a personal website? I'm {a} {noun} called {person}.",
    "I need a site to show my work as {a} {noun}. My name is {person}.",
    "Please build a portfolio page for me, {person}. I'm {a} {noun}.",
)


def _describe(
    rng: random.Random,
    business: Business,
    noun: str,
    name: str,
    person: str,
    sections: tuple[str, ...],
) -> str:
    """Write the vague request: who it is for and at most two broad wishes, never the design."""
    templates = _PERSON_REQUESTS if business.person else _BRAND_REQUESTS
    parts = [rng.choice(templates).format(noun=noun, a=_article(noun), name=name, person=person)]
    wishable = [kind for kind in sections if kind in SECTION_WISHES]
    if wishable and rng.random() < 0.7:
        wishes = SECTION_WISHES[rng.choice(wishable)]
        if business.person:  # one person speaking: no "we"/"us"
            wishes = tuple(w for w in wishes if not _PLURAL.search(w)) or wishes
        parts.append(rng.choice(wishes))
    if rng.random() < 0.6:
        parts.append(rng.choice(GENERAL_WISHES))
    return " ".join(parts)


def draft_page(rng: random.Random, split: str = "train") -> PageDraft:
    """Draw one page and its request.

    Args:
        rng: The source of randomness (the only one).
        split: Which split's share of name words to name the business from.

    Returns:
        The draft.

    """
    business = rng.choice(BUSINESSES)
    noun, endings = rng.choice(business.nouns)
    if business.person:
        person = f"{rng.choice(words_for_split(FIRST_NAMES, split))} {rng.choice(LAST_NAMES)}"
        name = person if rng.random() < 0.6 else f"{person} {rng.choice(business.suffixes)}"
    else:
        stem = rng.choice(words_for_split(NAME_STEMS, split))
        name = f"{stem} {rng.choice(endings or business.suffixes)}"
        person = name
    theme = draw_theme(rng)
    sections = _draw_sections(rng, business)
    slug = re.sub(r"[^a-z]", "", name.lower())
    ctx = PageContext(
        rng=rng,
        theme=theme,
        business=business,
        name=name,
        year=rng.choice((2023, 2024, 2025)),
        email=f"hello@{slug}.com",
        phone=f"(555) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
        address=f"{rng.randint(1, 999)} {rng.choice(STREETS)} Street",
    )
    body = el(
        "body", f"{theme.font} bg-white text-gray-900", *(RENDERERS[kind](ctx) for kind in sections)
    )
    head = [
        el("meta", "", charset="utf-8"),
        el("meta", "", name="viewport", content="width=device-width, initial-scale=1.0"),
        el("title", "", name),
        el("script", "", src=TAILWIND_CDN_URL),
    ]
    return PageDraft(
        description=_describe(rng, business, noun, name, person, sections),
        html=render_document(head, body),
        family=business.family,
        sections=sections,
    )


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")


def iter_frontend_tasks(split: str = "train") -> Iterator[FrontendTask]:
    """Yield a split's tasks in canonical order (endless).

    Draw ``i`` is seeded from the split and ``i`` alone; a draw whose page repeats an
    earlier one of the split is skipped, so pages are unique.

    Args:
        split: ``"train"`` or ``"test"``.

    Yields:
        Tasks with ids ``frontend-<split>-00000`` onwards.

    """
    _check_split(split)
    seen: set[str] = set()
    index = 0
    while True:
        draft = draft_page(random.Random(f"{_SEED_NAMESPACE}/{split}/{index}"), split)
        index += 1
        if draft.html in seen:
            continue
        seen.add(draft.html)
        yield draft.to_task(f"frontend-{split}-{len(seen) - 1:05d}", split)


def generate_frontend_tasks(split: str = "train", count: int | None = None) -> list[FrontendTask]:
    """Return the first ``count`` tasks of a split (default: the bundled size)."""
    _check_split(split)
    count = BUNDLED_FRONTEND_COUNTS[split] if count is None else count
    stream = iter_frontend_tasks(split)
    return [next(stream) for _ in range(count)]


def serialize_frontend_tasks(tasks: Sequence[FrontendTask]) -> bytes:
    """Return the canonical JSONL bytes of ``tasks`` (the content that is hashed)."""
    buf = io.StringIO()
    for task in tasks:
        buf.write(json.dumps(task.to_dict(), ensure_ascii=True))  # dicts keep insertion order
        buf.write("\n")
    return buf.getvalue().encode("ascii")


@functools.lru_cache(maxsize=2)
def _bundled(split: str) -> tuple[FrontendTask, ...]:
    tasks = generate_frontend_tasks(split)
    digest = hashlib.sha256(serialize_frontend_tasks(tasks)).hexdigest()
    if digest != BUNDLED_FRONTEND_SHA256[split]:
        raise RuntimeError(
            f"bundled frontend {split} tasks have sha256 {digest}, expected "
            f"{BUNDLED_FRONTEND_SHA256[split]}: the generator changed or is not deterministic. "
            "If the change is deliberate, update BUNDLED_FRONTEND_SHA256 with "
            "`python -m sweetrl_gym.tasks.frontend_generator --print-hash`."
        )
    return tuple(tasks)


def bundled_frontend_tasks(split: str) -> list[FrontendTask]:
    """Return the bundled tasks of ``split`` (``"train"``: 10,000, ``"test"``: 500).

    Generated on first use (a second or two) and cached; the content is checked against
    :data:`BUNDLED_FRONTEND_SHA256`.

    Raises:
        ValueError: Unknown split.
        RuntimeError: The generated content does not match the pinned hash.

    """
    _check_split(split)
    return list(_bundled(split))


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--print-hash", action="store_true", help="print each split's sha256")
    parser.add_argument("--dump", type=int, metavar="N", help="print the first N pages")
    parser.add_argument("--split", default="train", choices=SPLITS, help="split for --dump")
    args = parser.parse_args(argv)
    if args.dump:
        for task in generate_frontend_tasks(args.split, args.dump):
            print(f"<!-- {task.task_id} [{task.family}] {' '.join(task.sections)} -->")
            print(f"<!-- {task.problem_description} -->")
            print(task.ground_truth)
    if args.print_hash or not args.dump:
        hashes = {}
        for split in SPLITS:
            start = time.perf_counter()
            tasks = generate_frontend_tasks(split)
            hashes[split] = hashlib.sha256(serialize_frontend_tasks(tasks)).hexdigest()
            same = "matches" if hashes[split] == BUNDLED_FRONTEND_SHA256[split] else "differs from"
            print(
                f"# {split}: {len(tasks)} tasks in {time.perf_counter() - start:.2f}s, "
                f"{same} the pin"
            )
        print("BUNDLED_FRONTEND_SHA256 = " + json.dumps(hashes, indent=4).replace("\n}", ",\n}"))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
