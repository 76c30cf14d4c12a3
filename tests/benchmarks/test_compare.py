import gc
import json
import re
import shutil

import pytest
import torch
from PIL import Image

from agents.loading import is_local_path
from benchmarks.cli import main
from benchmarks.harness.compare import check_training_settings, env_kwargs
from benchmarks.harness.experiment_config import CONFIG_DIR, ConfigError, config_names, load_config
from benchmarks.harness.policies import build_policy
from sweetrl_gym import TrajectoryBuffer


@pytest.mark.slow
def test_compare_smoke_end_to_end_over_seeds_and_resume(tmp_path, capsys):
    whole = tmp_path / "smoke"
    command = ["compare", "--config", "smoke", "--seeds", "0,1", "--out", str(whole)]
    assert main([*command, "--no-progress"]) == 0
    # Frozen during the run (its long-lived objects skip collections), not afterwards.
    assert gc.get_freeze_count() == 0
    out = whole / "seed-0"  # each seed's run is a comparison of its own
    results = json.loads((out / "results.json").read_text())
    methods = results["methods"]
    assert list(methods) == [
        "zero-shot",
        "warm-start",
        "rft",
        "mt-dpo",
        "archer",
        "sweet-rl",
        "sweet-rl-random",
        "sweet-rl-env",
        "sweet-rl-nll",
    ]
    # The warm start clones the collaborator, and is the base of every method.
    assert results["base"] == "warm-start" and methods["warm-start"]["fit"]["status"] == "trained"
    assert results["warm_start"]["episodes"] == 4
    assert (out / "eval" / "warm-start.jsonl").exists()
    demos = TrajectoryBuffer.load(out / "data" / "warm-start-demonstrations.jsonl")
    collected = TrajectoryBuffer.load(out / "data" / "train.jsonl")
    assert not {t.task_id for t in demos} & {t.task_id for t in collected}
    for name in ["rft", "mt-dpo", "archer", "sweet-rl"]:
        versus = methods[name]["versus_base"]
        assert versus["num_tasks"] == 4, name
        low, high = versus["success_rate_diff_ci_low"], versus["success_rate_diff_ci_high"]
        assert low <= versus["success_rate_diff"] <= high, name
    assert methods["warm-start"]["versus_base"] is None
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
    # Every turn pair of SWEET-RL is judged against the simulated human (or is an answer's).
    sweet = results["methods"]["sweet-rl"]["fit"]
    signal = sweet["diagnostics"]["record"]["turn_pair_signal"]
    assert signal["unknown_task"] == 0
    kinds = signal["question_pairs"] + signal["answer_pairs"] + signal["mixed_pairs"]
    assert kinds == sweet["metrics"]["train/num_pairs"]
    assert signal["question_pairs"] == sum(
        signal[k] for k in ("chosen_obtains_more", "chosen_obtains_fewer", "same")
    )
    assert signal["answer_pairs"] == sum(
        signal[k] for k in ("chosen_passes_more", "chosen_passes_fewer", "same_tests")
    )
    assert len(results["task_sets"]["test"]["sha256"]) == 64
    assert results["config"]["policy"]["model"] == "tiny"
    assert {"torch", "transformers", "sweetrl-gym"} <= set(results["versions"])
    table = (out / "results.md").read_text()
    assert "| SWEET-RL |" in table and "| Zero-shot |" in table
    assert "| Warm start (BC) |" in table and "95% paired CI" in table
    assert "SWEET-RL's turn pairs, checked against the environment" in table
    assert "| Avg. turns | Answered |" in table
    plots = ["success_rate.png", "tests_passed.png", "avg_turns.png", "answer_rate.png"]
    for plot in [*plots, "training_curves.png"]:
        assert (out / plot).stat().st_size > 1000
    # How long each collection and evaluation took, in the folder and the report.
    stages = json.loads((out / "stage_times.json").read_text())
    demonstrators = {f"collect/{name}" for name in results["config"]["data"]["demonstrations"]}
    collections = {"collect/warm-start", "collect/train"} | demonstrators
    assert demonstrators and set(stages) == collections | {f"eval/{m}" for m in methods}
    assert all(seconds >= 0 for seconds in stages.values()) and sum(stages.values()) > 0
    assert results["stage_seconds"] == stages
    assert "Time in collecting the warm start's demonstrations" in table
    assert ", training episodes " in table and ", oracle demonstrations " in table
    assert "; evaluating `warm-start` " in table and ", `sweet-rl-random` " in table
    assert results["resumed"] is False and "Total time " in table
    printed = capsys.readouterr().out
    assert "pooled.md" in printed and "- SWEET-RL vs Warm start (BC):" in printed

    # The seeds pooled: every method against the base and against SWEET-RL, per (seed, task).
    pooled = json.loads((whole / "pooled.json").read_text())
    assert pooled["seeds"] == [0, 1] and "Pooled over 2 seeds" in printed
    other = json.loads((whole / "seed-1" / "results.json").read_text())
    assert other["config"]["seed"] == 1 and other["task_sets"] == results["task_sets"]
    for name in list(methods)[2:]:
        versus = pooled["methods"][name]["pooled"]
        assert versus["num_runs"] == 2 and versus["num_tasks"] == 8, name
        assert versus["success_rate_diff_ci_low"] <= versus["success_rate_diff_ci_high"]
        assert pooled["methods"][name]["control"] == name.startswith("sweet-rl-")
        needed = versus["success_rate_seeds_needed"]
        assert needed is None or needed >= 2, name
    assert "sweet-rl" in pooled["methods"]["sweet-rl-random"]["versus_controlled"]
    assert "sweet-rl" in pooled["methods"]["rft"]["versus_controlled"]
    assert "versus_controlled" not in pooled["methods"]["sweet-rl"]
    report = (whole / "pooled.md").read_text()
    assert "Control: SWEET-RL, pairs ranked at random vs SWEET-RL:" in report
    # Every verdict that is not measurable says what a measurement would take.
    for line in report.splitlines():
        if "(not a measurable difference)" in line:
            assert "would be needed to show it" in line or "would show it (80% power)" in line
    # The reports alone pool as the run folders do: each episode's outcome is kept in them.
    kept = tmp_path / "kept"
    kept.mkdir()
    for name, folder in (("a.json", out), ("b.json", whole / "seed-1")):
        (kept / name).write_text((folder / "results.json").read_text())
    assert main(["pool", str(kept / "a.json"), str(kept / "b.json"), "--out", str(kept)]) == 0
    assert json.loads((kept / "pooled.json").read_text())["methods"] == pooled["methods"]
    # A report without them (written by older code) says so, rather than pooling nothing.
    stale = json.loads((kept / "b.json").read_text())
    del stale["methods"]["rft"]["outcomes"]
    (kept / "b.json").write_text(json.dumps(stale))
    capsys.readouterr()
    assert main(["pool", str(kept / "a.json"), str(kept / "b.json")]) != 0
    assert "keeps no outcomes of 'rft'" in capsys.readouterr().err

    # A second run resumes: nothing is trained or evaluated again.
    stamps = {
        p: p.stat().st_mtime_ns
        for p in whole.rglob("*")
        if p.name in ("fit.json", "algorithm.json") or p.suffix == ".jsonl"
    }
    assert main([*command, "--no-progress"]) == 0
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert json.loads((out / "results.json").read_text())["methods"] == methods
    assert json.loads((out / "stage_times.json").read_text()) == stages  # left as it was
    # Its own few seconds are not called the run's total time.
    assert json.loads((out / "results.json").read_text())["resumed"] is True
    relaunched = (out / "results.md").read_text()
    assert "Total time" not in relaunched and "it resumed a run that earlier launches" in relaunched
    # One seed of it alone is the same run: resumed, not redone.
    single = ["compare", "--config", "smoke", "--seed", "1", "--out", str(whole / "seed-1")]
    assert main([*single, "--no-progress"]) == 0
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    # A folder whose stages were finished without stage times (copied, or older code): a
    # launch that only reads them back records none, rather than its own few seconds.
    (whole / "seed-1" / "stage_times.json").unlink()
    assert main([*single, "--no-progress"]) == 0
    assert not (whole / "seed-1" / "stage_times.json").exists()
    assert json.loads((whole / "seed-1" / "results.json").read_text())["stage_seconds"] == {}
    assert "Time in" not in (whole / "seed-1" / "results.md").read_text()

    # Another config in the same folder is refused, with one clear line.
    capsys.readouterr()
    code = main([*command, "--set", "data.train_tasks=3"])
    assert code != 0 and "another config" in capsys.readouterr().err

    # Seeds pool when one ran with another run-only setting (a seed killed for memory
    # resumes with gradient checkpointing), not when a setting changes what is computed.
    stored_path = whole / "seed-1" / "results.json"
    original = stored_path.read_text()
    stored = json.loads(original)
    training = stored["config"]["training"]
    training["gradient_checkpointing"] = not training.get("gradient_checkpointing", False)
    stored_path.write_text(json.dumps(stored))
    pool = ["pool", str(out), str(whole / "seed-1")]
    assert main(pool) == 0
    training["learning_rate"] *= 2
    stored_path.write_text(json.dumps(stored))
    capsys.readouterr()
    assert main(pool) != 0
    assert "differs in training.learning_rate)" in capsys.readouterr().err
    # A seed run with fewer methods pools on the methods every seed evaluated.
    stored = json.loads(original)
    stored["config"]["methods"]["run"].remove("rft")
    del stored["methods"]["rft"]
    stored_path.write_text(json.dumps(stored))
    assert main([*pool, "--out", str(tmp_path / "fewer")]) == 0
    fewer = json.loads((tmp_path / "fewer" / "pooled.json").read_text())
    assert fewer["left_out"] == ["rft"] and "rft" not in fewer["methods"]
    assert set(fewer["methods"]) == set(methods) - {"rft"}
    assert (
        "Not evaluated in every run, so not pooled: RFT."
        in (tmp_path / "fewer" / "pooled.md").read_text()
    )
    stored_path.write_text(original)

    # The controls: SWEET-RL's policy step on its own turn pairs, re-ranked.
    pairs = json.loads((out / "methods" / "sweet-rl" / "turn_pairs.json").read_text())
    assert len(pairs) == sweet["metrics"]["train/num_pairs"]
    assert {"messages", "chosen", "rejected", "task_id"} <= set(pairs[0])
    coin = methods["sweet-rl-random"]["fit"]
    assert coin["controls"] == "sweet-rl" and coin["label"].startswith("Control: SWEET-RL")
    counts = coin["diagnostics"]["record"]["pairs"]
    assert counts["source"] == counts["trained"] == len(pairs)
    assert 0 <= counts["swapped"] <= len(pairs)
    nll = methods["sweet-rl-nll"]["fit"]  # the critic's pairs as they are, NLL alone
    counts = nll["diagnostics"]["record"]["pairs"]
    assert counts == {"source": len(pairs), "trained": len(pairs), "swapped": 0}
    from algorithms import SweetRLConfig

    coef = results["config"]["methods"]["sweet-rl"].get("nll_coef", SweetRLConfig().nll_coef)
    assert nll["metrics"]["train/loss"] == pytest.approx(coef * nll["metrics"]["train/chosen_nll"])
    env = methods["sweet-rl-env"]["fit"]
    kept = signal["chosen_obtains_more"] + signal["chosen_obtains_fewer"]
    kept += signal["chosen_passes_more"] + signal["chosen_passes_fewer"]
    if kept:  # the pairs the environment tells apart, the worse ones turned round
        counts = env["diagnostics"]["record"]["pairs"]
        assert counts["trained"] == kept and counts["swapped"] <= kept
    else:
        assert env["status"] == "skipped" and "no turn pair" in env["reason"]

    # A control keeps the pairs it trains on and its run (checkpoints, TensorBoard): one
    # stopped before its fit.json goes on from its run, on the same pairs, not from scratch.
    for name in ("sweet-rl-random", "sweet-rl-nll"):
        control = out / "methods" / name
        kept = json.loads((control / "turn_pairs.json").read_text())
        assert len(kept) == methods[name]["fit"]["diagnostics"]["record"]["pairs"]["trained"]
        assert list((control / "run" / "tensorboard").rglob("events.out.tfevents*")), name
    from safetensors.torch import load_file

    coin_dir = out / "methods" / "sweet-rl-random"
    weights_file = coin_dir / "model" / "policy" / "model.safetensors"
    trained = load_file(weights_file)
    stages = {p: p.stat().st_mtime_ns for p in (coin_dir / "run" / "stages").rglob("*")}
    (coin_dir / "fit.json").unlink()
    shutil.rmtree(coin_dir / "model")
    assert main([*command, "--no-progress"]) == 0
    again = json.loads((coin_dir / "fit.json").read_text())
    assert again["metrics"] == coin["metrics"] and again["diagnostics"] == coin["diagnostics"]
    assert coin["history"] and again["history"] == coin["history"]  # kept in its run
    # Restored from its run, not trained again: the stage's weights were only read.
    assert stages and {p: p.stat().st_mtime_ns for p in stages} == stages
    restored = load_file(weights_file)
    assert all(torch.equal(restored[key], value) for key, value in trained.items())


