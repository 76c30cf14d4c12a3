"""The shared machinery: configs, callbacks, TensorBoard, checkpoints and resume (via RejectionFT)."""

import json
import logging
import math
import time
from typing import ClassVar

import pytest
import torch

from agents import OracleAgent, TransformersAgent
from algorithms import (
    Algorithm,
    Callback,
    EvaluateCallback,
    MultiTurnDPOConfig,
    NothingToFit,
    RejectionFT,
    RejectionFTConfig,
    StopAfterSteps,
    SweetRLConfig,
)
from tests.algorithms.conftest import FAST
from tests.conftest import make_tasks
from tests.tiny_lm import make_tiny_lm


def fresh_policy():
    model, tokenizer = make_tiny_lm(seed=0)
    return TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, seed=0)


def weights(agent):
    return {k: v.detach().clone() for k, v in agent.model.state_dict().items()}


def test_config_defaults_are_the_papers():
    config = SweetRLConfig()
    assert (config.learning_rate, config.critic_learning_rate) == (2e-7, 2e-7)
    assert (config.critic_epochs, config.num_epochs) == (4, 1)
    assert (config.dpo_beta, config.critic_beta, config.nll_coef) == (0.1, 0.1, 0.01)
    assert (config.num_candidates, config.candidate_temperature, config.candidate_fraction) == (
        16,
        1.0,
        0.1,
    )
    assert config.pairs_per_turn == 4 and config.length_normalize and config.critic_uses_reference
    assert config.gradient_checkpointing and config.mixed_precision == "auto"


def test_config_rejects_typos_and_bad_values(tiny_policy):
    with pytest.raises(TypeError, match="did you mean 'learning_rate'"):
        RejectionFT(tiny_policy, learning_rte=1e-5)
    with pytest.raises(ValueError, match="learning_rate must be > 0"):
        RejectionFTConfig(learning_rate=0)
    with pytest.raises(ValueError, match="mixed_precision"):
        RejectionFTConfig(mixed_precision="fp8")
    with pytest.raises(ValueError, match="select must be one of"):
        RejectionFTConfig(select="best")
    with pytest.raises(ValueError, match="num_candidates"):
        SweetRLConfig(num_candidates=1)
    with pytest.raises(TypeError, match="needs a RejectionFTConfig"):
        RejectionFT(tiny_policy, MultiTurnDPOConfig())
    with pytest.raises(TypeError, match="TransformersAgent"):
        RejectionFT(OracleAgent())


def test_config_values_of_the_wrong_type_are_refused_by_name():
    # Values often arrive as text (TOML, --set): refused here, not mid-training.
    with pytest.raises(ValueError, match="learning_rate must be a number, got 'abc'"):
        RejectionFTConfig(learning_rate="abc")
    with pytest.raises(ValueError, match=r"num_candidates must be an integer, got 2\.5"):
        SweetRLConfig(num_candidates=2.5)
    with pytest.raises(ValueError, match="batch_size must be an integer, got True"):
        MultiTurnDPOConfig(batch_size=True)
    with pytest.raises(ValueError, match="gradient_checkpointing must be true or false"):
        RejectionFTConfig(gradient_checkpointing="no")
    with pytest.raises(ValueError, match="critic_model must be a string or None, got 3"):
        SweetRLConfig(critic_model=3)
    with pytest.raises(ValueError, match="lora_target_modules must be a string or a list"):
        RejectionFTConfig(lora_target_modules=[1, 2])
    # An integer stands for a float, a list for a tuple; None where None is allowed.
    config = SweetRLConfig(learning_rate=1, lora_target_modules=["q_proj"], critic_model=None)
    assert config.learning_rate == 1 and config.lora_target_modules == ("q_proj",)


def test_config_round_trips_through_json(tmp_path):
    config = SweetRLConfig(critic_head="value", output_dir=tmp_path, num_candidates=4)
    config.save(tmp_path / "config.json")
    assert SweetRLConfig.load(tmp_path / "config.json") == config


def test_empty_buffer_is_a_clear_error(tiny_policy):
    with pytest.raises(ValueError, match="buffer is empty"):
        RejectionFT(tiny_policy, **FAST).fit([])


