"""Compare algorithms fairly: one buffer, the same held-out tasks, simulator and seeds.

``sweetrl compare --config NAME --out DIR`` runs :func:`run_comparison`, which reads top to
bottom: make the environment -> collect training data with the base policy (k samples
per task) -> fit every algorithm from that same buffer, each from a fresh copy of the
base policy -> evaluate each (and the untrained base policy, "zero-shot") on the same
held-out tasks with the same simulator and seeds -> write ``results.md`` (the paper's
metrics with 95% confidence intervals), ``results.json`` (versions, config, seeds,
task-set hashes), plots and TensorBoard runs.

Resumable: every stage writes its output under ``DIR`` as it goes, and a finished stage
is not redone (episodes already collected or evaluated are kept; an interrupted
training run continues from its last checkpoint). Run the same command again.
"""

from __future__ import annotations

import gc
import hashlib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sweetrl_gym  # noqa: F401 - registers the environments
from sweetrl_gym import TrajectoryBuffer

__all__ = [
    "build_policy",
    "env_kwargs",
    "fit_method",
    "run_comparison",
    "scripted_agent",
    "task_set_hash",
]

_FRONTEND = "ColBench-Frontend-v0"


def build_policy(config: Mapping[str, Any], *, evaluation: bool = False) -> Any:
    """Return a fresh base policy (an ``agents.TransformersAgent``) as the config describes.

    Args:
        config: The whole comparison config.
        evaluation: Sample at ``policy.eval_temperature`` (else ``policy.temperature``).

    Raises:
        FileNotFoundError: If ``policy.model`` is a path that does not exist.

    """
    from agents import FRONTEND_AGENT_PROMPT, TransformersAgent, load_default_agent

    policy = config["policy"]
    settings = {
        "temperature": policy["eval_temperature" if evaluation else "temperature"],
        "max_new_tokens": policy["max_new_tokens"],
        "batch_size": policy["batch_size"],
        "seed": config["seed"],
    }
    if config["env"]["id"] == _FRONTEND:
        settings["system_prompt"] = FRONTEND_AGENT_PROMPT
    model = policy["model"]
    if model == "default":
        return load_default_agent(**settings)
    if model == "tiny":
        from agents.tiny_model import make_tiny_lm

        lm, tokenizer = make_tiny_lm(seed=config["seed"])
        return TransformersAgent(lm, tokenizer, **settings)
    path = Path(model)
    if not path.exists():
        raise FileNotFoundError(
            f"policy.model {model!r} is neither 'default', 'tiny' nor an existing local model "
            "folder (no hub downloads)"
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    lm = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    return TransformersAgent(lm, tokenizer, **settings)


def env_kwargs(config: Mapping[str, Any], split: str) -> dict[str, Any]:
    """Return the ``gym.make`` keyword arguments of the config's environment for ``split``."""
    env = config["env"]
    source = env["tasks"]
    if split == "test" and env["test_tasks"]:
        source = env["test_tasks"]
    kwargs: dict[str, Any] = {"max_turns": env["max_turns"]}
    if env["id"] == _FRONTEND:
        from sweetrl_gym.tasks import load_frontend_tasks

        kwargs["tasks"] = load_frontend_tasks(source, split=split)
    else:
        from sweetrl_gym.tasks import load_backend_tasks

        difficulty = tuple(env["difficulty"]) or None
        families = env["families"] or None
        kwargs["tasks"] = load_backend_tasks(
            source, split=split, difficulty=difficulty, families=families
        )
    if env["simulator"] == "openai":
        from sweetrl_gym.simulators import OpenAISimulator, OpenAIVisionSimulator

        kind = OpenAIVisionSimulator if env["id"] == _FRONTEND else OpenAISimulator
        kwargs["simulator"] = kind(env["simulator_base_url"], env["simulator_model"])
    return kwargs


def task_set_hash(tasks: list[Any]) -> str:
    """Return a sha256 over the tasks' ids, requests and references (order matters)."""
    digest = hashlib.sha256()
    for task in tasks:
        for part in (task.task_id, task.problem_description, task.ground_truth):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()


def fit_method(
    name: str, config: Mapping[str, Any], buffer: TrajectoryBuffer, directory: Path
) -> dict[str, Any]:
    """Train one algorithm from a fresh base policy; save it under ``directory/model``.

    Resumes an interrupted run (``directory/run`` holds its checkpoints); a finished one
    (``directory/fit.json`` exists) is not redone.

    Returns:
        ``{"status": "trained", "metrics": ..., "history": ..., "seconds": ...}``, or
        ``{"status": "skipped", "reason": ...}`` when the buffer gives this algorithm
        nothing to learn from (no preference pairs, no successful episode).

    """
    from algorithms import Algorithm

    record_path = directory / "fit.json"
    if record_path.exists():
        return json.loads(record_path.read_text())
    klass = Algorithm.named(name)
    settings = {**config["training"], **config["methods"].get(name, {})}
    settings.setdefault("seed", config["seed"])
    run_dir = directory / "run"
    algorithm = klass(build_policy(config), output_dir=str(run_dir), **settings)
    start = time.perf_counter()
    try:
        metrics = algorithm.fit(buffer, resume=run_dir.exists())
    except ValueError as err:
        # No signal in the data for this method (e.g. no pair, no success): say so.
        record: dict[str, Any] = {"status": "skipped", "reason": str(err)}
    else:
        algorithm.save(directory / "model")
        record = {
            "status": "trained",
            "metrics": metrics,
            "history": [list(point) for point in algorithm.history],
            "seconds": round(time.perf_counter() - start, 1),
        }
    record_path.write_text(json.dumps(record, indent=2, default=float) + "\n")
    del algorithm
    gc.collect()
    return record


def scripted_agent(name: str, config: Mapping[str, Any]) -> Any:
    """Return the scripted agent ``name`` (``oracle``, ``random``, ``immediate``) for ``config``."""
    from agents import ImmediateAnswerAgent, OracleAgent, RandomAgent

    max_turns = config["env"]["max_turns"]
    if name == "oracle":
        return OracleAgent(max_turns=max_turns)
    if name == "random":
        return RandomAgent(max_turns=max_turns, seed=config["seed"])
    if name == "immediate":
        return ImmediateAnswerAgent()
    raise ValueError(f"no scripted agent {name!r}; choose oracle, random or immediate")


def _trained_policy(directory: Path, config: Mapping[str, Any]) -> Any:
    from algorithms import Algorithm

    policy = Algorithm.load(directory / "model").policy
    policy.temperature = float(config["policy"]["eval_temperature"])
    return policy


def _evaluate(
    name: str, agent: Any, config: Mapping[str, Any], out: Path, progress: bool
) -> dict[str, float]:
    from agents import evaluate

    path = out / "eval" / f"{name}.metrics.json"
    if path.exists():
        return json.loads(path.read_text())
    metrics = evaluate(
        agent,
        config["env"]["id"],
        split="test",
        num_tasks=config["eval"]["test_tasks"],
        samples_per_task=config["eval"]["samples_per_task"],
        num_envs=config["eval"]["num_envs"],
        seed=config["seed"],
        env_kwargs=env_kwargs(config, "test"),
        out=out / "eval" / f"{name}.jsonl",
        resume=True,
        progress=progress,
    )
    path.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def run_comparison(
    config: Mapping[str, Any], out: str | Path, *, progress: bool = True
) -> dict[str, Any]:
    """Run (or resume) the comparison the config describes; return ``results.json``'s data.

    Args:
        config: From :func:`benchmarks.experiment_config.load_config`.
        out: The run's folder (created; an existing one is resumed). A folder that holds
            a run of another config is refused.
        progress: Show progress bars and stage lines.

    Raises:
        ValueError: If ``out`` holds a run of a different config.

    """
    from agents import collect
    from benchmarks.report import write_report

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _claim(out, config)
    say = print if progress else (lambda *_: None)
    started = time.perf_counter()

    # 1. Training data: the base policy, k samples per task, on the training split.
    train_kwargs = env_kwargs(config, "train")
    n_train = min(config["data"]["train_tasks"], len(train_kwargs["tasks"]))
    k = config["data"]["samples_per_task"]
    say(f"[1/4] collecting {n_train} tasks x {k} episodes with the base policy")
    buffer = collect(
        config["env"]["id"],
        build_policy(config),
        task_indices=range(n_train),
        samples_per_task=config["data"]["samples_per_task"],
        num_envs=config["data"]["num_envs"],
        split="train",
        seed=config["seed"],
        env_kwargs=train_kwargs,
        out=out / "data" / "train.jsonl",
        resume=True,
        progress=progress,
    )
    for name in config["data"]["demonstrations"]:
        say(f"      adding {name} demonstrations on the same tasks")
        buffer = buffer + collect(
            config["env"]["id"],
            scripted_agent(name, config),
            task_indices=range(n_train),
            num_envs=config["data"]["num_envs"],
            split="train",
            seed=config["seed"],
            env_kwargs=train_kwargs,
            out=out / "data" / f"demonstrations-{name}.jsonl",
            resume=True,
            progress=progress,
        )
    gc.collect()

    # 2. Every algorithm from the same buffer, each from a fresh base policy.
    fits: dict[str, dict[str, Any]] = {}
    trained = [m for m in config["methods"]["run"] if m != "zero-shot"]
    for index, name in enumerate(trained, start=1):
        say(f"[2/4] fitting {name} ({index}/{len(trained)})")
        fits[name] = fit_method(name, config, buffer, out / "methods" / name)
        if fits[name]["status"] == "skipped":
            say(f"      skipped: {fits[name]['reason']}")

    # 3. Every method on the same held-out tasks, simulator and seeds.
    evals: dict[str, dict[str, float]] = {}
    for name in config["methods"]["run"]:
        if name != "zero-shot" and fits[name]["status"] != "trained":
            continue
        say(f"[3/4] evaluating {name}")
        agent = (
            build_policy(config, evaluation=True)
            if name == "zero-shot"
            else _trained_policy(out / "methods" / name, config)
        )
        evals[name] = _evaluate(name, agent, config, out, progress)
        del agent
        gc.collect()

    # 4. The report.
    test_tasks = env_kwargs(config, "test")["tasks"][: config["eval"]["test_tasks"]]
    results = {
        "name": config["name"],
        "config": dict(config),
        "seeds": {"comparison": config["seed"], "collect": config["seed"], "eval": config["seed"]},
        "task_sets": {
            "train": {"tasks": n_train, "sha256": task_set_hash(train_kwargs["tasks"][:n_train])},
            "test": {"tasks": len(test_tasks), "sha256": task_set_hash(test_tasks)},
        },
        "demonstrations": list(config["data"]["demonstrations"]),
        "buffer": {
            "episodes": len(buffer),
            "mean_reward": sum(t.reward for t in buffer) / max(1, len(buffer)),
            "success_rate": sum(t.success for t in buffer) / max(1, len(buffer)),
        },
        "methods": {
            name: {"eval": evals.get(name), "fit": fits.get(name)}
            for name in config["methods"]["run"]
        },
        "seconds": round(time.perf_counter() - started, 1),
    }
    say("[4/4] writing the report")
    write_report(results, out)
    return json.loads((out / "results.json").read_text())


def _claim(out: Path, config: Mapping[str, Any]) -> None:
    """Record the config of a run folder; refuse to resume a run of another config."""
    path = out / "config.json"
    text = json.dumps(config, indent=2, sort_keys=True)
    if path.exists() and path.read_text() != text + "\n":
        raise ValueError(
            f"{out} holds a run of another config ({path}); use a new --out folder, or "
            "delete it to start over"
        )
    path.write_text(text + "\n")
