"""The comparison config: typed sections read from TOML and overrides, as plain dicts recorded."""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from benchmarks.harness.compare import run_comparison
from benchmarks.harness.experiment_config import (
    CONFIG_DIR,
    ComparisonConfig,
    ConfigError,
    config_names,
    load_config,
)
from benchmarks.harness.seeds import seed_config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# What every run folder's config.json has recorded for a config that sets nothing: the
# keys, their order and their values may not change, or old folders stop resuming.
RECORDED_DEFAULTS = {
    "name": "custom",
    "description": "",
    "seed": 0,
    "seeds": [],
    "env": {
        "id": "ColBench-Backend-v0",
        "max_turns": 10,
        "simulator": "default",
        "simulator_base_url": "",
        "simulator_model": "",
        "simulator_prompt_format": "ours",
        "simulator_prompt_file": "",
        "simulator_max_tokens": 0,
        "simulator_on_error": "raise",
        "simulator_timeout_s": 60.0,
        "tasks": "bundled",
        "test_tasks": "",
        "difficulty": [],
        "families": [],
        "turn_notice": False,
        "scoring": "ours",
        "similarity": "perceptual",
        "clip_model": "",
        "answer": "final_message",
    },
    "policy": {
        "model": "default",
        "temperature": 1.0,
        "eval_temperature": 0.0,
        "max_new_tokens": 1024,
        "batch_size": 8,
        "dtype": "auto",
        "device": "auto",
        "system_prompt": "full",
        "system_prompt_file": "",
        "server_command": "",
        "server_base_url": "",
        "server_concurrency": 32,
        "history": "raw",
    },
    "warm_start": {"demonstrator": "", "tasks": 0, "ask_probability": 0.5},
    "data": {
        "train_tasks": 1000,
        "samples_per_task": 3,
        "num_envs": 8,
        "demonstrations": [],
        "trajectories": "",
    },
    "eval": {"test_tasks": 1000, "samples_per_task": 1, "num_envs": 8},
    "training": {},
    "methods": {"run": []},
}