@pytest.mark.parametrize(
    ("name", "kept", "match"),
    [
        ("bc", "none", "buffer is empty"),
        ("rft", "failures", "passes select='success'"),
        ("mt-dpo", "successes", "no trajectory pairs"),
        ("sweet-rl", "failures", "no trajectory pairs .* at least one success"),
        ("archer", "none", "buffer is empty"),
    ],
)
def test_a_buffer_with_nothing_for_a_method_raises_nothing_to_fit(
    name, kept, match, shared_buffer, tiny_policy, tmp_path
):
    keep = {"none": lambda t: False, "failures": lambda t: not t.success}
    buffer = shared_buffer.filter(keep.get(kept, lambda t: t.success))
    algorithm = Algorithm.named(name)(tiny_policy, **FAST, output_dir=str(tmp_path))
    with pytest.raises(NothingToFit, match=match) as raised:
        algorithm.fit(buffer)
    assert isinstance(raised.value, ValueError)  # what callers caught before it had a type


def test_tensorboard_gets_namespaced_scalars(shared_buffer, tiny_policy, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    algo = RejectionFT(tiny_policy, output_dir=tmp_path / "run", **FAST)
    algo.fit(shared_buffer)
    events = EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"train/loss", "train/learning_rate", "train/grad_norm"} <= tags
    losses = [event.value for event in events.Scalars("train/loss")]
    # One step per batch of successful trajectories (each one sequence).
    assert len(losses) == math.ceil(
        len(shared_buffer.filter(lambda t: t.success)) / FAST["batch_size"]
    )
    assert all(math.isfinite(v) for v in losses)
    assert (tmp_path / "run" / "metrics.json").exists()


def test_metrics_go_to_any_accelerate_tracker(shared_buffer, tiny_policy, tmp_path):
    from accelerate.tracking import GeneralTracker, register_tracker_class

    class Recorder(GeneralTracker):
        name = "test-recorder"
        requires_logging_directory = False
        runs: ClassVar[list] = []

        def __init__(self, run_name, **kwargs):
            super().__init__()
            self.project, self.logged, self.config, self.finished = run_name, [], None, False

        def start(self):
            Recorder.runs.append(self)

        @property
        def tracker(self):
            return self

        def store_init_configuration(self, values):
            self.config = values

        def log(self, values, step=None, **kwargs):
            self.logged.append((step, dict(values)))

        def finish(self):
            self.finished = True

    register_tracker_class(Recorder)
    algo = RejectionFT(
        tiny_policy, output_dir=tmp_path / "run", report_to=["test-recorder"], **FAST
    )
    algo.fit(shared_buffer)
    (run,) = Recorder.runs
    assert run.project == "sweetrl-gym" and run.finished
    assert run.config["algorithm"] == "rft" and run.config["learning_rate"] == FAST["learning_rate"]
    losses = [values["train/loss"] for _, values in run.logged if "train/loss" in values]
    assert losses == [value for _, key, value in algo.history if key == "train/loss"] != []
    assert not (tmp_path / "run" / "tensorboard").exists()  # TensorBoard only when asked


def test_report_to_names_unknown_and_missing_trackers():
    import importlib.util

    with pytest.raises(ValueError, match="no tracker named 'tensorbord'"):
        RejectionFTConfig(report_to="tensorbord")
    assert RejectionFTConfig(report_to="none").report_to == "none"
    assert RejectionFTConfig(report_to=["tensorboard"]).report_to == ("tensorboard",)
    if importlib.util.find_spec("comet_ml") is None:
        with pytest.raises(ValueError, match="pip install comet_ml"):
            RejectionFTConfig(report_to="comet_ml")


def test_gradient_accumulation_takes_fewer_optimizer_steps(shared_buffer, tiny_policy):
    algo = RejectionFT(tiny_policy, **{**FAST, "batch_size": 1, "gradient_accumulation_steps": 3})
    algo.fit(shared_buffer)
    dialogues = len(shared_buffer.filter(lambda t: t.success))  # one sequence each
    steps = [step for step, key, _ in algo.history if key == "train/loss"]
    assert len(steps) == math.ceil(dialogues / 3)