@pytest.mark.slow
def test_a_finished_comparison_takes_more_methods_without_redoing_any(tmp_path):
    out = tmp_path / "more"
    command = ["compare", "--config", "smoke", "--out", str(out), "--no-progress"]
    assert main([*command, "--methods", "rft"]) == 0
    fitted = (out / "methods" / "rft" / "fit.json").stat().st_mtime_ns
    assert main([*command, "--methods", "rft,mt-dpo"]) == 0
    assert (out / "methods" / "rft" / "fit.json").stat().st_mtime_ns == fitted
    results = json.loads((out / "results.json").read_text())
    assert list(results["methods"]) == ["warm-start", "rft", "mt-dpo"]
    assert results["methods"]["mt-dpo"]["eval"]["num_tasks"] == 4
    assert json.loads((out / "config.json").read_text())["methods"]["run"] == ["rft", "mt-dpo"]
    # Taking a method away, or changing anything else, is another config.
    assert main([*command, "--methods", "mt-dpo"]) != 0
    # A folder written before a setting existed (here: env.turn_notice) resumes: it ran
    # with what is now the default.
    stored = json.loads((out / "config.json").read_text())
    del stored["env"]["turn_notice"]
    (out / "config.json").write_text(json.dumps(stored))
    assert main([*command, "--methods", "rft,mt-dpo"]) == 0
    assert json.loads((out / "config.json").read_text())["env"]["turn_notice"] is False
    # Gradient checkpointing changes memory, not results (and checkpoints how often a run
    # saves): a run killed for memory resumes with it turned on, refitting nothing.
    run_only = ["--set", "training.gradient_checkpointing=true", "--set", "training.save_steps=7"]
    assert main([*command, "--methods", "rft,mt-dpo", *run_only]) == 0
    assert (out / "methods" / "rft" / "fit.json").stat().st_mtime_ns == fitted
    assert main([*command, "--methods", "rft,mt-dpo", "--set", "training.num_epochs=2"]) != 0
    # So does a longer wait on the simulated human's server (it changes no reply).
    stored = json.loads((out / "config.json").read_text())
    stored["env"]["simulator_timeout_s"] = 5.0
    (out / "config.json").write_text(json.dumps(stored))
    assert main([*command, "--methods", "rft,mt-dpo", *run_only]) == 0
    assert json.loads((out / "config.json").read_text())["env"]["simulator_timeout_s"] == 60.0
    stored["env"]["max_turns"] = 3  # a setting that differs is still another config
    (out / "config.json").write_text(json.dumps(stored))
    assert main([*command, "--methods", "rft,mt-dpo"]) != 0


