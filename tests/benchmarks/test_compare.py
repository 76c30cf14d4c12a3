import json

import pytest

from benchmarks.cli import main
from benchmarks.compare import env_kwargs
from benchmarks.experiment_config import ConfigError, load_config


@pytest.mark.slow
def test_compare_smoke_end_to_end_and_resume(tmp_path, capsys):
    out = tmp_path / "smoke"
    assert main(["compare", "--config", "smoke", "--out", str(out), "--no-progress"]) == 0
    results = json.loads((out / "results.json").read_text())
    methods = results["methods"]
    assert list(methods) == ["zero-shot", "rft", "mt-dpo", "archer", "sweet-rl"]
    for name in ["rft", "mt-dpo", "archer", "sweet-rl"]:
        assert methods[name]["fit"]["status"] == "trained", name
        assert (out / "methods" / name / "model" / "algorithm.json").exists()
        assert list((out / "methods" / name / "run" / "tensorboard").rglob("events.out.tfevents*"))
    for name, record in methods.items():
        assert record["eval"]["num_tasks"] == 4, name
        assert (
            0.0 <= record["eval"]["success_rate_ci_low"] <= record["eval"]["success_rate_ci_high"]
        )
    assert results["methods"]["sweet-rl"]["fit"]["metrics"]["critic/train_pair_accuracy"] >= 0.5
    assert len(results["task_sets"]["test"]["sha256"]) == 64
    assert results["config"]["policy"]["model"] == "tiny"
    assert {"torch", "transformers", "sweetrl-gym"} <= set(results["versions"])
    table = (out / "results.md").read_text()
    assert "| SWEET-RL |" in table and "| Zero-shot |" in table
    for plot in ["success_rate.png", "tests_passed.png", "avg_turns.png", "training_curves.png"]:
        assert (out / plot).stat().st_size > 1000
    assert "results.md" in capsys.readouterr().out

    # A second run resumes: nothing is trained or evaluated again.
    stamps = {
        p: p.stat().st_mtime_ns
        for p in out.rglob("*")
        if p.name in ("fit.json", "algorithm.json") or p.suffix == ".jsonl"
    }
    assert main(["compare", "--config", "smoke", "--out", str(out), "--no-progress"]) == 0
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert json.loads((out / "results.json").read_text())["methods"] == methods

    # Another config in the same folder is refused, with one clear line.
    capsys.readouterr()
    code = main(["compare", "--config", "smoke", "--set", "data.train_tasks=3", "--out", str(out)])
    assert code != 0 and "another config" in capsys.readouterr().err


def test_bundled_configs_load_and_bad_overrides_are_clear():
    for name in ["smoke", "quick", "paper"]:
        config = load_config(name)
        assert config["name"] == name
        assert config["methods"]["run"][0] == "zero-shot"
    assert load_config("smoke", ["data.train_tasks=9"])["data"]["train_tasks"] == 9
    with pytest.raises(ConfigError, match="did you mean"):
        load_config("smoke", ["data.train_taks=9"])
    with pytest.raises(ConfigError, match=r"methods\.run"):
        load_config("smoke", ["methods.run=['zero-shot', 'ppo']"])
    with pytest.raises(FileNotFoundError, match="bundled"):
        load_config("nope")


def test_env_families_and_difficulty_select_the_tasks():
    config = load_config(
        "smoke", ["env.families=['pass_fail', 'taxi_fare']", "env.difficulty=[1, 2]"]
    )
    for split in ("train", "test"):
        tasks = env_kwargs(config, split)["tasks"]
        assert tasks and {t.family for t in tasks} == {"pass_fail", "taxi_fare"}
        assert all(1 <= t.difficulty <= 2 and t.split == split for t in tasks)
    with pytest.raises(ConfigError, match=r"env\.families"):
        load_config("smoke", ["env.families=pass_fail"])
    with pytest.raises(ValueError, match="no task of family"):
        env_kwargs(load_config("smoke", ["env.families=['pass_fial']"]), "train")
