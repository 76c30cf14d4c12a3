"""The layout shows the architecture: imports run one way, and no module imports itself back.

Every module of the four packages and of ``research`` is parsed with ``ast``: all its
imports count, those inside functions too, and ``importlib.import_module`` with a literal
name; imports under ``if TYPE_CHECKING:`` count for the layers but not for circles (they
never run: an annotation may name a type of a module that imports this one). ``import a.b`` is an edge
to ``a.b``; ``from a import b`` is an edge to the submodule ``a.b`` when there is one,
else to the module that defines ``b``: a package's ``__init__`` that re-exports ``b``
(``from a.c import b``) passes the edge on to ``a.c``, so importing a name through a
package's front door does not count as importing the whole package (nor make a circle
with the modules the ``__init__`` gathers). An ``__init__`` itself has an edge to each
module it imports from, and a name it defines itself is an edge to it.

The layers, lowest first (docs/development.md, "Layout"): ``sweetrl_gym`` <- ``agents`` <-
``algorithms`` <- ``benchmarks``; inside ``benchmarks``: the shared modules at its top
(``machine``) <- ``harness`` (the comparison) <- ``speed`` (speed benchmarks), and the entry
points ``benchmarks.cli`` and ``benchmarks.demo`` over everything, imported by no module.
``research`` (the top-level folder of analyses and run scripts, not installed; its tests
left out) may import the four packages, and no package imports it. Inside ``sweetrl_gym``,
the LLM runtime ``sweetrl_gym.lm`` sits under the environments: beside itself it imports
only a few shared modules (``LM_SHARED``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sweetrl_gym", "agents", "algorithms", "benchmarks")
# Parsed with the packages, as the layer over them; not installed. Its tests/ is left out.
RESEARCH = "research"
ENTRY_POINTS = ("benchmarks.cli", "benchmarks.demo")

# What each layer may import (itself included). A layer not listed here may not be imported.
ALLOWED = {
    "sweetrl_gym": {"sweetrl_gym"},
    "agents": {"sweetrl_gym", "agents"},
    "algorithms": {"sweetrl_gym", "agents", "algorithms"},
    "benchmarks": {"sweetrl_gym", "agents", "algorithms", "benchmarks"},
    "harness": {"sweetrl_gym", "agents", "algorithms", "benchmarks", "harness"},
    "speed": {"sweetrl_gym", "agents", "algorithms", "benchmarks", "harness", "speed"},
    "entry": {"sweetrl_gym", "agents", "algorithms", "benchmarks", "harness", "speed"},
    "research": {"sweetrl_gym", "agents", "algorithms", "benchmarks", "harness", "speed", RESEARCH},
}
BENCHMARK_ROLES = ("harness", "speed")
# The LLM runtime (generation, sampling, chat clients, servers) and what of sweetrl_gym it
# may import beside itself: none of the environments, tasks, simulators or judges.
LM = "sweetrl_gym.lm"
LM_SHARED = ("sweetrl_gym.messages", "sweetrl_gym.processes", "sweetrl_gym.setting_types")


def layer(module: str) -> str:
    """Return the layer of a module of the four packages or of ``research``."""
    if module in ENTRY_POINTS:
        return "entry"
    parts = module.split(".")
    if parts[0] == "benchmarks" and len(parts) > 1 and parts[1] in BENCHMARK_ROLES:
        return parts[1]
    return parts[0]


def find_modules(root: Path = ROOT) -> dict[str, Path]:
    """Return every module of the four packages and ``research`` by dotted name.

    A package is named by its own name; ``research/tests`` is left out.
    """
    modules = {}
    for package in (*PACKAGES, RESEARCH):
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[:2] == [RESEARCH, "tests"]:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


class ImportGraph:
    """The modules of the four packages and ``research``, and the imports between them."""

    def __init__(self, modules: dict[str, Path]) -> None:
        self.modules = modules
        self.trees = {
            name: ast.parse(path.read_text(), str(path)) for name, path in modules.items()
        }
        self.edges = {name: self._imports(name) for name in modules}
        self.runtime_edges = {name: self._imports(name, runtime=True) for name in modules}

    def _is_package(self, module: str) -> bool:
        return self.modules[module].name == "__init__.py"

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = module.split(".")
        base = base if self._is_package(module) else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, *([node.module] if node.module else [])])

    def _known(self, name: str) -> str | None:
        """The longest prefix of ``name`` that is one of our modules."""
        parts = name.split(".")
        while parts:
            if ".".join(parts) in self.modules:
                return ".".join(parts)
            parts.pop()
        return None

    @functools.cache  # noqa: B019 - one graph per test session
    def defining(self, module: str, name: str) -> str:
        """The module that defines ``name`` imported from ``module`` (re-exports followed)."""
        if f"{module}.{name}" in self.modules:
            return f"{module}.{name}"
        if self._is_package(module):
            for node in self.trees[module].body:  # the re-exports are top-level imports
                if isinstance(node, ast.ImportFrom):
                    source = self._known(self._absolute(module, node))
                    for alias in node.names:
                        if source and (alias.asname or alias.name) == name and source != module:
                            return self.defining(source, alias.name)
        return module

    def _imports(self, module: str, *, runtime: bool = False) -> set[str]:
        """The modules ``module`` imports (``runtime``: leaving out ``TYPE_CHECKING`` blocks)."""
        tree = self.trees[module]
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for statement in node.body
            for inner in ast.walk(statement)
        }
        targets: set[str] = set()
        for node in ast.walk(tree):
            if runtime and id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets.update(self._known(alias.name) or "" for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                source = self._known(self._absolute(module, node))
                if source:
                    targets.update(self.defining(source, alias.name) for alias in node.names)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, (ast.Attribute, ast.Name))
                and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                targets.add(self._known(node.args[0].value) or "")
        return targets - {"", module}

    def cycles(self) -> list[list[str]]:
        """Return the circles: strongly connected components of the runtime imports (Tarjan)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []

        def visit(node: str) -> None:
            index[node] = low[node] = len(index)
            stack.append(node)
            on_stack.add(node)
            for target in sorted(self.runtime_edges[node]):
                if target not in index:
                    visit(target)
                    low[node] = min(low[node], low[target])
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

        for node in sorted(self.edges):
            if node not in index:
                visit(node)
        return found

    def violations(self) -> Iterator[str]:
        """Yield each import that goes against the layers, as ``importer -> imported``."""
        for module, targets in sorted(self.edges.items()):
            for target in sorted(targets):
                if layer(target) not in ALLOWED[layer(module)]:
                    yield f"{module} ({layer(module)}) -> {target} ({layer(target)})"

    def lm_violations(self) -> Iterator[str]:
        """Yield each import by ``sweetrl_gym.lm`` of the rest of ``sweetrl_gym`` (but LM_SHARED)."""
        for module, targets in sorted(self.edges.items()):
            if not _in_lm(module):
                continue
            for target in sorted(targets):
                inside = target.split(".")[0] == "sweetrl_gym"
                if inside and not _in_lm(target) and target not in LM_SHARED:
                    yield f"{module} -> {target}"


