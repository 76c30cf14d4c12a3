"""Agents by import path or entry point: `agents.load_agent`, from a package outside the project."""

from __future__ import annotations

import textwrap

import pytest

from agents import agent_entry_points, is_agent_spec, load_agent
from sweetrl_gym.plugins import PluginError

AGENTS_SOURCE = """
class EchoAgent:
    def __init__(self, answer="def f(): return 1"):
        self.answer = answer

    def act(self, batch):
        return [f"I WANT TO ANSWER: {self.answer}" for _ in batch]


def make_agent(answer="def f(): return 2"):
    return EchoAgent(answer)


def make_nothing():
    return 42


def needs_a_model(model):
    return EchoAgent()


READY = EchoAgent("def f(): return 3")
NOT_AN_AGENT = "a string"
"""


def write_package(root, name, source):
    """Write ``root/name/__init__.py`` holding ``source``; return ``root``."""
    package = root / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(source))
    return root


def write_distribution(root, name, entry_points):
    """Make ``root`` hold an installed distribution that declares ``entry_points``."""
    info = root / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = [f"{key} = {value}" for key, value in entry_points.items()]
    (info / "entry_points.txt").write_text("[sweetrl_gym.agents]\n" + "\n".join(lines) + "\n")


def test_a_class_a_factory_or_an_agent_by_import_path(importable):
    write_package(importable, "myagents", AGENTS_SOURCE)
    assert is_agent_spec("myagents:EchoAgent")
    echo = load_agent("myagents:EchoAgent")
    assert type(echo).__name__ == "EchoAgent" and echo.answer == "def f(): return 1"
    assert load_agent("myagents:make_agent").answer == "def f(): return 2"
    assert load_agent("myagents:READY").answer == "def f(): return 3"  # an agent, as it is
    assert load_agent("myagents:EchoAgent", answer="x").answer == "x"  # keyword options
    assert load_agent(echo) is echo  # the object itself


def test_an_installed_packages_entry_point(importable):
    write_package(importable, "myagents_ep", AGENTS_SOURCE)
    write_distribution(
        importable, "myagents_ep", {"echo": "myagents_ep:EchoAgent", "broken": "myagents_ep:Nope"}
    )
    assert {"echo", "broken"} <= set(agent_entry_points())
    assert is_agent_spec("echo") and not is_agent_spec("no-such-agent")
    assert load_agent("echo").act([[{"role": "user", "content": "hi"}]]) == [
        "I WANT TO ANSWER: def f(): return 1"
    ]
    with pytest.raises(PluginError, match=r"'broken'.*myagents_ep.*Nope"):
        load_agent("broken")
    with pytest.raises(PluginError, match=r"entry point.*did you mean 'echo'"):
        load_agent("ecko")


def test_a_module_that_is_not_there(importable):
    with pytest.raises(PluginError, match=r"'nosuchmodule:Agent'.*'nosuchmodule'.*No module named"):
        load_agent("nosuchmodule:Agent")


def test_a_module_that_fails_to_import_says_why(importable):
    write_package(importable, "mybroken", "import json\nraise RuntimeError('no GPU here')\n")
    with pytest.raises(PluginError, match=r"'mybroken'.*RuntimeError: no GPU here"):
        load_agent("mybroken:Agent")


def test_a_missing_attribute_suggests_the_close_public_name(importable):
    write_package(importable, "myagents", AGENTS_SOURCE)
    with pytest.raises(PluginError, match=r"no attribute 'EchoAgnt'; did you mean 'EchoAgent'"):
        load_agent("myagents:EchoAgnt")


def test_something_that_is_not_an_agent_is_named(importable):
    write_package(importable, "myagents", AGENTS_SOURCE)
    with pytest.raises(PluginError, match=r"make_nothing\(\) returned 42 \(type int\).*act"):
        load_agent("myagents:make_nothing")
    with pytest.raises(PluginError, match=r"'a string' \(type str\).*neither an agent"):
        load_agent("myagents:NOT_AN_AGENT")
    with pytest.raises(PluginError, match=r"cannot be called with no arguments.*model"):
        load_agent("myagents:needs_a_model")
    with pytest.raises(PluginError, match=r"takes no options"):
        load_agent("myagents:READY", answer="x")
    with pytest.raises(PluginError, match=r"neither an import path.*nor an entry point"):
        load_agent("myagents")
