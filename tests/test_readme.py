"""Every code block of the README runs as written, at small sizes where the README says so.

A block may be preceded by ``<!-- readme-test: OLD -> NEW; ... -->``: the test makes each
replacement (each must occur in the block) before running it, e.g. a model swapped for the
tiny random-init one or 100 tasks for 2. ``{base_url}`` stands for a loopback OpenAI-compatible
server and ``tiny_agent()`` for a tiny random-init policy. Python blocks run in a fresh
interpreter; shell blocks line by line, with the ``sweetrl`` command on the PATH. Two kinds
of lines are checked rather than run: ``make TARGET`` (the targets are the test suite itself
and the 2-hour main job) is dry-run, and ``pip`` needs the package index (tests/test_wheel.py
builds and installs the wheel offline).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(
    r"(?:<!-- readme-test: (?P<directive>.*?) -->\n)?```(?P<lang>\w+)\n(?P<code>.*?)```", re.S
)

# Defined before every Python block (the README's ``tiny_agent()`` placeholder).
PRELUDE = """
from agents import TransformersAgent
from agents.tiny_model import make_tiny_lm

def tiny_agent():
    model, tokenizer = make_tiny_lm(seed=0)
    return TransformersAgent(model, tokenizer, max_new_tokens=8)
"""


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int  # where the block starts in the README

    @property
    def name(self) -> str:
        return f"README:{self.line}:{self.lang}"


def readme_blocks() -> list[Block]:
    """The README's runnable blocks with their replacements made."""
    text = README.read_text()
    blocks = []
    for match in BLOCK.finditer(text):
        if match["lang"] not in ("python", "bash"):
            continue
        code = match["code"]
        for rule in filter(None, (match["directive"] or "").split(";")):
            old, new = (part.strip() for part in rule.split("->"))
            assert old in code, f"readme-test replacement {old!r} not in the block"
            code = code.replace(old, new)
        line = text.count("\n", 0, match.start("code"))
        blocks.append(Block(match["lang"], code, line))
    return blocks


BLOCKS = readme_blocks()


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI(reply=lambda messages: "I WANT TO ANSWER:\ndef f():\n    return 0") as fake:
        yield fake


def run(command: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
    }
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, (
        f"{shlex.join(command)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


def test_the_readme_has_its_blocks():
    langs = [block.lang for block in BLOCKS]
    assert langs.count("python") >= 3 and langs.count("bash") >= 4
    assert any("make demo" in block.code for block in BLOCKS)
    assert len(README.read_text().splitlines()) <= 160


def test_a_replacement_that_matches_nothing_is_refused(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text("<!-- readme-test: 100 -> 2 -->\n```bash\nsweetrl eval --tasks 5\n```\n")
    monkeypatch.setattr(sys.modules[__name__], "README", readme)
    with pytest.raises(AssertionError, match="not in the block"):
        readme_blocks()


@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.name)
def test_the_block_runs(block, tmp_path, server):
    code = block.code.replace("{base_url}", server.base_url)
    if block.lang == "python":
        script = tmp_path / "block.py"
        script.write_text(PRELUDE + code)
        run([sys.executable, str(script)], tmp_path, timeout=600)
        return
    for line in code.splitlines():
        line = line.split("  #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("pip "):
            continue  # needs the package index; tests/test_wheel.py covers the wheel
        if line.startswith("make "):
            done = run(["make", "-n", "-C", str(ROOT), *shlex.split(line)[1:]], tmp_path)
            assert done.stdout.strip()
            continue
        run(["bash", "-c", line], tmp_path, timeout=600)