def _in_lm(module: str) -> bool:
    return module == LM or module.startswith(f"{LM}.")


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return ImportGraph(find_modules())


def test_every_module_is_in_a_layer(graph):
    assert {layer(m) for m in graph.modules} == set(ALLOWED)


def test_no_module_imports_itself_back(graph):
    assert graph.cycles() == []


def test_imports_run_one_way(graph):
    assert list(graph.violations()) == []


def test_the_lm_runtime_imports_no_environment_module(graph):
    assert LM in graph.modules
    assert list(graph.lm_violations()) == []


def test_no_module_imports_a_private_name_of_another(graph):
    private = []
    for module, tree in graph.trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and graph._known(graph._absolute(module, node)):
                names = [a.name for a in node.names if a.name.startswith("_")]
                private += [f"{module}: {node.module}.{name}" for name in names]
    assert private == []


def _main_process_questions(tree: ast.AST) -> list[str]:
    """The ways ``tree`` asks "is this the main process" other than ``process_state()``'s."""
    from_process_state = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "id", None) == "process_state"
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    others = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in (
            "is_main_process",
            "is_local_main_process",
        ):
            base = node.value
            asks_process_state = (
                isinstance(base, ast.Call) and getattr(base.func, "id", None) == "process_state"
            ) or (isinstance(base, ast.Name) and base.id in from_process_state)
            if node.attr != "is_main_process" or not asks_process_state:
                others.append(ast.unparse(node))
        elif isinstance(node, ast.Name) and node.id == "PartialState":
            others.append(node.id)
        elif isinstance(node, ast.Compare) and any(
            isinstance(side, ast.Attribute) and side.attr in ("process_index", "local_rank")
            for side in (node.left, *node.comparators)
        ):
            others.append(ast.unparse(node))
    return others