def test_an_existing_run_is_not_overwritten(shared_buffer, tiny_policy, tmp_path):
    RejectionFT(tiny_policy, output_dir=tmp_path, **FAST).fit(shared_buffer)
    with pytest.raises(FileExistsError, match="resume=True"):
        RejectionFT(fresh_policy(), output_dir=tmp_path, **FAST).fit(shared_buffer)
    with pytest.raises(ValueError, match="other data or settings"):
        RejectionFT(fresh_policy(), output_dir=tmp_path, **FAST).fit(shared_buffer[:6], resume=True)


class RaiseAfter(Callback):
    """Simulates a crash: raises after ``steps`` optimizer steps."""

    def __init__(self, steps):
        self.steps = steps

    def on_step(self, algorithm, stage, step, metrics):
        if step >= self.steps:
            raise KeyboardInterrupt("simulated crash")


def test_resume_after_a_crash_equals_an_uninterrupted_run(shared_buffer, tmp_path):
    settings = {**FAST, "batch_size": 1, "num_epochs": 2, "save_steps": 2}  # 8 steps
    clean = fresh_policy()
    RejectionFT(clean, **settings).fit(shared_buffer)

    crashed = fresh_policy()
    with pytest.raises(KeyboardInterrupt):
        RejectionFT(crashed, output_dir=tmp_path, callbacks=[RaiseAfter(5)], **settings).fit(
            shared_buffer
        )
    assert (
        tmp_path / "stages" / "policy" / "checkpoint-4"
    ).is_dir()  # the last one before the crash

    resumed = fresh_policy()  # a new process would start from the initial weights
    algo = RejectionFT(resumed, output_dir=tmp_path, **settings)
    algo.fit(shared_buffer, resume=True)
    for key, value in weights(clean).items():
        torch.testing.assert_close(resumed.model.state_dict()[key], value, rtol=0, atol=1e-6)
    # Its history is one run's: steps 1-4 kept from the crashed launch (step 5 was lost
    # with it and trained again), 5-8 from this one, each once.
    losses = [step for step, key, _ in algo.history if key == "train/loss"]
    assert losses == list(range(1, 9))
    assert not (
        tmp_path / "stages" / "policy" / "checkpoint-4"
    ).exists()  # a finished stage drops them


def test_a_tied_model_checkpoints_saves_and_loads_quietly_and_unchanged(
    shared_buffer, tmp_path, caplog
):
    # SmolLM2's output head is its input embedding: one tensor under two names.
    def tied_policy():
        model, tokenizer = make_tiny_lm(seed=0, tie_word_embeddings=True)
        return TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, seed=0)

    from safetensors import safe_open

    settings = {**FAST, "batch_size": 1, "save_steps": 1}  # 4 steps, a checkpoint each
    clean = tied_policy()
    RejectionFT(clean, **settings).fit(shared_buffer)
    with caplog.at_level(logging.WARNING), pytest.raises(KeyboardInterrupt):
        RejectionFT(
            tied_policy(), output_dir=tmp_path / "run", callbacks=[RaiseAfter(3)], **settings
        ).fit(shared_buffer)
    checkpoint = tmp_path / "run" / "stages" / "policy" / "checkpoint-2" / "model.safetensors"
    with safe_open(str(checkpoint), "pt") as weights_file:
        names = set(weights_file.keys())
    assert "model.embed_tokens.weight" in names and "lm_head.weight" not in names

    resumed = tied_policy()
    with caplog.at_level(logging.WARNING):
        algo = RejectionFT(resumed, output_dir=tmp_path / "run", **settings)
        algo.fit(shared_buffer, resume=True)
        algo.save(tmp_path / "saved")
        back = Algorithm.load(tmp_path / "saved", device="cpu").policy
    assert "shared tensor" not in caplog.text, caplog.text
    for key, value in weights(clean).items():
        torch.testing.assert_close(resumed.model.state_dict()[key], value, rtol=0, atol=1e-6)
        assert torch.equal(back.model.state_dict()[key], resumed.model.state_dict()[key]), key
    assert back.model.lm_head.weight is back.model.model.embed_tokens.weight
    chats = [[{"role": "user", "content": "What is the name?"}]]
    assert back.act(chats) == resumed.act(chats)