@pytest.mark.slow
def test_seeds_run_at_once_each_in_its_own_process_with_its_own_log(tmp_path, capsys):
    out = tmp_path / "parallel"
    command = ["compare", "--config", "smoke", "--methods", "rft", "--seeds", "0,1"]
    command += ["--out", str(out), "--no-progress", "--parallel", "2"]
    # Seed 1's folder holds another config's run: that seed fails, the other finishes.
    blocked = out / "seed-1"
    other = ["--methods", "rft", "--seed", "1", "--set", "eval.test_tasks=2"]
    assert (
        main(["compare", "--config", "smoke", *other, "--out", str(blocked), "--no-progress"]) == 0
    )
    capsys.readouterr()
    assert main(command) != 0
    error = capsys.readouterr().err
    assert "1 of 2 seeds failed" in error and str(out / "seed-1.log") in error
    assert "another config" in (out / "seed-1.log").read_text()
    results = json.loads((out / "seed-0" / "results.json").read_text())
    assert results["config"]["seed"] == 0 and list(results["methods"]) == ["warm-start", "rft"]
    log = (out / "seed-0.log").read_text()
    assert f"seed 0: {out / 'seed-0'}" in log  # its own process wrote it
    assert not (out / "pooled.json").exists()
    # With the blocking run gone, the same command resumes: finished seeds are read back.
    finished = (out / "seed-0" / "methods" / "rft" / "fit.json").stat().st_mtime_ns
    shutil.rmtree(blocked)
    assert main(command) == 0
    assert (out / "seed-0" / "methods" / "rft" / "fit.json").stat().st_mtime_ns == finished
    assert json.loads((out / "seed-1" / "results.json").read_text())["config"]["seed"] == 1
    pooled = json.loads((out / "pooled.json").read_text())
    assert pooled["seeds"] == [0, 1] and set(pooled["methods"]) == {"warm-start", "rft"}
    assert main(["compare", "--config", "smoke", "--parallel", "2", "--out", str(out)]) != 0
    assert "--parallel runs several seeds at once" in capsys.readouterr().err


