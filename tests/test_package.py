import subprocess
import sys

import sweetrl_gym


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_import_does_not_import_torch():
    proc = _run("import sys, sweetrl_gym; print('torch' in sys.modules)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


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