def test_a_run_stopped_for_memory_resumes_with_gradient_checkpointing_turned_on(
    shared_buffer, tmp_path
):
    settings = {**FAST, "batch_size": 1, "num_epochs": 2, "save_steps": 2}  # 8 steps
    clean = fresh_policy()
    RejectionFT(clean, **settings).fit(shared_buffer)

    crashed = fresh_policy()
    with pytest.raises(KeyboardInterrupt):  # as a process killed for memory would stop
        RejectionFT(crashed, output_dir=tmp_path, callbacks=[RaiseAfter(5)], **settings).fit(
            shared_buffer
        )
    resumed = fresh_policy()
    lighter = {**settings, "gradient_checkpointing": True}  # memory, not what is computed
    RejectionFT(resumed, output_dir=tmp_path, **lighter).fit(shared_buffer, resume=True)
    for key, value in weights(clean).items():
        torch.testing.assert_close(resumed.model.state_dict()[key], value, rtol=0, atol=1e-6)


class SlowSteps(Callback):
    """Makes each optimizer step take at least ``seconds`` longer."""

    def __init__(self, seconds):
        self.seconds = seconds

    def on_step(self, algorithm, stage, step, metrics):
        time.sleep(self.seconds)


def test_a_resumed_fit_counts_the_time_of_the_launch_that_was_killed(shared_buffer, tmp_path):
    settings = {**FAST, "batch_size": 1, "num_epochs": 2, "save_steps": 2}  # 8 steps
    killed = RejectionFT(
        fresh_policy(), output_dir=tmp_path, callbacks=[SlowSteps(0.5), RaiseAfter(5)], **settings
    )
    with pytest.raises(KeyboardInterrupt):
        killed.fit(shared_buffer)
    # Steps 1-4 (2 s of sleep) were kept by the checkpoint at step 4; step 5 is redone.
    kept = json.loads((tmp_path / "progress.json").read_text())["seconds"]
    assert kept >= 2.0
    resumed = RejectionFT(fresh_policy(), output_dir=tmp_path, **settings)
    start = time.perf_counter()
    resumed.fit(shared_buffer, resume=True)
    this_launch = time.perf_counter() - start
    assert kept <= resumed.fit_seconds <= kept + this_launch + 0.1
    alone = RejectionFT(fresh_policy(), **settings)
    start = time.perf_counter()
    alone.fit(shared_buffer)  # nothing on disk: the fit's time is this call's
    assert 0 < alone.fit_seconds <= time.perf_counter() - start + 0.1


def test_a_run_folder_of_an_older_version_is_refused_saying_so(shared_buffer, tmp_path):
    settings = {**FAST, "output_dir": str(tmp_path)}
    RejectionFT(fresh_policy(), **settings).fit(shared_buffer)
    RejectionFT(fresh_policy(), **settings).fit(shared_buffer, resume=True)  # the same run
    progress = tmp_path / "progress.json"
    record = json.loads(progress.read_text())
    assert record["fingerprint_version"] == 2
    # As an older version wrote it: no fingerprint version, its settings hashed otherwise.
    del record["fingerprint_version"]
    progress.write_text(json.dumps({**record, "fingerprint": "0123456789abcdef"}))
    with pytest.raises(ValueError, match=r"written by an older version of sweetrl-gym"):
        RejectionFT(fresh_policy(), **settings).fit(shared_buffer, resume=True)
    # Of this version, the same mismatch is other data or settings.
    progress.write_text(json.dumps({**record, "fingerprint_version": 2, "fingerprint": "x"}))
    with pytest.raises(ValueError, match="other data or settings"):
        RejectionFT(fresh_policy(), **settings).fit(shared_buffer, resume=True)


def test_a_callback_stops_training_and_resume_finishes_it(shared_buffer, tmp_path):
    stopped_policy = fresh_policy()
    settings = {**FAST, "batch_size": 1}  # 4 steps
    algo = RejectionFT(
        stopped_policy, output_dir=tmp_path, callbacks=[StopAfterSteps(2)], **settings
    )
    metrics = algo.fit(shared_buffer)
    assert algo.stopped
    assert metrics["train/num_turns"] > 0
    assert [key for _, key, _ in algo.history].count("train/loss") == 2
    partial = weights(stopped_policy)

    algo = RejectionFT(stopped_policy, output_dir=tmp_path, **settings)
    algo.fit(shared_buffer, resume=True)
    assert not algo.stopped
    assert any(not torch.equal(partial[k], v) for k, v in stopped_policy.model.state_dict().items())
    # The history is the whole run's: the first launch's 2 steps, then the other 2 of 4.
    assert [step for step, key, _ in algo.history if key == "train/loss"] == [1, 2, 3, 4]