def test_one_way_to_ask_for_the_main_process(graph):
    # sweetrl_gym.processes.process_state() is accelerate's PartialState, set up right.
    asked = {
        module: _main_process_questions(tree)
        for module, tree in graph.trees.items()
        if module != "sweetrl_gym.processes"
    }
    assert {module: ways for module, ways in asked.items() if ways} == {}


def _write(root: Path, files: dict[str, str]) -> ImportGraph:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for package in (*PACKAGES, RESEARCH):
        (root / package).mkdir(exist_ok=True)
        (root / package / "__init__.py").touch()
    return ImportGraph(find_modules(root))


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    # The old compare <-> serving circle: one side imports the other inside a function.
    graph = _write(
        tmp_path,
        {
            "benchmarks/harness/__init__.py": "",
            "benchmarks/harness/compare.py": "from benchmarks.harness.serving import generation\n",
            "benchmarks/harness/serving.py": (
                "def model_source():\n    from benchmarks.harness.compare import resolve\n"
            ),
        },
    )
    assert graph.cycles() == [["benchmarks.harness.compare", "benchmarks.harness.serving"]]


def test_a_re_export_passes_the_edge_on_and_a_name_defined_in_init_does_not(tmp_path):
    graph = _write(
        tmp_path,
        {
            "agents/__init__.py": "from agents.rollout import collect\nVERSION = 1\n",
            "agents/rollout.py": "from agents.base import Agent\n",
            "agents/base.py": "from agents import collect\n",  # collect's module: a circle
            "agents/other.py": "from agents import VERSION\n",  # the __init__ itself
        },
    )
    assert graph.edges["agents.base"] == {"agents.rollout"}
    assert graph.edges["agents.other"] == {"agents"}
    assert graph.cycles() == [["agents.base", "agents.rollout"]]


def test_an_annotation_only_import_makes_no_circle(tmp_path):
    graph = _write(
        tmp_path,
        {
            "algorithms/base.py": "from algorithms.callbacks import Callback\n",
            "algorithms/callbacks.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from algorithms.base import Algorithm\n",
        },
    )
    assert graph.edges["algorithms.callbacks"] == {"algorithms.base"}
    assert graph.cycles() == []


def test_an_import_against_the_layers_is_found(tmp_path):
    graph = _write(
        tmp_path,
        {
            "benchmarks/harness/__init__.py": "",
            "benchmarks/speed/__init__.py": "",
            "benchmarks/speed/bench.py": "from research.analyses.quality import score\n",
            "benchmarks/harness/compare.py": (
                "def f():\n    import benchmarks.speed.bench\n    import benchmarks.cli\n"
            ),
            "benchmarks/cli.py": "",
            "sweetrl_gym/env.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from agents import Agent\n",
            # research may import every package (and itself); no package imports research.
            "research/analyses/__init__.py": "",
            "research/analyses/quality.py": "from benchmarks.harness.compare import f\n"
            "import sweetrl_gym.env\n\ndef score(): ...\n",
            "research/tests/test_quality.py": "import benchmarks.cli\n",  # tests: left out
            "agents/rollout.py": "def g():\n    import research.analyses.quality\n",
        },
    )
    assert "research.tests.test_quality" not in graph.modules
    assert list(graph.violations()) == [
        "agents.rollout (agents) -> research.analyses.quality (research)",
        "benchmarks.harness.compare (harness) -> benchmarks.cli (entry)",
        "benchmarks.harness.compare (harness) -> benchmarks.speed.bench (speed)",
        "benchmarks.speed.bench (speed) -> research.analyses.quality (research)",
        "sweetrl_gym.env (sweetrl_gym) -> agents (agents)",
    ]