def test_controls_rank_sweet_rl_pairs_by_a_coin_or_the_environment(tmp_path):
    from agents import OracleAgent, TransformersAgent, collect
    from algorithms import Algorithm, FitContext
    from algorithms.pairs import TurnPair
    from tests.tiny_lm import make_tiny_lm

    def control_pairs(name, pairs, buffer, seed):
        control = Algorithm.named(name)(TransformersAgent(*make_tiny_lm(seed=0), device="cpu"))
        return control.rank(pairs, FitContext(buffer=buffer, directory=tmp_path, seed=seed))

    kwargs = env_kwargs(load_config("smoke"), "train")
    buffer = collect("ColBench-Backend-v0", OracleAgent(max_turns=2), 1, env_kwargs=kwargs)
    episode = buffer[0]
    right = f"I WANT TO ANSWER: {episode.reference['ground_truth']}"
    wrong = "I WANT TO ANSWER: def f(*args):\n    return None"
    messages = tuple(episode.turns[0].messages)
    pairs = [
        TurnPair(messages, wrong, right, 0.2, 0.1, episode.task_id),  # the wrong one chosen
        TurnPair(messages, "Hi?", "Hello?", 0.2, 0.1, episode.task_id),  # nothing told apart
    ] * 20
    coin = control_pairs("sweet-rl-random", pairs, buffer, seed=0)
    swapped = [a.chosen != b.chosen for a, b in zip(pairs, coin)]
    assert 10 < sum(swapped) < 30  # a fair coin on 40 pairs
    turned = [(p, c) for p, c, s in zip(pairs, coin, swapped) if s]
    assert all(c.chosen == p.rejected and c.chosen_score == p.rejected_score for p, c in turned)
    assert control_pairs("sweet-rl-random", pairs, buffer, seed=0) == coin  # seeded
    ranked = control_pairs("sweet-rl-env", pairs, buffer, seed=0)
    assert len(ranked) == 20 and all(p.chosen == right for p in ranked)