def test_evaluate_callback_logs_eval_metrics(shared_buffer, tiny_policy):
    callback = EvaluateCallback(
        "ColBench-Backend-v0",
        num_tasks=2,
        num_envs=2,
        split="train",
        env_kwargs={"tasks": make_tasks(2), "max_turns": 2},
        progress=False,
    )
    metrics = RejectionFT(tiny_policy, callbacks=[callback], **FAST).fit(shared_buffer)
    assert callback.results and metrics["eval/success_rate"] == callback.results[0]["success_rate"]
    assert 0.0 <= metrics["eval/tests_passed"] <= 1.0


def test_load_refuses_other_files(tmp_path, shared_buffer, tiny_policy):
    with pytest.raises(FileNotFoundError, match=r"algorithm\.json"):
        Algorithm.load(tmp_path)
    algo = RejectionFT(tiny_policy, **FAST)
    algo.save(tmp_path / "rft")
    from algorithms import SweetRL

    with pytest.raises(ValueError, match="holds a RejectionFT"):
        SweetRL.load(tmp_path / "rft")


def test_deepspeed_zero3_prepare_gets_an_integer_micro_batch(monkeypatch, shared_buffer):
    """ZeRO-3 needs a GPU; what reaches ``prepare`` is checked here instead.

    accelerate raises when ``prepare`` gets no data loader and the DeepSpeed config's
    ``train_micro_batch_size_per_gpu`` is ``"auto"``; the trainer fills it in.
    """
    from types import SimpleNamespace

    import accelerate
    from accelerate.utils import DeepSpeedPlugin

    plugin = DeepSpeedPlugin(zero_stage=3)
    assert plugin.is_auto("train_micro_batch_size_per_gpu")
    seen = {}

    class Reached(Exception):
        pass

    class FakeAccelerator:
        num_processes = 1

        def __init__(self, **kwargs):
            self.state = SimpleNamespace(deepspeed_plugin=plugin)
            seen["kwargs"] = kwargs

        def register_save_state_pre_hook(self, hook):
            pass

        def prepare(self, *objects):
            seen["objects"] = [type(o).__name__ for o in objects]
            seen["micro_batch"] = plugin.deepspeed_config["train_micro_batch_size_per_gpu"]
            raise Reached

    monkeypatch.setattr(accelerate, "Accelerator", FakeAccelerator)
    with pytest.raises(Reached):
        RejectionFT(fresh_policy(), **{**FAST, "batch_size": 3}).fit(shared_buffer)
    assert seen["objects"] == ["LlamaForCausalLM", "AdamW"]  # no scheduler: stepped by us
    assert seen["micro_batch"] == 3 and not plugin.is_auto("train_micro_batch_size_per_gpu")


def test_a_policy_without_a_prompt_of_its_own_trains_on_its_environments(shared_buffer):
    from agents import FRONTEND_AGENT_PROMPT
    from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

    frontend = TrajectoryBuffer(
        [
            Trajectory.from_dict(
                {**t.to_dict(), "metadata": {**t.metadata, "env": "ColBench-Frontend-v0"}}
            )
            for t in shared_buffer
        ]
    )
    for given, expected in ((None, FRONTEND_AGENT_PROMPT), ("Mine.", "Mine.")):
        model, tokenizer = make_tiny_lm(seed=0)
        kwargs = {} if given is None else {"system_prompt": given}
        policy = TransformersAgent(model, tokenizer, device="cpu", max_new_tokens=8, **kwargs)
        algorithm = RejectionFT(policy, num_epochs=1, **FAST)
        algorithm.fit(frontend)
        # Trained on the prompt it played with (rollouts hand it the Frontend's), and kept.
        assert policy.system_prompt == expected
        first = next(iter(frontend))
        assert expected[:40] in algorithm.policy_prompts(first.turns)[0]
