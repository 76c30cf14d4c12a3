"""A user's own algorithm in `sweetrl compare` and `sweetrl train`: by import path, by entry point.

The algorithm is the guide's complete example (examples/imitate_best.py), copied into a
package outside the project's tree, as a user would keep it.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.cli import main
from benchmarks.harness.compare import check_training_settings, method_names, run_comparison
from benchmarks.harness.experiment_config import ConfigError, load_config

EXAMPLE = Path(__file__).parents[2] / "examples" / "imitate_best.py"
# Two trained methods, few tasks: the smoke config at its smallest.
SMALL = [
    "--set", "warm_start.tasks=2", "--set", "data.train_tasks=2", "--set", "eval.test_tasks=2",
    "--set", "data.demonstrations=[]",
]  # fmt: skip


@pytest.fixture(scope="module")
def user_site(tmp_path_factory):
    """A folder on sys.path with the user's package and an installed distribution's metadata."""
    site = tmp_path_factory.mktemp("site")
    package = site / "mymethods"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(EXAMPLE, package / "imitate.py")
    (package / "broken.py").write_text("import a_module_that_is_not_there\n")
    (package / "notalgo.py").write_text("class Nothing:\n    pass\n")
    dist = site / "mymethods-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mymethods\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[sweetrl_gym.algorithms]\nimitate-best = mymethods.imitate:ImitateBest\n"
    )
    return site


@pytest.fixture
def on_path(user_site, monkeypatch):
    monkeypatch.syspath_prepend(str(user_site))
    return user_site


def _compare(out, methods, *extra):  # in this process
    run = json.dumps(methods)
    command = ["compare", "--config", "smoke", "--out", str(out), "--no-progress"]
    return main([*command, *SMALL, "--set", f"methods.run={run}", *extra])


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["mymethods.imitate:ImitateBest", "imitate-best"])
def test_compare_runs_a_users_algorithm_beside_sweet_rl(user_site, tmp_path, spec):
    # A fresh process, the package found on PYTHONPATH only (by import path, or through its
    # distribution's entry point): nothing of it is imported or registered beforehand.
    out = tmp_path / "run"
    command = [sys.executable, "-m", "benchmarks.cli", "compare", "--config", "smoke"]
    command += ["--out", str(out), "--no-progress", *SMALL]
    command += ["--set", f"methods.run={json.dumps([spec, 'sweet-rl'])}"]
    command += ["--set", "methods.imitate-best.min_reward=0.0"]
    paths = [str(user_site), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    methods = results["methods"]
    assert list(methods) == ["warm-start", "imitate-best", "sweet-rl"]
    mine = methods["imitate-best"]
    assert mine["fit"]["status"] == "trained"
    assert mine["fit"]["metrics"]["train/episodes"] >= 1
    versus = mine["versus_base"]  # paired against the warm start on the same tasks
    assert versus["num_tasks"] == 2
    assert versus["success_rate_diff_ci_low"] <= versus["success_rate_diff"]
    assert versus["success_rate_diff"] <= versus["success_rate_diff_ci_high"]
    saved = json.loads((out / "methods" / "imitate-best" / "model" / "algorithm.json").read_text())
    assert saved["algorithm"] == "imitate-best"
    assert saved["class"] == "mymethods.imitate:ImitateBest"
    table = (out / "results.md").read_text()
    assert "| imitate-best |" in table and "| SWEET-RL |" in table


@pytest.mark.slow
def test_train_takes_an_import_path_and_load_finds_the_class(on_path, tmp_path):
    from agents import ScriptedCollaborator, collect
    from algorithms import Algorithm

    buffer = collect("ColBench-Backend-v0", ScriptedCollaborator(1.0), num_episodes=2, seed=0)
    buffer.save(tmp_path / "episodes.jsonl")
    out = tmp_path / "trained"
    command = ["train", "--algo", "mymethods.imitate:ImitateBest", "--config", "smoke"]
    command += ["--set", "methods.imitate-best.min_reward=0.5"]  # its section, by its name
    assert main([*command, "--buffer", str(tmp_path / "episodes.jsonl"), "--out", str(out)]) == 0
    loaded = Algorithm.load(out / "model")
    assert type(loaded).__name__ == "ImitateBest" and loaded.metrics["train/episodes"] == 2
    assert loaded.config.min_reward == 0.5


def _settings_error(methods, *overrides):
    config = load_config("smoke", [f"methods.run={json.dumps(methods)}", *overrides])
    with pytest.raises(ValueError) as caught:
        check_training_settings(config)
    return str(caught.value)


def test_a_users_settings_are_checked_by_its_own_config_class(on_path):
    message = _settings_error(
        ["mymethods.imitate:ImitateBest"], "methods.imitate-best.min_reward=2.0"
    )
    assert "[methods.imitate-best]" in message and "min_reward must be in [0, 1]" in message
    message = _settings_error(["mymethods.imitate:ImitateBest"], "methods.imitate-best.min_rewrd=1")
    assert "min_rewrd" in message and "min_reward" in message  # did you mean


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("mymethods.missing:Algo", "importing module 'mymethods.missing' failed"),
        ("mymethods.broken:Algo", "No module named 'a_module_that_is_not_there'"),
        ("mymethods.imitate:ImitateBset", "did you mean 'ImitateBest'?"),
        ("mymethods.notalgo:Nothing", "not a subclass of algorithms.Algorithm"),
    ],
)
def test_a_method_that_does_not_load_is_refused_before_any_work(on_path, tmp_path, spec, expected):
    assert expected in _settings_error([spec])
    out = tmp_path / "never"
    assert _compare(out, [spec]) == 2  # a usage error, shown as one line
    assert not out.exists()  # nothing was written


def test_two_methods_with_one_report_name_are_refused(on_path):
    message = _settings_error(["mymethods.imitate:ImitateBest", "imitate-best"])
    assert "both report as 'imitate-best'" in message


def test_an_unknown_name_gets_did_you_mean():
    with pytest.raises(ConfigError, match="did you mean 'sweet-rl'"):
        load_config("smoke", ["methods.run=['sweet_rl']"])
    with pytest.raises(ValueError, match=r"did you mean \[methods.archer\]"):
        check_training_settings(load_config("smoke", ["methods.archr.critic_epochs=1"]))


def test_a_class_may_not_take_a_built_in_name():
    from algorithms import Algorithm, TrainingConfig

    with pytest.raises(TypeError, match=r"'sweet-rl' is taken by algorithms\.sweet_rl:SweetRL"):

        class Impostor(Algorithm):
            name = "sweet-rl"
            config_class = TrainingConfig

            def train(self, buffer):
                return {}


def test_a_task_file_too_small_for_the_warm_start_is_refused_before_the_folder(tmp_path):
    from sweetrl_gym.tasks import load_backend_tasks

    keys = ("problem_description", "ground_truth", "test_cases")
    records = [
        {key: task.to_dict()[key] for key in keys}
        for task in load_backend_tasks("bundled", split="train")[:2]
    ]
    tasks = tmp_path / "my_tasks.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in records))
    config = load_config("smoke", [f"env.tasks={json.dumps(str(tasks))}", "warm_start.tasks=2"])
    out = tmp_path / "never"
    with pytest.raises(ValueError, match=f"give more tasks than {tasks} holds"):
        run_comparison(config, out, progress=False)
    assert not out.exists()  # nothing written


def test_an_empty_run_list_is_the_base_and_every_installed_method_but_the_controls(on_path):
    names = method_names(load_config("smoke", ["methods.run=[]"]))
    assert names[0] == "zero-shot"
    assert {"rft", "mt-dpo", "archer", "sweet-rl", "imitate-best"} == set(names[1:])
