import json
import os
import subprocess
import sys

import sweetrl_gym
import sweetrl_gym.lm


def _run(
    code: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_import_does_not_import_torch():
    proc = _run("import sys, sweetrl_gym, sweetrl_gym.lm; print('torch' in sys.modules)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_importing_our_packages_changes_no_process_setting():
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    proc = _run(
        "import json, os; before = dict(os.environ)\n"
        "import sweetrl_gym, sweetrl_gym.lm, agents, algorithms, benchmarks\n"
        "after = dict(os.environ)\n"
        "print(os.environ.get('OMP_WAIT_POLICY'))\n"
        "print(json.dumps(sorted(k for k in {*before, *after} if before.get(k) != after.get(k))))",
        env,
        timeout=600,  # torch and transformers load: slow on a busy machine
    )
    assert proc.returncode == 0, proc.stderr
    policy, changed = proc.stdout.splitlines()
    assert policy == "None"
    assert json.loads(changed) == []  # nor any other variable


def test_the_lm_package_exports_its_names_and_loads_sampling_on_first_use():
    proc = _run(
        "import sys, sweetrl_gym.lm as lm; quiet = 'torch' not in sys.modules; "
        "lm.sampling_processors; print(quiet, 'torch' in sys.modules)",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]
    for name in sweetrl_gym.lm.__all__:
        assert hasattr(sweetrl_gym.lm, name), name


def test_make_with_module_prefix_without_import():
    proc = _run(
        "import gymnasium as gym\n"
        "env = gym.make('sweetrl_gym:ColBench-Backend-v0', split='test')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(type(obs).__name__, info['task_id'].startswith('backend-test-'))"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "str True"


def test_public_names_exist():
    for name in sweetrl_gym.__all__:
        assert hasattr(sweetrl_gym, name), name


def test_every_package_ships_its_type_marker():
    from importlib import resources

    for package in ("sweetrl_gym", "agents", "algorithms", "benchmarks"):
        assert resources.files(package).joinpath("py.typed").is_file(), package