def test_bundled_configs_load_and_bad_overrides_are_clear():
    for name in ["smoke", "quick", "paper", "paper-1gpu"]:
        config = load_config(name)
        assert config.name == name
        assert "sweet-rl" in config.methods.run
    assert load_config("smoke", ["data.train_tasks=9"]).data.train_tasks == 9
    with pytest.raises(ConfigError, match="did you mean"):
        load_config("smoke", ["data.train_taks=9"])
    with pytest.raises(ConfigError, match=r"methods\.run"):
        load_config("smoke", ["methods.run=['zero-shot', 'ppo']"])
    # A control needs the method it controls, and trains with that method's settings.
    with pytest.raises(ValueError, match="a control of 'sweet-rl': add 'sweet-rl'"):
        check_training_settings(load_config("smoke", ["methods.run=['rft', 'sweet-rl-random']"]))
    with pytest.raises(ValueError, match=r"set them in \[methods.sweet-rl\]"):
        check_training_settings(load_config("smoke", ["methods.sweet-rl-env.nll_coef=0.5"]))
    with pytest.raises(ConfigError, match="seed twice"):
        load_config("smoke", ["seeds=[0, 0]"])
    assert load_config("quick").seeds == [0, 1, 2]
    with pytest.raises(FileNotFoundError, match="bundled"):
        load_config("nope")


def test_env_turn_notice_reaches_the_environment():
    import gymnasium as gym

    kwargs = env_kwargs(load_config("smoke", ["env.turn_notice=true"]), "train")
    env = gym.make("ColBench-Backend-v0", **kwargs)
    env.reset(seed=0)
    reply = env.step("What is the name?")[0]  # smoke: 2 turns, so one is left
    assert reply.endswith("(One message left: your next message is your final answer.)")
    assert "turn_notice" not in env_kwargs(load_config("smoke"), "train")  # off by default
    with pytest.raises(ConfigError, match=r"env\.turn_notice must be true or false"):
        load_config("smoke", ["env.turn_notice='yes'"])


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


# -- models: hub ids and local folders -------------------------------------------------------

HUB_ID = "meta-llama/Llama-3.1-8B-Instruct"


def test_a_hub_id_reaches_from_pretrained_unchanged_with_the_dtype(fake_hub, no_network):
    import torch

    config = load_config("smoke", [f"policy.model='{HUB_ID}'", "policy.dtype='bfloat16'"])
    agent = build_policy(config)
    assert [name for name, _ in fake_hub] == [HUB_ID, HUB_ID]
    assert fake_hub[0][1] == {}  # no local_files_only: transformers honours HF_HUB_OFFLINE
    assert fake_hub[1][1] in ({"dtype": torch.bfloat16}, {"torch_dtype": torch.bfloat16})
    assert agent.max_new_tokens == config.policy.max_new_tokens
    fake_hub.clear()
    build_policy(load_config("smoke", ["policy.model='gpt2'"]))  # "auto": the checkpoint's
    assert fake_hub[1][0] == "gpt2" and list(fake_hub[1][1].values()) == ["auto"]