def _file_over(base: dict, path) -> dict:
    """The recorded dict of a config file: the defaults, updated by what it extends, then it."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    parent = data.pop("extends", None)
    if parent is not None:
        base = _file_over(base, CONFIG_DIR / f"{parent}.toml")
    return _merged(base, data)


def _merged(base: dict, data: dict) -> dict:
    merged = dict(base)
    for key, value in data.items():
        is_table = isinstance(value, dict)
        merged[key] = _merged(merged.get(key, {}), value) if is_table else value
    return merged


def test_the_defaults_are_what_run_folders_have_always_recorded():
    assert json.dumps(ComparisonConfig().to_dict()) == json.dumps(RECORDED_DEFAULTS)


@pytest.mark.parametrize("name", config_names())
def test_a_bundled_config_records_its_files_over_the_defaults(name):
    config = load_config(name)
    expected = _file_over(RECORDED_DEFAULTS, CONFIG_DIR / f"{name}.toml")
    assert json.dumps(config.to_dict()) == json.dumps(expected)  # keys, order and values
    assert ComparisonConfig.from_dict(config.to_dict()) == config
    assert ComparisonConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_sections_are_typed_frozen_and_free_where_the_algorithms_check_them():
    config = load_config("paper-mini")  # extends paper
    assert config.policy.model == "default" and config.policy.dtype == "bfloat16"  # paper's
    assert config.env.simulator == "openai" and config.warm_start.demonstrator == ""
    assert config.training["gradient_accumulation_steps"] == 8
    assert "sweet-rl" in config.methods.run and "sweet-rl" in config.methods.settings
    sweet = config.method_settings("sweet-rl")  # [training] updated by [methods.sweet-rl]
    assert sweet == {**config.training, **config.methods.settings["sweet-rl"]}
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.policy.model = "tiny"  # type: ignore[misc]
    changed = config.replace(policy=config.policy.replace(model="tiny"))
    assert changed.policy.model == "tiny" and config.policy.model != "tiny"
    # The warm start's other keys are behaviour-cloning settings over [training].
    quick = load_config("quick")
    assert quick.warm_start.settings and "demonstrator" not in quick.warm_start.settings
    assert quick.warm_start_settings() == {**quick.training, **quick.warm_start.settings}
    # apply_probability is optional: recorded only when set, after ask_probability.
    assert quick.warm_start.apply_probability is None
    assert "apply_probability" not in quick.to_dict()["warm_start"]
    told = load_config("quick", ["warm_start.apply_probability=0.6"]).to_dict()["warm_start"]
    keys = list(told)
    assert told["apply_probability"] == 0.6
    assert keys.index("apply_probability") == keys.index("ask_probability") + 1


def test_an_override_is_read_as_its_settings_type():
    with pytest.raises(ConfigError, match=r"data\.train_tasks must be an integer, got 'many'"):
        load_config("smoke", ["data.train_tasks=many"])
    with pytest.raises(ConfigError, match=r"seed must be an integer, got 1\.5"):
        load_config("smoke", ["seed=1.5"])
    assert load_config("smoke", ["policy.temperature=1"]).policy.temperature == 1  # a float
    expected = r"override 'data.demonstrations=oracle': data\.demonstrations must be a list of str"
    with pytest.raises(ConfigError, match=expected):
        load_config("smoke", ["data.demonstrations=oracle"])
    assert load_config("smoke", ["data.demonstrations=[]"]).data.demonstrations == []
    with pytest.raises(ConfigError, match=r"methods\.run must be a list of strings"):
        load_config("smoke", ["methods.run=rft"])
    with pytest.raises(ConfigError, match=r"seeds must be a list of integers"):
        load_config("smoke", ["seeds=['a']"])
    # A text setting takes the text as it is, whatever TOML would make of it.
    assert load_config("smoke", ["policy.model=7"]).policy.model == "7"
    assert load_config("smoke", ["policy.system_prompt=Be brief."]).policy.system_prompt == (
        "Be brief."
    )
    # Free-form settings (checked by the algorithms' own classes) are read as TOML.
    config = load_config("smoke", ["training.learning_rate=1e-5", "methods.rft.select=best"])
    assert config.training["learning_rate"] == 1e-5
    assert config.methods.settings["rft"]["select"] == "best"
    with pytest.raises(ConfigError, match=r"'methods\.rft' is a section"):
        load_config("smoke", ["methods.rft=3"])


def test_a_file_value_of_another_type_is_named(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('extends = "smoke"\n[data]\ntrain_tasks = "many"\n')
    with pytest.raises(ConfigError, match=r"data\.train_tasks must be an integer, got 'many'"):
        load_config(path)
    path.write_text('extends = "smoke"\n[methods.rft]\n')  # an empty table is fine
    assert load_config(path).methods.settings["rft"] == {"select": "best_of_k"}


def test_a_misspelt_key_gets_did_you_mean(tmp_path):
    with pytest.raises(
        ConfigError, match=r"unknown setting 'policy\.modle'; did you mean 'policy\.model'"
    ):
        load_config("smoke", ["policy.modle=tiny"])
    with pytest.raises(ConfigError, match=r"unknown setting 'sede'; did you mean 'seed'"):
        load_config("smoke", ["sede=3"])
    path = tmp_path / "typo.toml"
    path.write_text('extends = "smoke"\ndescripton = "x"\n[eval]\ntest_taks = 3\n')
    with pytest.raises(ConfigError, match=rf"{path}: unknown setting 'descripton'"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"did you mean 'env\.max_turns'"):
        ComparisonConfig.from_dict({"env": {"max_turn": 3}})
    with pytest.raises(ConfigError, match=r"did you mean 'methods'"):
        ComparisonConfig.from_dict({"method": {"run": []}})
    with pytest.raises(ConfigError, match=r"did you mean 'seeds'"):
        load_config("smoke").replace(seeeds=[1])


def test_overrides_apply_to_a_loaded_config_as_to_a_file():
    config = load_config("smoke").with_overrides(["methods.sweet-rl.critic_epochs=3"])
    assert config.method_settings("sweet-rl")["critic_epochs"] == 3
    with pytest.raises(ConfigError, match="did you mean"):
        config.with_overrides(["data.train_taks=3"])


def test_the_harness_reads_a_dict_as_a_config(tmp_path):
    quick = load_config("quick")
    with pytest.raises(ValueError, match=r"the config lists seeds \[0, 1, 2\]"):
        run_comparison(quick.to_dict(), tmp_path / "never")
    with pytest.raises(ConfigError, match=r"did you mean 'env\.id'"):
        run_comparison({"env": {"idd": "x"}}, tmp_path / "never")
    assert not (tmp_path / "never").exists()
    one = seed_config(quick, 2)
    assert (one.seed, one.seeds) == (2, []) and one.replace(
        seed=quick.seed, seeds=[0, 1, 2]
    ) == quick


def test_env_scoring_is_checked_before_any_work():
    assert load_config("smoke").env.scoring == "ours"
    assert load_config("paper").env.scoring == load_config("paper-1gpu").env.scoring == "official"
    assert load_config("smoke", ["env.scoring='official'"]).env.scoring == "official"
    with pytest.raises(ConfigError, match=r"env\.scoring must be one of .*did you mean 'official'"):
        load_config("smoke", ["env.scoring='oficial'"])
    with pytest.raises(ConfigError, match=r"env\.scoring chooses how ColBench-Backend-v0"):
        load_config("frontend-smoke", ["env.scoring='official'"])