def test_an_lm_module_that_imports_an_environment_module_is_found(tmp_path):
    graph = _write(
        tmp_path,
        {
            "sweetrl_gym/lm/__init__.py": "from sweetrl_gym.lm.generation import generate\n",
            "sweetrl_gym/lm/generation.py": "from sweetrl_gym.processes import state\n"
            "def generate():\n    from sweetrl_gym.tasks.bundled import TASKS\n",
            "sweetrl_gym/lm/chat.py": "import sweetrl_gym\n",
            "sweetrl_gym/processes.py": "",
            "sweetrl_gym/tasks/__init__.py": "",
            "sweetrl_gym/tasks/bundled.py": "from sweetrl_gym.lm import generate\n",
        },
    )
    assert list(graph.lm_violations()) == [
        "sweetrl_gym.lm.chat -> sweetrl_gym",
        "sweetrl_gym.lm.generation -> sweetrl_gym.tasks.bundled",
    ]


def test_other_ways_to_ask_for_the_main_process_are_found():
    tree = ast.parse(
        "state = process_state()\n"
        "ok = state.is_main_process or process_state().is_main_process\n"
        "a = accelerator.is_main_process\n"
        "b = other.process_index == 0\n"
        "c = PartialState()\n"
    )
    assert _main_process_questions(tree) == [
        "accelerator.is_main_process",
        "other.process_index == 0",
        "PartialState",
    ]


# -- the comparison harness knows methods only through the registry and their hooks ---------


def _method_words() -> set[str]:
    """The names of the installed methods, their classes, and SWEET-RL's own attributes."""
    from importlib import metadata

    from sweetrl_gym.plugins import ALGORITHM_GROUP

    points = metadata.distribution("sweetrl-gym").entry_points.select(group=ALGORITHM_GROUP)
    words = {p.name for p in points} | {p.value.rpartition(":")[2] for p in points}
    return words | {"policy_pairs", "turn_advantages", "turn_pair_signal", "critic_example"}


def _code_words(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every identifier, attribute and string of a module's code (docstrings left out)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, ast.alias):
            yield node.lineno, node.name.rpartition(".")[2]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.lineno, node.value


def _named_methods(tree: ast.AST, words: set[str]) -> list[str]:
    found = []
    for line, text in _code_words(tree):
        if text in words or any(f"'{w}'" in text or f'"{w}"' in text for w in words):
            found.append(f"line {line}: {text!r}")
    return found


def test_the_harness_names_no_method():
    # A method with diagnostics or controls of its own needs no edit of the harness:
    # ``Algorithm.named``, ``label``, ``controls``, ``prepare`` and ``diagnose`` carry it.
    words = _method_words()
    assert {"sweet-rl", "SweetRL", "rft", "policy_pairs"} <= words
    found = {
        path.name: named
        for path in sorted((ROOT / "benchmarks" / "harness").glob("*.py"))
        if (named := _named_methods(ast.parse(path.read_text()), words))
    }
    assert not found, f"harness modules that name a method: {found}"


def test_a_harness_module_that_names_a_method_is_found():
    tree = ast.parse('"""Docs may say sweet-rl."""\nif name == "sweet-rl":\n    x.policy_pairs\n')
    assert _named_methods(tree, _method_words()) == ["line 2: 'sweet-rl'", "line 3: 'policy_pairs'"]
