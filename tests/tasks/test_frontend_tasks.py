"""Frontend tasks: the record, the bundled generator (sizes, pin, pages, requests), loaders."""

import collections
import gzip
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from sweetrl_gym.tasks import TaskFormatError
from sweetrl_gym.tasks import frontend_generator as gen
from sweetrl_gym.tasks.frontend_generator import (
    BUNDLED_FRONTEND_COUNTS,
    BUNDLED_FRONTEND_SHA256,
    TAILWIND_CDN_TAG,
    bundled_frontend_tasks,
    generate_frontend_tasks,
    serialize_frontend_tasks,
)
from sweetrl_gym.tasks.frontend_loaders import frontend_task_from_record, load_frontend_tasks
from sweetrl_gym.tasks.frontend_sections import (
    BUSINESSES,
    HUES,
    SECTION_KINDS,
    SECTION_LABELS,
    TAILWIND_COLOUR_NAMES,
)
from sweetrl_gym.tasks.frontend_types import FrontendTask

PAGE = (
    '<html><head><script src="https://cdn.tailwindcss.com"></script></head>'
    '<body><div class="bg-red-500 p-8">Hi</div></body></html>'
)
GOOD = {"problem_description": "I need a page for my shop.", "ground_truth": PAGE}
SECTION_TAGS = {"navigation": "nav", "hero": "header", "footer": "footer"}
VOID = {"meta", "input", "br", "hr", "img", "link"}
# Utilities that exist, with the same meaning, in Tailwind v2, v3 and v4.
PORTABLE_CLASS = re.compile(
    r"(?:bg|text|border)-(?:white|black|(?:" + "|".join(HUES) + r")-(?:50|[1-9]00))"
    r"|text-(?:xs|sm|base|lg|xl|[2-6]xl|left|center|right)"
    r"|(?:p|px|py|pt|pb|m|mx|my|mt|mb|gap|space-y)-\d+|mx-auto"
    r"|grid|grid-cols-[1-4]|flex|flex-col|items-(?:start|center|end)"
    r"|justify-(?:start|center|end|between)|inline-block|block"
    r"|w-(?:full|\d+)|h-\d+|max-w-(?:xl|[2-6]xl)"
    r"|rounded(?:-(?:none|md|lg|xl|2xl|full))?|shadow(?:-(?:md|lg))?|border(?:-[tb])?"
    r"|font-(?:sans|serif|mono|normal|medium|semibold|bold|extrabold)"
    r"|italic|uppercase|tracking-wide"
)


@pytest.fixture(scope="module")
def splits():
    return {split: load_frontend_tasks("bundled", split=split) for split in ("train", "test")}


# ---- the bundled set -------------------------------------------------------------------


def test_sizes_ids_unique_and_disjoint_splits(splits):
    train, test = splits["train"], splits["test"]
    assert len(train) == BUNDLED_FRONTEND_COUNTS["train"] >= 10_000
    assert len(test) == BUNDLED_FRONTEND_COUNTS["test"] >= 500
    everything = train + test
    assert len({t.task_id for t in everything}) == len(everything)
    assert len({t.ground_truth for t in everything}) == len(everything)
    assert not {t.ground_truth for t in train} & {t.ground_truth for t in test}
    assert all(t.split == "train" for t in train) and all(t.split == "test" for t in test)
    assert {t.family for t in test} == {b.family for b in BUSINESSES}


def test_generation_is_deterministic_and_matches_the_pin(splits):
    first, second = generate_frontend_tasks("test"), generate_frontend_tasks("test")
    assert first == second == splits["test"]
    assert [t.ground_truth for t in first] == [t.ground_truth for t in splits["test"]]
    for split, tasks in splits.items():
        digest = hashlib.sha256(serialize_frontend_tasks(tasks)).hexdigest()
        assert digest == BUNDLED_FRONTEND_SHA256[split]
    # any prefix regenerates on its own
    assert generate_frontend_tasks("train", 50) == splits["train"][:50]


