"""A plain ``pip install`` of the built wheel works, not only ``pip install -e``.

The wheel is built from a copy of the source tree, installed with ``--no-deps`` into a
fresh virtual environment outside it, and used through the ``sweetrl`` command from a
folder outside it too. No network: the fresh environment borrows the dependencies of the
environment running the tests (a ``.pth`` line naming its site-packages), but not that
environment's editable install of this project.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.harness.report import label_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = ("sweetrl_gym", "agents", "algorithms", "benchmarks")
# The research record (analyses, run artefacts, the run history): in the repository only.
NOT_INSTALLED = ("research",)


@dataclass(frozen=True)
class Installed:
    """The wheel and the fresh environment it is installed in."""

    wheel: Path
    source: Path  # the copy of the source tree it was built from
    venv: Path
    site_packages: Path
    env: dict[str, str]  # the environment of every command run in the fresh venv
    workdir: Path  # an empty folder outside the source tree, the commands' cwd

    def run(self, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` (a program of the fresh venv's ``bin``, then its arguments)."""
        program = str(self.venv / "bin" / argv[0])
        return subprocess.run(
            [program, *argv[1:]],
            cwd=self.workdir,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _copy_source(dest: Path) -> None:
    # Build from a copy: setuptools writes build/ and *.egg-info next to the sources, and a
    # stale egg-info of the editable install must not feed the wheel its file list.
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    dest.mkdir()
    # The files a setuptools build reads at the top (license files: its default globs).
    files = (
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "MANIFEST.in",
        PYPROJECT["project"]["readme"],
    )
    licenses = ("LICEN[CS]E*", "COPYING*", "NOTICE*", "AUTHORS*")
    for path in ROOT.iterdir():
        if path.is_file() and (path.name in files or any(path.match(g) for g in licenses)):
            shutil.copy2(path, dest / path.name)
    patterns = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    for path in ROOT.iterdir():
        if path.is_dir() and any(fnmatch.fnmatch(path.name, p) for p in patterns):
            shutil.copytree(path, dest / path.name, ignore=ignore)


def _site_packages(venv: Path) -> Path:
    found = list(venv.glob("lib/python*/site-packages"))
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Iterator[Installed]:
    """Build the wheel, and install it into a fresh venv outside the source tree."""
    base = tmp_path_factory.mktemp("wheel")
    assert not base.resolve().is_relative_to(ROOT), "the venv must live outside the sources"
    source, dist, venv = base / "source", base / "dist", base / "venv"
    _copy_source(source)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"]
    build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(dist)]
    subprocess.run([*build, str(source)], check=True, timeout=300)
    (wheel,) = dist.glob("*.whl")
    # No pip in the fresh venv (quicker): this pip installs into it through --python.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [*pip, "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)]
    subprocess.run(install, check=True, timeout=300)
    site_packages = _site_packages(venv)
    # The dependencies, from the environment running the tests. A path line in a .pth is
    # only added to sys.path: that folder's own .pth files (the editable install's import
    # hook among them) are not run, and it comes after the fresh site-packages.
    borrowed = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        borrowed.append(site.getusersitepackages())
    (site_packages / "_borrowed_dependencies.pth").write_text("\n".join(borrowed) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONNOUSERSITE="1", HF_HUB_OFFLINE="1", VIRTUAL_ENV=str(venv))
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    workdir = base / "work"
    workdir.mkdir()
    yield Installed(wheel, source, venv, site_packages, env, workdir)
    shutil.rmtree(base, ignore_errors=True)  # ~40 MB; pytest would keep it for 3 runs


def test_the_wheel_holds_every_file_its_packages_read(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    for package in PACKAGES:
        for path in (installed.source / package).rglob("*"):
            relative = path.relative_to(installed.source).as_posix()
            if path.is_file():
                assert relative in names, f"{relative} is not in the wheel (package-data?)"


def test_the_research_record_is_not_in_the_wheel(installed):
    patterns = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    for folder in NOT_INSTALLED:
        assert (ROOT / folder).is_dir(), folder
        assert not any(fnmatch.fnmatch(folder, p) for p in patterns), folder
        names = zipfile.ZipFile(installed.wheel).namelist()
        assert not [n for n in names if n.split("/")[0] == folder], folder


def test_the_installed_packages_are_the_wheel_s_not_the_source_tree(installed):
    code = (
        "import json, agents, algorithms, benchmarks, sweetrl_gym\n"
        "from benchmarks.harness.experiment_config import CONFIG_DIR\n"
        "from sweetrl_gym.tasks.bundled import BUNDLED_BACKEND_PATH\n"
        "paths = [m.__file__ for m in (agents, algorithms, benchmarks, sweetrl_gym)]\n"
        "print(json.dumps([*paths, str(CONFIG_DIR), str(BUNDLED_BACKEND_PATH)]))"
    )
    done = installed.run("python", "-c", code)
    assert done.returncode == 0, done.stderr
    for path in map(Path, json.loads(done.stdout)):
        assert path.is_relative_to(installed.site_packages), path
        assert path.exists(), path


def test_every_script_of_the_wheel_runs(installed):
    for script in PYPROJECT["project"]["scripts"]:
        done = installed.run(script, "--help")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"usage: {script}"), done.stdout


@pytest.mark.slow
def test_the_installed_sweetrl_lists_the_configs_and_runs_the_smoke_comparison(installed):
    done = installed.run("sweetrl", "configs")
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    bundled = sorted(p.stem for p in (ROOT / "benchmarks" / "configs").glob("*.toml"))
    assert listed == bundled and {"smoke", "quick"} <= set(listed), done.stdout
    assert "(unreadable" not in done.stdout

    done = installed.run("sweetrl", "configs", "quick")  # the README's default config
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "quick"
    done = installed.run("sweetrl", "configs", "smoke")
    assert done.returncode == 0, done.stderr
    methods = json.loads(done.stdout)["methods"]["run"]

    out = installed.workdir / "smoke"
    argv = ("sweetrl", "compare", "--config", "smoke", "--out", str(out), "--no-progress")
    done = installed.run(*argv, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    # Every method of the config, plus the warm start they all start from.
    assert [m for m in results["methods"] if m != "warm-start"] == methods
    assert results["base"] == "warm-start" and "warm-start" in results["methods"]
    assert all(record["eval"]["num_tasks"] == 4 for record in results["methods"].values())
    table = (out / "results.md").read_text()
    for name in results["methods"]:
        assert f"| {label_of(results, name)} |" in table, name