def test_the_cli_agent_and_model_flags_take_hub_ids(fake_hub, no_network, capsys):
    code = main(["eval", "--config", "smoke", "--agent", HUB_ID, "--tasks", "1", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert fake_hub[0][0] == HUB_ID and f"{HUB_ID} on 1 test tasks" in capsys.readouterr().out
    assert load_config("smoke", [f"policy.model='{HUB_ID}'"]).policy.model == HUB_ID


@pytest.mark.parametrize("name", ["./no-such-model", "/no/such/model", "~/no-such-model", "a/b/c"])
def test_a_missing_model_path_is_named(name, fake_hub):
    assert is_local_path(name)
    with pytest.raises(FileNotFoundError, match=re.escape(repr(name))):
        build_policy(load_config("smoke", [f"policy.model='{name}'"]))
    assert fake_hub == []  # refused before from_pretrained


def test_an_uncached_hub_id_offline_fails_with_one_clear_line(monkeypatch, no_network, capsys):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # read when the client is imported
    name = "sweetrl-gym-tests/never-cached-model"
    assert not is_local_path(name)
    with pytest.raises(OSError, match="HF_HUB_OFFLINE") as info:
        build_policy(load_config("smoke", [f"policy.model='{name}'"]))
    assert repr(name) in str(info.value) and "\n" not in str(info.value)
    code = main(["eval", "--config", "smoke", "--agent", name, "--tasks", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1 and "HF_HUB_OFFLINE" in err


def test_policy_dtype_is_checked():
    with pytest.raises(ConfigError, match=r"policy\.dtype"):
        load_config("smoke", ["policy.dtype='float8'"])
    assert load_config("paper").policy.dtype == "bfloat16"


@pytest.mark.parametrize("name", config_names())
def test_bundled_training_settings_are_settings_of_their_algorithms(name):
    config = load_config(name)
    check_training_settings(config, config.methods.run)


def test_the_fsdp_config_is_fsdp2_on_8_processes_and_the_paper_configs_name_hub_ids():
    import yaml

    fsdp = yaml.safe_load((CONFIG_DIR / "accelerate_fsdp_8gpu.yaml").read_text())
    assert fsdp["distributed_type"] == "FSDP" and fsdp["num_processes"] == 8
    assert fsdp["fsdp_config"]["fsdp_version"] == 2
    header = (CONFIG_DIR / "paper.toml").read_text()
    assert "accelerate launch --config_file benchmarks/configs/accelerate_fsdp_8gpu.yaml" in header
    for name in ("paper", "paper-1gpu"):
        config = load_config(name)
        assert config.policy.model == HUB_ID and config.policy.dtype == "bfloat16"
        assert config.env.simulator_model == "meta-llama/Llama-3.1-70B-Instruct"
        assert all("critic_model" not in s for s in config.methods.settings.values())
    training = load_config("paper-1gpu").training
    assert training["lora_rank"] > 0 and training["gradient_checkpointing"] is True


def test_a_missing_critic_model_path_is_named_before_training(tmp_path):
    from benchmarks.harness.compare import fit_method
    from sweetrl_gym import TrajectoryBuffer

    config = load_config("smoke", ["methods.sweet-rl.critic_model='./no-such-critic'"])
    with pytest.raises(FileNotFoundError, match=r"\[methods\.sweet-rl\] critic_model"):
        fit_method("sweet-rl", config, TrajectoryBuffer(), tmp_path / "sweet-rl")
    assert not (tmp_path / "sweet-rl").exists()


def test_warm_start_settings_are_checked_before_any_work():
    from benchmarks.harness.policies import system_prompt

    config = load_config("quick")
    assert config.warm_start.demonstrator == "collaborator"
    learning_rate = config.warm_start.settings["learning_rate"]
    assert config.warm_start_settings()["learning_rate"] == learning_rate
    assert "demonstrator" not in config.warm_start_settings()
    for bad, match in [
        ("warm_start.demonstrator='teacher'", "warm_start.demonstrator"),
        ("warm_start.ask_probability=1.5", "ask_probability"),
        ("warm_start.apply_probability=-0.5", "apply_probability"),
        ("warm_start.tasks=-1", "warm_start.tasks"),
    ]:
        with pytest.raises(ConfigError, match=match):
            load_config("quick", [bad])
    with pytest.raises(ConfigError, match=r"warm_start\.tasks > 0"):
        load_config("smoke", ["warm_start.tasks=0"])
    with pytest.raises(ValueError, match=r"\[warm_start\]"):
        check_training_settings(load_config("smoke", ["warm_start.learning_rat=1e-4"]), [])
    # The system prompt: the one-line prompt, the full one, or the text given.
    assert len(system_prompt(config)) < 200 and "I WANT TO ANSWER:" in system_prompt(config)
    full = load_config("quick", ["policy.system_prompt='full'"])
    assert len(system_prompt(full)) > 400
    assert system_prompt(load_config("quick", ["policy.system_prompt='Be brief.'"])) == "Be brief."
    # The Frontend's own short prompt: pages, not functions, and no turn limit it may contradict.
    short = system_prompt(load_config("frontend-quick", ["policy.system_prompt='short'"]))
    assert "HTML" in short and "Python" not in short and "10 messages" not in short
    full = load_config("paper-frontend", ["policy.system_prompt_file=''"])  # ours, not a file
    assert len(short) < 250 < len(system_prompt(full))


def test_the_collaborator_of_a_frontend_config_designs_pages():
    from agents import FrontendCollaborator, ScriptedCollaborator
    from benchmarks.harness.policies import scripted_agent

    assert isinstance(scripted_agent("collaborator", load_config("quick")), ScriptedCollaborator)
    frontend = ["env.id='ColBench-Frontend-v0'", "warm_start.ask_probability=0.3"]
    agent = scripted_agent("collaborator", load_config("quick", frontend))
    assert isinstance(agent, FrontendCollaborator)
    assert (agent.ask_probability, agent.apply_probability) == (0.3, 0.8)  # its own default
    told = load_config("quick", [*frontend, "warm_start.apply_probability=0.6"])
    assert scripted_agent("collaborator", told).apply_probability == 0.6
    # The Backend's config is as it was: resumed run folders still match it.
    assert load_config("quick").warm_start.apply_probability is None
    assert "apply_probability" not in load_config("quick").to_dict()["warm_start"]


def test_a_fit_is_skipped_only_when_the_buffer_has_nothing_for_the_method(tmp_path, monkeypatch):
    from algorithms import NothingToFit, RejectionFT
    from benchmarks.harness.compare import fit_method

    config = load_config("smoke")
    record = fit_method("rft", config, TrajectoryBuffer(), tmp_path / "empty")
    assert record["status"] == "skipped" and "buffer is empty" in record["reason"]

    def fit(reason, kind):
        def raises(self, buffer, *, resume=False):
            raise kind(reason)

        return raises

    monkeypatch.setattr(RejectionFT, "fit", fit("no success to imitate", NothingToFit))
    record = fit_method("rft", config, TrajectoryBuffer(), tmp_path / "nothing")
    assert record == {
        "label": "RFT",
        "controls": "",
        "status": "skipped",
        "reason": "no success to imitate",
    }
    assert json.loads((tmp_path / "nothing" / "fit.json").read_text()) == record

    # Any other error of a fit is a failure: it stops the comparison, nothing is recorded.
    monkeypatch.setattr(RejectionFT, "fit", fit("a bug in the fit", ValueError))
    with pytest.raises(ValueError, match="a bug in the fit"):
        fit_method("rft", config, TrajectoryBuffer(), tmp_path / "broken")
    assert not (tmp_path / "broken" / "fit.json").exists()


def test_frontend_smoke_compares_every_method_on_similarity(tmp_path):
    # Seed 0 runs every method; seed 1 only SWEET-RL beside the base, which is what pooling
    # over seeds needs (the seeds' runner itself is tested on the Backend's smoke config).
    whole = tmp_path / "frontend"
    command = ["compare", "--config", "frontend-smoke", "--no-progress"]
    assert main([*command, "--seed", "0", "--out", str(whole / "seed-0")]) == 0
    seed_1 = ["--seed", "1", "--methods", "zero-shot,sweet-rl", "--out", str(whole / "seed-1")]
    assert main([*command, *seed_1]) == 0
    assert main(["pool", str(whole / "seed-0"), str(whole / "seed-1"), "--out", str(whole)]) == 0
    out = whole / "seed-0"
    results = json.loads((out / "results.json").read_text())
    methods = results["methods"]
    assert results["base"] == "warm-start"
    # The warm start clones the Frontend collaborator: skeleton pages.
    demos = TrajectoryBuffer.load(out / "data" / "warm-start-demonstrations.jsonl")
    assert all('<section id="' in t.answer or '<nav id="' in t.answer for t in demos)
    for name in ["rft", "mt-dpo", "archer", "sweet-rl", "sweet-rl-random"]:
        assert methods[name]["fit"]["status"] == "trained", name
        versus = methods[name]["versus_base"]
        low, high = versus["similarity_diff_ci_low"], versus["similarity_diff_ci_high"]
        assert low <= versus["similarity_diff"] <= high, name
        assert 0.0 <= versus["win_rate_ci_low"] <= versus["win_rate"] <= versus["win_rate_ci_high"]
        assert versus["gained"] + versus["lost"] <= 3
    # Its turn pairs judged by the Frontend's environment (pages by similarity, questions
    # by the design facts told); the environment-ranked control trains on them or says why not.
    diagnostics = methods["sweet-rl"]["fit"]["diagnostics"]
    signal = diagnostics["record"]["turn_pair_signal"]
    judged = signal["answer_pairs"] + signal["question_pairs"] + signal["mixed_pairs"]
    assert judged + signal["unknown_task"] > 0 and signal["unknown_task"] == 0
    assert methods["sweet-rl-env"]["fit"]["status"] in ("trained", "skipped")
    # The critic reads the target's compact skeleton, not its whole page.
    critic_pairs = (
        out / "methods" / "sweet-rl" / "run" / "stages" / "critic_pairs.json"
    ).read_text()
    assert "In light that the target page is: <html>" in critic_pairs and 'id=\\"' in critic_pairs
    # The critic on one dialogue: a task's best page, beside the design facts each reply told.
    example = diagnostics["record"]["critic_example"]
    assert example["frontend"] and len(example["turns"]) >= 2
    samples = TrajectoryBuffer.load(out / "data" / "train.jsonl")
    samples.extend(TrajectoryBuffer.load(out / "data" / "demonstrations-collaborator.jsonl"))
    samples = samples.group_by_task()
    best = max(samples[example["task_id"]], key=lambda t: t.reward)
    assert [row["action"] for row in example["turns"]] == [turn.action for turn in best.turns]
    assert min(t.reward for t in samples[example["task_id"]]) < best.reward - 0.02
    told = [fact for row in example["turns"] for fact in row["facts_told"]]
    assert told and all(isinstance(row["advantage"], float) for row in example["turns"])
    assert {m for row in example["turns"] for m in row["missed_by_failures"]} <= set(told)
    report = (out / "results.md").read_text()
    assert "## SWEET-RL: diagnostics" in report and "The critic on one dialogue" in report
    assert "best page" in report
    assert "mean similarity" in report and "win rate" in report and "by more than 0.02" in report
    # The picture panel: per task (a row), the target, the warm start's and SWEET-RL's pages.
    assert "![pages](pages.png)" in report
    with Image.open(out / "pages.png") as panel:
        assert panel.size == (3 * 320, 3 * (480 + 22))

    # Each evaluated page's similarity is kept in the report, so the report alone pools.
    pages = TrajectoryBuffer.load(out / "eval" / "sweet-rl.jsonl")
    kept = results["methods"]["sweet-rl"]["outcomes"]
    assert kept["similarity"] == [t.metadata["similarity"] for t in pages]
    assert kept["task_id"] == [t.task_id for t in pages]

    # The seeds pooled on similarity: per (seed, task), gained / lost by the margin, win rates.
    pooled = json.loads((whole / "pooled.json").read_text())
    assert pooled["metric"] == "similarity" and pooled["seeds"] == [0, 1]
    other = json.loads((whole / "seed-1" / "results.json").read_text())
    assert {"rft", "mt-dpo", "archer", "sweet-rl-random"} <= set(pooled["left_out"])
    entry = pooled["methods"]["sweet-rl"]
    seeds = [results, other]
    assert entry["similarity"] == [r["methods"]["sweet-rl"]["eval"]["similarity"] for r in seeds]
    versus = entry["pooled"]
    assert versus["num_runs"] == 2 and versus["num_tasks"] == 6
    assert versus["similarity_diff_ci_low"] <= versus["similarity_diff"]
    assert versus["similarity_diff"] <= versus["similarity_diff_ci_high"]
    assert 0.0 <= versus["win_rate_ci_low"] <= versus["win_rate"] <= versus["win_rate_ci_high"]
    assert versus["gained"] + versus["lost"] <= 6
    summary = (whole / "pooled.md").read_text()
    assert "mean similarity" in summary and "| Win rate vs base, pooled |" in summary
    assert "%" not in summary.split("| SWEET-RL |")[1].split("|")[1]  # similarities, not rates
    assert "- SWEET-RL vs Warm start (BC):" in summary and "win rate" in summary


def test_the_frontend_similarity_is_a_setting_checked_at_load():
    clip = ["env.similarity='clip'", "env.clip_model='/models/clip'"]
    kwargs = env_kwargs(load_config("frontend-smoke", clip), "test")
    assert (kwargs["similarity"], kwargs["clip_model"]) == ("clip", "/models/clip")
    assert env_kwargs(load_config("frontend-smoke"), "test")["similarity"] == "perceptual"
    assert "similarity" not in env_kwargs(load_config("smoke"), "test")
    for bad, match in [
        (["env.similarity='clip'"], "needs env.clip_model"),
        (["env.clip_model='/models/clip'"], "only with env.similarity = 'clip'"),
        (["env.similarity='ssim'"], "'perceptual' or 'clip'"),
    ]:
        with pytest.raises(ConfigError, match=match):
            load_config("frontend-smoke", bad)
    with pytest.raises(ConfigError, match="Frontend"):
        load_config("smoke", clip)
    paper = load_config("paper-frontend")
    assert paper.env.similarity == "clip" and paper.env.simulator == "openai"
    assert paper.methods.settings["sweet-rl"]["pair_success_only"] is False


def test_env_similarity_is_the_environments_scorer():
    from benchmarks.harness.compare import env_similarity
    from sweetrl_gym.similarity import perceptual_similarity

    assert env_similarity(load_config("smoke")) is None  # the Backend scores no pages
    assert env_similarity(load_config("frontend-smoke")) is perceptual_similarity