def test_generation_does_not_depend_on_the_hash_seed():
    code = (
        "import hashlib\n"
        "from sweetrl_gym.tasks.frontend_generator import generate_frontend_tasks, "
        "serialize_frontend_tasks\n"
        "print(hashlib.sha256(serialize_frontend_tasks(generate_frontend_tasks('test')))"
        ".hexdigest())\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.strip() == BUNDLED_FRONTEND_SHA256["test"]


def test_a_changed_generator_fails_the_pin_check(monkeypatch):
    gen._bundled.cache_clear()
    monkeypatch.setitem(BUNDLED_FRONTEND_SHA256, "test", "0" * 64)
    try:
        with pytest.raises(RuntimeError, match=r"test tasks have sha256 .*--print-hash"):
            load_frontend_tasks(split="test")
    finally:
        gen._bundled.cache_clear()


def test_loading_the_test_split_builds_no_train_page(monkeypatch):
    drawn = []
    real = gen.draft_page

    def spy(rng, split="train"):
        drawn.append(split)
        return real(rng, split)

    gen._bundled.cache_clear()
    monkeypatch.setattr(gen, "draft_page", spy)
    try:
        tasks = load_frontend_tasks(split="test")
    finally:
        gen._bundled.cache_clear()
    assert len(tasks) == BUNDLED_FRONTEND_COUNTS["test"]
    assert drawn and set(drawn) == {"test"}


def test_bundled_lists_are_fresh_copies():
    tasks = bundled_frontend_tasks("test")
    tasks.clear()
    assert len(bundled_frontend_tasks("test")) == BUNDLED_FRONTEND_COUNTS["test"]
    with pytest.raises(ValueError, match="split must be one of"):
        bundled_frontend_tasks("dev")


class _PageChecker(HTMLParser):
    """Records tag balance, top-level body children and class tokens of one page."""

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.body_children, self.classes = [], [], [], []
        self.head_scripts, self.doctype = [], False

    def handle_decl(self, decl):
        self.doctype = self.doctype or decl.lower() == "doctype html"

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.classes.extend((attrs.get("class") or "").split())
        if self.stack == ["html", "body"]:
            self.body_children.append((tag, attrs.get("id")))
        if tag == "script" and "head" in self.stack:
            self.head_scripts.append(attrs.get("src"))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> with open {self.stack[-3:]}")
        else:
            self.stack.pop()


def _check_page(task):
    checker = _PageChecker()
    checker.feed(task.ground_truth)
    checker.close()
    return checker


def test_pages_are_well_formed_semantic_and_portable(splits):
    sample = splits["test"] + splits["train"][:500]
    sizes = []
    for task in sample:
        page = task.ground_truth
        sizes.append(len(page))
        checker = _check_page(task)
        assert checker.doctype and not checker.errors and checker.stack == [], task.task_id
        assert checker.head_scripts == ["https://cdn.tailwindcss.com"], task.task_id
        assert page.count(TAILWIND_CDN_TAG) == 1
        assert page.index(TAILWIND_CDN_TAG) < page.index("</head>")
        # Sections: the body's children, in order, in semantic tags named by their kind.
        assert 3 <= len(task.sections) <= 7 and len(set(task.sections)) == len(task.sections)
        assert set(task.sections) <= set(SECTION_KINDS)
        expected = [(SECTION_TAGS.get(kind, "section"), kind) for kind in task.sections]
        assert checker.body_children == expected, task.task_id
        if "navigation" in task.sections:
            assert task.sections[0] == "navigation"
        if "footer" in task.sections:
            assert task.sections[-1] == "footer"
        # Offline-safe: no images, no URL but the Tailwind CDN tag the renderer swaps out.
        assert "<img" not in page and re.findall(r"https?://[^\"']+", page) == [
            "https://cdn.tailwindcss.com"
        ]
        bad = [c for c in checker.classes if not PORTABLE_CLASS.fullmatch(c)]
        assert not bad, (task.task_id, sorted(set(bad)))
    assert min(sizes) > 1_000 and max(sizes) < 12_000
    assert 2_000 <= statistics.median(sizes) <= 8_000


def test_requests_are_vague_and_name_the_business(splits):
    colour = re.compile(r"\b(" + "|".join(TAILWIND_COLOUR_NAMES) + r")\b", re.IGNORECASE)
    design = re.compile(
        r"bg-|text-|<|column|grid|navigation|footer|hero|banner|align|rounded|font",
        re.IGNORECASE,
    )
    for task in splits["train"] + splits["test"]:
        request = task.problem_description
        assert not colour.search(request), (task.task_id, request)
        assert not design.search(request), (task.task_id, request)
        assert 30 < len(request) < 300
        title = re.search(r"<title>(.*?)</title>", task.ground_truth).group(1)
        assert title.split()[0] in request, (task.task_id, request)


def test_variety_across_the_first_200_pages(splits):
    tasks = splits["train"][:200]
    pages = "\n".join(t.ground_truth for t in tasks)
    assert len({t.sections for t in tasks}) >= 100
    assert len({t.family for t in tasks}) == len(BUSINESSES)
    kinds = collections.Counter(kind for t in tasks for kind in t.sections)
    assert set(kinds) == set(SECTION_KINDS) and min(kinds.values()) >= 15
    assert len(set(re.findall(r"\bbg-[a-z]+-\d+\b", pages))) >= 50
    assert (
        len(
            {
                re.search(r"<h1 class=\"(text-\dxl)", p).group(1)
                for p in pages.split("<!DOCTYPE")
                if "<h1" in p
            }
        )
        >= 3
    )
    assert set(re.findall(r"grid-cols-(\d)", pages)) >= {"2", "3", "4"}
    assert {"text-left", "text-center", "text-right"} <= set(
        re.findall(r"text-(?:left|center|right)", pages)
    )
    assert {"flex-col", "justify-between"} <= set(re.findall(r"flex-col|justify-between", pages))
    assert len({t.problem_description for t in tasks}) == len(tasks)
    assert set(SECTION_LABELS) == set(SECTION_KINDS)


# ---- the record ------------------------------------------------------------------------


def test_record_round_trip_reference_and_hash(splits):
    task = splits["test"][0]
    assert FrontendTask.from_dict(json.loads(json.dumps(task.to_dict()))) == task
    ref = task.reference()
    assert ref == {
        "ground_truth": task.ground_truth,
        "problem_description": task.problem_description,
        "sections": list(task.sections),
        "family": task.family,
    }
    ref["sections"].append("extra")
    ref["screenshot"] = "/tmp/x.png"
    assert task.reference()["sections"] == list(task.sections)
    assert "screenshot" not in task.reference()
    twin = FrontendTask(**{**task.__dict__, "extra": {"note": 1}})
    assert twin == task and len({twin, task}) == 1
    with pytest.raises(AttributeError):
        task.task_id = "other"  # frozen


# ---- loading files and records ---------------------------------------------------------


def write_jsonl(path, records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_official_jsonl_round_trip(tmp_path, splits, suffix):
    ours = [t.to_dict() for t in splits["test"][:3]]
    records = [GOOD, "", *ours, GOOD]
    path = tmp_path / f"frontend{suffix}"
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    if suffix.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    tasks = load_frontend_tasks(str(path), split="test")
    assert len(tasks) == 5
    official = tasks[0]
    assert official.ground_truth == PAGE and official.sections == () and official.family is None
    assert official.split == "test" and official.task_id.startswith("colbench-frontend-")
    assert re.fullmatch(r"colbench-frontend-[0-9a-f]{12}", official.task_id)
    assert tasks[1:4] == splits["test"][:3]
    assert tasks[4].task_id == official.task_id + "-2"  # repeated ids are made unique
    # ids depend on content, not on the file: the same record gets the same id
    assert load_frontend_tasks([GOOD])[0].task_id == official.task_id
    assert load_frontend_tasks(path)[0].split == "train"


def test_lists_of_records_and_tasks(splits):
    task = splits["test"][5]
    tasks = load_frontend_tasks([GOOD, task, task.to_dict(), GOOD], split="test")
    assert [t.task_id for t in tasks] == [
        tasks[0].task_id,
        task.task_id,
        f"{task.task_id}-2",
        f"{tasks[0].task_id}-2",
    ]
    assert tasks[1] is task and tasks[2].ground_truth == task.ground_truth
    assert frontend_task_from_record({**GOOD, "task_id": 7}).task_id == "7"
    assert frontend_task_from_record({**GOOD, "split": "test"}, split="train").split == "test"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"ground_truth": PAGE}, "missing field 'problem_description'"),
        ({"problem_description": "x"}, "missing field 'ground_truth'"),
        ({**GOOD, "ground_truth": 3}, "'ground_truth' must be a non-empty string"),
        ({**GOOD, "problem_description": "  "}, "'problem_description' must be a non-empty"),
        ({**GOOD, "ground_truth": "<div>no page</div>"}, r"not an HTML page \(no <html> tag\)"),
        ({**GOOD, "ground_truth": "<htmlx>"}, "not an HTML page"),
        ({**GOOD, "sections": "hero"}, "'sections' must be a list of section names"),
        ({**GOOD, "sections": ["hero", 3]}, "'sections' must be a list"),
        ({**GOOD, "family": 5}, "'family' must be a non-empty string"),
        ({**GOOD, "task_id": [1]}, "'task_id' must be a non-empty string or an integer"),
        ([1, 2], "expected a JSON object, got list"),
    ],
)
def test_bad_records_name_the_line(tmp_path, record, message):
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD, "", record])
    with pytest.raises(TaskFormatError, match=rf"bad\.jsonl:3: .*{message}"):
        load_frontend_tasks(path)


def test_bad_records_in_a_list_name_the_index():
    with pytest.raises(TaskFormatError, match=r"task 1: missing field 'ground_truth'"):
        load_frontend_tasks([GOOD, {"problem_description": "x"}])


def test_unreadable_files_missing_files_bad_splits_and_sources(tmp_path):
    with pytest.raises(FileNotFoundError, match="task file not found"):
        load_frontend_tasks(tmp_path / "nope.jsonl")
    not_gzip = tmp_path / "plain.jsonl.gz"
    not_gzip.write_text(json.dumps(GOOD) + "\n")
    with pytest.raises(
        TaskFormatError, match=r"plain\.jsonl\.gz:1: not a UTF-8 JSONL file \(gzip\)"
    ):
        load_frontend_tasks(not_gzip)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"a": "\xff"}\n')
    with pytest.raises(TaskFormatError, match=r"latin\.jsonl:\d: not a UTF-8 JSONL file"):
        load_frontend_tasks(latin)
    empty = write_jsonl(tmp_path / "empty.jsonl", ["", "  "])
    with pytest.raises(ValueError, match="no tasks"):
        load_frontend_tasks(empty)
    for split in ("dev", "TRAIN", None):
        with pytest.raises(ValueError, match="split must be one of"):
            load_frontend_tasks(split=split)
        with pytest.raises(ValueError, match="split must be one of"):
            load_frontend_tasks([GOOD], split=split)
    for source in (42, GOOD, b"bytes"):
        with pytest.raises(TypeError, match="source must be"):
            load_frontend_tasks(source)


# ---- maintainer CLI ---------------------------------------------------------------------


def test_cli_dump_prints_pages(capsys):
    assert gen._main(["--dump", "2", "--split", "test"]) == 0
    out = capsys.readouterr().out
    tasks = generate_frontend_tasks("test", 2)
    assert out.count("<!DOCTYPE html>") == 2 and tasks[1].ground_truth in out
    assert tasks[0].problem_description in out


@pytest.mark.slow
def test_cli_print_hash_reports_the_pins(capsys):
    assert gen._main(["--print-hash"]) == 0
    out = capsys.readouterr().out
    for split in ("train", "test"):
        assert BUNDLED_FRONTEND_SHA256[split] in out
        assert re.search(rf"# {split}: \d+ tasks in [\d.]+s, matches the pin", out)
