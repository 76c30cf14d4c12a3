"""Compare algorithms fairly: one buffer, the same held-out tasks, simulator and seeds.

``sweetrl compare --config NAME --out DIR`` runs :func:`run_comparison`, which reads top to
bottom: make the environment -> collect training data with the base policy (k samples
per task), or read the trajectory file ``data.trajectories`` names -> fit every algorithm
from that same buffer, each from a fresh copy of the base policy -> evaluate each (and
the untrained base policy, "zero-shot") on the same held-out tasks with the same
simulator and seeds -> write ``results.md`` (the paper's metrics with 95% confidence
intervals), ``results.json`` (versions, config, seeds, task-set hashes, where the
training data came from), plots and TensorBoard runs.

Resumable: every stage writes its output under ``DIR`` as it goes, and a finished stage
is not redone (episodes already collected or evaluated are kept; an interrupted
training run continues from its last checkpoint). Run the same command again.

Several processes (``accelerate launch ... -m benchmarks.cli compare``): the episodes of
every collection and evaluation are split across the processes and merged in plan order
(``agents.collect(..., shard="auto")``), every process takes part in every fit (training
is collective), and only the main process writes ``config.json``, ``fit.json``, the
metrics and the report; the others wait for it where they read them.
"""

from __future__ import annotations

import difflib
import gc
import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sweetrl_gym  # noqa: F401 - registers the environments
from benchmarks.harness.experiment_config import ComparisonConfig, EnvConfig
from benchmarks.harness.folder_lock import folder_lock
from benchmarks.harness.outcomes import episode_outcomes
from benchmarks.harness.policies import (
    WARM_START,
    WARM_START_ALGORITHM,
    ZERO_SHOT,
    base_policy,
    build_policy,
    saved_policy,
    scripted_agent,
    system_prompt,
)
from benchmarks.harness.serving import generation, model_source, served_folder
from benchmarks.harness.stage_times import read_stage_times, timed_stage
from sweetrl_gym import TrajectoryBuffer
from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.processes import process_state

if TYPE_CHECKING:
    from agents import TransformersAgent
    from agents.statistics import PairedDifference
    from sweetrl_gym.similarity import Similarity

__all__ = [
    "TrainingFile",
    "build_simulator",
    "check_simulator",
    "check_training_settings",
    "default_methods",
    "env_kwargs",
    "env_similarity",
    "evaluate_method",
    "fit_method",
    "method_names",
    "read_training_file",
    "run_comparison",
    "settings_of",
    "task_set_hash",
    "with_new_defaults",
]

_FRONTEND = "ColBench-Frontend-v0"


def _base(config: ComparisonConfig, out: Path) -> tuple[TransformersAgent, str | Path | None]:
    """Return a fresh base policy (:func:`base_policy`), and what a server loads to serve it."""
    if config.warm_start.demonstrator:
        source = served_folder(out / "methods" / WARM_START / "model")
    else:
        source = model_source(config)
    return base_policy(config, out), source


def _server_log(out: Path, stage: str) -> Path:
    return out / "servers" / f"{stage}.log"


def env_kwargs(config: ComparisonConfig, split: str) -> dict[str, Any]:
    """Return the ``gym.make`` keyword arguments of the config's environment for ``split``."""
    env = config.env
    kwargs: dict[str, Any] = {"max_turns": env.max_turns, "tasks": _tasks(config, split)}
    if env.turn_notice:
        kwargs["turn_notice"] = True
    if env.scoring != "ours":
        kwargs["scoring"] = env.scoring
    if env.id == _FRONTEND:
        # Three pages a lockstep environment (target, latest, previous) stay rendered.
        num_envs = (config.data if split == "train" else config.eval).num_envs
        kwargs["render_cache"] = 3 * num_envs
        kwargs["similarity"] = env.similarity
        if env.answer != "final_message":
            kwargs["answer"] = env.answer
        if env.clip_model:
            kwargs["clip_model"] = env.clip_model
    if env.simulator == "openai":
        kwargs["simulator"] = build_simulator(config)
    return kwargs


def _task_source(config: ComparisonConfig, split: str) -> str:
    """Return where the config's tasks of ``split`` come from (``"bundled"`` or a path)."""
    env = config.env
    return env.test_tasks if split == "test" and env.test_tasks else env.tasks


def _tasks(config: ComparisonConfig, split: str) -> list[Any]:
    """Return the config's tasks of ``split`` (env.tasks / env.test_tasks, filtered)."""
    env, source = config.env, _task_source(config, split)
    if env.id == _FRONTEND:
        from sweetrl_gym.tasks import load_frontend_tasks

        return load_frontend_tasks(source, split=split)
    from sweetrl_gym.tasks import load_backend_tasks

    difficulty = tuple(env.difficulty) or None
    families = env.families or None
    return load_backend_tasks(source, split=split, difficulty=difficulty, families=families)


def _check_task_files(config: ComparisonConfig, splits: Iterable[str]) -> None:
    """Read the task files of ``splits`` now: a missing or malformed one fails before any work.

    Raises:
        FileNotFoundError: Naming the path and the official file it stands for.
        TaskFormatError: Naming the file, line and field of a bad record.

    """
    for split in splits:
        if _task_source(config, split) != "bundled":  # the bundled tasks cannot be bad
            _tasks(config, split)
    if "train" in splits:
        _training_tasks_left(config, len(_tasks(config, "train")))


def _training_tasks_left(config: ComparisonConfig, count: int) -> int:
    """Return how many of the ``count`` training tasks are left after the warm start's.

    Raises:
        ValueError: If the warm start takes them all, saying what to change: the
            bundled tasks' filters, or the task file.

    """
    taken = config.warm_start.tasks if config.warm_start.demonstrator else 0
    if count - taken >= 1:
        return count - taken
    source = _task_source(config, "train")
    more = (
        "widen env.difficulty / env.families"
        if source == "bundled"
        else f"give more tasks than {source} holds"
    )
    raise ValueError(
        f"the warm start uses all {count} training tasks (warm_start.tasks = {taken}), "
        f"leaving none to collect on: lower warm_start.tasks or {more}"
    )


def build_simulator(config: ComparisonConfig) -> Any:
    """Return the config's simulated human on a server (``env.simulator = "openai"``).

    Returns:
        An :class:`~sweetrl_gym.simulators.OpenAISimulator` (Frontend:
        :class:`~sweetrl_gym.simulators.OpenAIVisionSimulator`) with the ``env.simulator_*``
        settings; ``None`` for the environment's offline default.

    Raises:
        FileNotFoundError: If ``env.simulator_prompt_file`` does not exist (naming the
            official file it should be a copy of).
        ValueError: If that file is not the official prompt (naming its placeholders).

    """
    env = config.env
    if env.simulator != "openai":
        return None
    from sweetrl_gym.lm import ChatClient
    from sweetrl_gym.simulators import (
        OpenAISimulator,
        OpenAIVisionSimulator,
        read_official_prompt,
    )

    frontend = env.id == _FRONTEND
    settings: dict[str, Any] = {
        "prompt_format": env.simulator_prompt_format,
        "on_error": env.simulator_on_error,
    }
    if env.simulator_prompt_file:
        kind = "frontend" if frontend else "backend"
        settings["prompt"] = read_official_prompt(env.simulator_prompt_file, kind)
    if env.simulator_max_tokens:
        settings["max_tokens"] = env.simulator_max_tokens
    client = ChatClient(
        env.simulator_base_url, env.simulator_model, timeout_s=env.simulator_timeout_s
    )
    return (OpenAIVisionSimulator if frontend else OpenAISimulator)(client, **settings)


def check_simulator(config: ComparisonConfig) -> None:
    """Before any work, build the config's simulated human and send its server one short chat.

    A human endpoint that is down or refuses (wrong URL, model or key) would otherwise
    fail the first episode, or, with ``env.simulator_on_error = "no_response"``, answer
    "No response." for a whole run. One retry; nothing when the human is offline.

    Raises:
        SimulatorError: Naming the endpoint and the model, with the server's error.
        FileNotFoundError, ValueError: As :func:`build_simulator`.

    """
    simulator = build_simulator(config)
    if simulator is None:
        return
    from sweetrl_gym.lm import ChatAPIError, ChatClient
    from sweetrl_gym.simulators import SimulatorError

    client = simulator.client
    probe = ChatClient(client.base_url, client.model, timeout_s=client.timeout_s, max_retries=1)
    try:
        probe.complete([{"role": "user", "content": "Reply OK."}], temperature=0.0, max_tokens=1)
    except ChatAPIError as err:
        raise SimulatorError(
            f"the simulated human at {client.base_url} (model {client.model!r}; "
            "env.simulator_base_url, env.simulator_model) does not answer, so nothing was "
            f"started: {err}"
        ) from err


def task_set_hash(tasks: list[Any]) -> str:
    """Return a sha256 over the tasks' ids, requests and references (order matters)."""
    digest = hashlib.sha256()
    for task in tasks:
        for part in (task.task_id, task.problem_description, task.ground_truth):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class TrainingFile:
    """The trajectory file a comparison trains on (``data.trajectories``), read and checked.

    Attributes:
        buffer: Its episodes, in file order (either format: ``TrajectoryBuffer.read``).
        tasks: Its tasks, in order of first appearance, as the task-set hash reads them.
        record: What ``results.json`` keeps under ``training_data``: ``source``
            (``"file"``), ``path`` (absolute), ``format`` (``"official"`` or
            ``"sweetrl-gym"``), ``sha256`` of the file's bytes, ``episodes``, ``tasks``.

    """

    buffer: TrajectoryBuffer
    tasks: list[Any]
    record: dict[str, Any]


def read_training_file(config: ComparisonConfig) -> TrainingFile | None:
    """Read the config's ``data.trajectories`` file whole and check it, before any work.

    Args:
        config: The whole comparison config.

    Returns:
        The file's episodes and record, or ``None`` when the config collects its data.

    Raises:
        FileNotFoundError: If the file does not exist (the message says how to get the
            published one).
        TrajectoryFormatError: Naming the file and line of a record in neither trajectory
            format, or malformed.
        ValueError: If the file holds no episode, or one of another environment than
            ``env.id`` or of a Backend task that lacks a field (naming file, line, field).

    """
    from types import SimpleNamespace

    from sweetrl_gym.official_data import missing_trajectory_file_hint
    from sweetrl_gym.trajectory import trajectory_file_format

    name = config.data.trajectories
    if not name:
        return None
    path = Path(name).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(
            f"data.trajectories: no file at {path} ({missing_trajectory_file_hint()})"
        )
    # Records the official simulation wrote carry no reward: scored here as the env scores.
    buffer = TrajectoryBuffer.read(path, scoring=config.env.answer_scoring)
    if not len(buffer):
        raise ValueError(f"data.trajectories: {path} holds no episodes")
    for index, trajectory in enumerate(buffer):
        problem = _not_an_episode_of(config.env.id, trajectory)
        if problem:
            raise ValueError(f"data.trajectories: {path}:{_line_of(path, index)}: {problem}")
    tasks = [
        SimpleNamespace(
            task_id=task_id,
            problem_description=str(group[0].reference.get("problem_description", "")),
            ground_truth=str(group[0].reference.get("ground_truth", "")),
        )
        for task_id, group in buffer.group_by_task().items()
    ]
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    record = {
        "source": "file",
        "path": str(path),
        "format": trajectory_file_format(path),
        "sha256": digest.hexdigest(),
        "episodes": len(buffer),
        "tasks": len(tasks),
    }
    return TrainingFile(buffer=buffer, tasks=tasks, record=record)


def _not_an_episode_of(env_id: str, trajectory: Any) -> str:
    """Say why an episode of a trajectory file cannot train for ``env_id`` (``""``: it can).

    Only Backend tasks have tests: an official record whose task is not a valid Backend
    task is read with its task as it is, so the Backend loader names what it lacks.
    """
    from sweetrl_gym.tasks import TaskFormatError, task_from_record

    has_tests = "test_cases" in trajectory.reference
    if env_id == _FRONTEND and has_tests:
        return f"a Backend episode (its task has test_cases), and env.id is {env_id}"
    if env_id == _FRONTEND or has_tests:
        return ""
    try:
        task_from_record(trajectory.task or trajectory.reference, where="its task")
    except TaskFormatError as err:
        return f"not a Backend episode: {err} (env.id is {env_id})"
    return f"not a Backend episode (env.id is {env_id})"  # pragma: no cover - has tests


def _line_of(path: Path, index: int) -> int:
    """Return the line number of the ``index``-th record (0-based) of a JSONL file."""
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        records = (number for number, line in enumerate(lines, start=1) if line.strip())
        return next(number for position, number in enumerate(records) if position == index)


def method_names(config: ComparisonConfig) -> list[str]:
    """Return the names the config's methods report under, in ``methods.run`` order.

    A method given by import path or entry point is imported here and goes by its class's
    ``name`` (its run folder ``methods/NAME``, its section ``[methods.NAME]``, its row);
    once imported, ``Algorithm.named(NAME)`` finds it.

    Raises:
        ValueError: If a method does not import or is not an algorithm
            (``sweetrl_gym.plugins.PluginError``), or two methods report under one name.

    """
    from algorithms import Algorithm

    names: dict[str, str] = {}
    for spec in config.methods.run or default_methods():
        if spec == ZERO_SHOT:
            name = spec
        else:
            try:
                name = Algorithm.named(spec).name
            except KeyError as err:
                raise ValueError(f"methods.run: {err.args[0]}") from None
        if name in names:
            raise ValueError(
                f"methods.run: {names[name]!r} and {spec!r} both report as {name!r}; "
                "run each method once (a class's `name` is its row)"
            )
        names[name] = spec
    return list(names)


def default_methods() -> list[str]:
    """Return what an empty ``methods.run`` runs: the base untrained, every installed method.

    Installed methods are the entry points of the ``sweetrl_gym.algorithms`` group (the
    built-in ones and other packages'), by name; controls (classes with ``controls``)
    are left out.
    """
    from algorithms import Algorithm
    from sweetrl_gym.plugins import ALGORITHM_GROUP, entry_point_names

    names = entry_point_names(ALGORITHM_GROUP)
    return [ZERO_SHOT, *(n for n in names if not Algorithm.named(n).controls)]


def check_training_settings(config: ComparisonConfig, names: Iterable[str] = ()) -> None:
    """Refuse unknown or invalid ``[training]``/``[methods.NAME]`` settings before any work.

    Every algorithm the config runs or configures is checked (a typo in
    ``[methods.archer]`` fails now even when ArCHer is not run), each by its own config
    class, plus the warm start. Methods given by import path are imported
    (:func:`method_names`).

    Args:
        config: The whole comparison config.
        names: Further algorithms to check (``sweetrl train --algo``); ``"zero-shot"``
            is skipped.

    Raises:
        ValueError: Naming the algorithm and the setting, a method that does not load, a
            control without the method it controls or with a section of its own.

    """
    from algorithms import Algorithm
    from sweetrl_gym.plugins import ALGORITHM_GROUP, entry_point_names

    run = method_names(config)
    try:
        extra = [Algorithm.named(name).name for name in names if name != ZERO_SHOT]
    except KeyError as err:
        raise ValueError(err.args[0]) from None
    sections = list(config.methods.settings)
    for section in sections:
        if section not in run and section not in extra:
            try:
                Algorithm.named(section)
            except KeyError:
                known = [*run, *extra, *entry_point_names(ALGORITHM_GROUP)]
                close = difflib.get_close_matches(section, known, n=1)
                hint = f"; did you mean [methods.{close[0]}]?" if close else ""
                raise ValueError(
                    f"[methods.{section}]: no method of that name runs or is installed{hint}"
                ) from None
        controlled = Algorithm.named(section).controls
        if controlled:
            raise ValueError(
                f"[methods.{section}]: a control trains with the settings of the method it "
                f"controls; set them in [methods.{controlled}]"
            )
    for name in run:
        controlled = name != ZERO_SHOT and Algorithm.named(name).controls
        if controlled and controlled not in run:
            raise ValueError(
                f"methods.run has {name!r}, a control of {controlled!r}: add {controlled!r}"
            )
    checks = [
        (name, f"[training] or [methods.{name}]", config.method_settings(settings_of(name)))
        for name in dict.fromkeys([*run, *sections, *extra])
        if name != ZERO_SHOT
    ]
    if config.warm_start.demonstrator:
        checks.append(
            (WARM_START_ALGORITHM, "[training] or [warm_start]", config.warm_start_settings())
        )
    for name, where, settings in checks:
        try:
            Algorithm.named(name).config_class().replace(**settings)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{where} settings: {err}") from err


def settings_of(name: str) -> str:
    """Return the method whose ``[methods.NAME]`` section sets ``name``'s settings.

    A control trains with the settings of the method it controls; every other method
    with its own.
    """
    from algorithms import Algorithm

    klass = Algorithm.named(name)
    return klass.controls or klass.name


def env_similarity(config: ComparisonConfig) -> Similarity | None:
    """Return how the config's environment scores a page against its target (``None``: Backend)."""
    from sweetrl_gym.similarity import make_similarity

    env = config.env
    if env.id != _FRONTEND:
        return None
    return make_similarity(env.similarity, clip_model=env.clip_model or None)


def fit_method(
    name: str,
    config: ComparisonConfig,
    buffer: TrajectoryBuffer,
    directory: Path,
    *,
    policy: TransformersAgent | None = None,
    settings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Train one algorithm from a fresh base policy; save it under ``directory/model``.

    Resumes an interrupted run (``directory/run`` holds its checkpoints); a finished one
    (``directory/fit.json`` exists) is not redone. Under several processes every one
    must call it (training and saving are collective); only the main process writes
    ``fit.json``.

    Args:
        name: The algorithm (``"rft"``, ``"sweet-rl"``, ``"bc"``, an import path
            ``package.module:Class``, ...: see ``Algorithm.named``).
        config: The whole comparison config.
        buffer: Its training data.
        directory: Where its run, model and ``fit.json`` go.
        policy: The policy to train (default: :func:`build_policy`'s raw model).
        settings: Its settings (default: ``[training]`` updated by ``[methods.NAME]``).

    Returns:
        ``{"status": "trained", "metrics": ..., "history": ..., "seconds": ...}`` (the
        fit's time, over every launch of an interrupted one), or
        ``{"status": "skipped", "reason": ...}`` when the buffer gives this algorithm
        nothing to learn from (``algorithms.NothingToFit``: no preference pairs, no
        successful episode).

    Raises:
        FileNotFoundError: If ``critic_model`` is a path that does not exist.
        Exception: Whatever else goes wrong in the fit (a failure, never a skip).

    """
    from agents.loading import resolve_model_source
    from algorithms import Algorithm, FitContext, NothingToFit

    state = process_state()
    record_path = directory / "fit.json"
    if record_path.exists():
        return json.loads(record_path.read_text())
    klass = Algorithm.named(name)
    if settings is None:
        settings = config.method_settings(settings_of(name))
    settings = {"seed": config.seed, **settings}
    if settings.get("critic_model"):  # a hub id or a local folder, as for policy.model
        settings["critic_model"] = resolve_model_source(
            str(settings["critic_model"]), f"[methods.{name}] critic_model"
        )
    run_dir = directory / "run"
    policy = build_policy(config) if policy is None else policy
    algorithm = klass(policy, output_dir=str(run_dir), **settings)
    controlled = directory.parent / klass.controls if klass.controls else None
    context = FitContext(
        buffer=buffer,
        directory=directory,
        seed=config.seed,
        similarity=env_similarity(config),
        source=controlled,
    )
    start = time.perf_counter()
    fitting = 0.0
    try:
        algorithm.prepare(context)
        # resume=True: continue an interrupted run, or start one (the same on every
        # process, whichever of them sees run/ first).
        fit_start = time.perf_counter()
        metrics = algorithm.fit(buffer, resume=True)
        fitting = time.perf_counter() - fit_start
    except NothingToFit as err:
        # No signal in the data for this method (e.g. no pair, no success): say so. Any
        # other error is a failure, and stops the comparison.
        record: dict[str, Any] = {"status": "skipped", "reason": str(err)}
    else:
        algorithm.save(directory / "model")  # collective: gathers sharded weights
        # fit_seconds spans every launch of a fit that was interrupted and resumed;
        # preparing and saving are this launch's.
        outside_fit = time.perf_counter() - start - fitting
        record = {
            "status": "trained",
            "metrics": metrics,
            "history": [list(point) for point in algorithm.history],
            "seconds": round(algorithm.fit_seconds + outside_fit, 1),
        }
        diagnostics = algorithm.diagnose(context)  # every process: it may be collective
        if diagnostics is not None:
            record["diagnostics"] = diagnostics.to_dict()
    record = {"label": klass.display_label(), "controls": klass.controls, **record}
    if state.is_main_process:
        directory.mkdir(parents=True, exist_ok=True)
        text = json.dumps(record, indent=2, default=float) + "\n"
        write_atomically(record_path, lambda path: path.write_text(text, "utf-8"))
    state.wait_for_everyone()
    del algorithm
    gc.collect()
    return record


def _eval_metrics(out: Path, name: str) -> Path:
    """Where a finished evaluation of ``name`` keeps its metrics (its marker of being done)."""
    return out / "eval" / f"{name}.metrics.json"


def evaluate_method(
    name: str, agent: Any, config: ComparisonConfig, out: Path, progress: bool
) -> dict[str, float]:
    """Evaluate ``agent`` on the config's held-out tasks into ``out/eval/NAME.jsonl``.

    Resumes a partial evaluation; a finished one (``NAME.metrics.json``) is read back.
    Collective under several processes (the episodes are split between them).
    """
    from agents import evaluate

    state = process_state()
    path = _eval_metrics(out, name)
    if path.exists():
        return json.loads(path.read_text())
    metrics = evaluate(
        agent,
        config.env.id,
        split="test",
        num_tasks=config.eval.test_tasks,
        samples_per_task=config.eval.samples_per_task,
        num_envs=config.eval.num_envs,
        seed=config.seed,
        env_kwargs=env_kwargs(config, "test"),
        out=out / "eval" / f"{name}.jsonl",
        resume=True,
        progress=progress,
        shard="auto",
    )
    if state.is_main_process:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(metrics, indent=2) + "\n")
    state.wait_for_everyone()
    return metrics


def run_comparison(
    config: ComparisonConfig | Mapping[str, Any], out: str | Path, *, progress: bool = True
) -> dict[str, Any]:
    """Run (or resume) the comparison the config describes; return ``results.json``'s data.

    Under several processes (``accelerate launch``, ``torchrun``) every process must call
    it: they share the episodes and the training; only the main process writes.

    Args:
        config: From :func:`benchmarks.harness.experiment_config.load_config`, or a dict
            of its :meth:`~benchmarks.harness.experiment_config.ComparisonConfig.to_dict`
            form (a run folder's ``config.json``), read with ``ComparisonConfig.from_dict``.
        out: The run's folder (created; an existing one is resumed). A folder that holds
            a run of another config is refused. Every process must see the same folder.
        progress: Show progress bars and stage lines (on the main process).

    Raises:
        ConfigError: If a dict given as ``config`` is not a valid config.
        ValueError: If ``out`` holds a run of a different config, or a training setting
            is invalid, or ``data.trajectories`` names a file with no episodes, one of
            the other environment, or another file than the run began with.
        TrajectoryFormatError: If ``data.trajectories`` is malformed (file and line).
        FileNotFoundError: If ``data.trajectories`` names no file.
        RuntimeError: If another comparison is running in ``out``.
        SimulatorError: If the simulated human's server does not answer
            (:func:`check_simulator`); a missing or wrong official prompt file raises
            as :func:`build_simulator` says. Both before anything is written.

    """
    if not isinstance(config, ComparisonConfig):
        config = ComparisonConfig.from_dict(config)
    if config.seeds:
        raise ValueError(
            f"the config lists seeds {config.seeds}: run them with "
            "benchmarks.harness.seeds.run_seeds (`sweetrl compare --seeds ...`), or one with "
            "seed_config(config, seed)"
        )
    out = Path(out)
    check_training_settings(config)
    check_simulator(config)  # a human endpoint that is down fails now, not mid-run
    system_prompt(config)  # and so does a missing policy.system_prompt_file
    # A trajectory file to train on is read whole and checked before the folder is touched,
    # and so are the task files the run reads (the training tasks only to collect).
    training_file = read_training_file(config)
    _check_task_files(config, ["test"] if training_file is not None else ["train", "test"])
    _release_memory()
    try:
        with folder_lock(out):  # a second launch on the folder would write every episode twice
            return _run_comparison(config, out, progress, training_file)
    finally:
        gc.unfreeze()  # the caller's process collects as before


def _release_memory() -> None:
    """Free what the last stage left (its models), then freeze what survives it.

    What survives a stage lives for the run: the libraries and the modules they import
    lazily, the task sets, the buffer. Every full collection (this one after each method
    and evaluation, accelerate's after each training stage) walks every tracked object,
    and those ~340k made one cost 0.2-0.6 s, a third of a smoke comparison; frozen, the
    walks skip them. :func:`run_comparison` unfreezes them when it returns. A model the
    caller still holds would be frozen too, out of reach of later collections: drop it
    first.
    """
    gc.collect()
    gc.freeze()


def _run_comparison(
    config: ComparisonConfig,
    out: Path,
    progress: bool,
    training_file: TrainingFile | None = None,
) -> dict[str, Any]:
    """:func:`run_comparison` in a folder this launch holds."""
    from benchmarks.harness.report import write_report

    state = process_state()
    resumed = _claim(out, _run_record(config))
    if training_file is not None:
        _claim_training_file(out, training_file.record)
    progress = progress and state.is_main_process
    say = print if progress else (lambda *_: None)
    started = time.perf_counter()

    # 0. The warm start (if any): clone a scripted demonstrator on the first training
    #    tasks; the clone is the base policy of everything that follows.
    warm = _warm_start(config, out, progress, say)
    _release_memory()  # the demonstrator's clone, if trained now
    offset = config.warm_start.tasks if warm is not None else 0

    # 1. Training data: the base policy, k samples per task, on the next training tasks
    #    (shard="auto": each process plays its share; all get the merged buffer), or the
    #    episodes of the data.trajectories file, read and checked before anything began.
    if training_file is not None:
        say(
            f"[1/4] training on the {len(training_file.buffer)} episodes of "
            f"{training_file.record['path']} (nothing collected)"
        )
        buffer, train_tasks = training_file.buffer, training_file.tasks
    else:
        buffer, train_tasks = _collect_training_data(config, out, offset, progress, say)

    # 2. Every algorithm from the same buffer, each from a fresh copy of the base policy.
    #    Every process trains (collective); the main process writes fit.json.
    #    The controls come last: they re-use what the method they control kept.
    from algorithms import Algorithm

    fits: dict[str, dict[str, Any]] = {}
    run = method_names(config)
    algorithms = [m for m in run if m != ZERO_SHOT]
    trained = sorted(algorithms, key=lambda m: bool(Algorithm.named(m).controls))
    for index, name in enumerate(trained, start=1):
        say(f"[2/4] fitting {name} ({index}/{len(trained)})")
        # Its samples (SWEET-RL's candidates, ArCHer's) come from the base: served, if
        # so configured, until training changes the weights.
        with generation(*_base(config, out), config, _server_log(out, name)) as policy:
            fits[name] = fit_method(name, config, buffer, out / "methods" / name, policy=policy)
        del policy  # the base policy's copy
        _release_memory()
        if fits[name]["status"] == "skipped":
            say(f"      skipped: {fits[name]['reason']}")

    # 3. Every method on the same held-out tasks, simulator and seeds (episodes split
    #    across the processes, each with its own copy of the policy): the raw model
    #    ("zero-shot"), the warm start, then the trained methods.
    evals: dict[str, dict[str, float]] = {}
    names = [m for m in run if m == ZERO_SHOT]
    names += [WARM_START] if warm is not None else []
    names += [m for m in trained if fits[m]["status"] == "trained"]
    # The raw model last: it matters least (the base is the reference) and, never
    # stopping on its own, it is the slowest to evaluate.
    for name in sorted(names, key=lambda n: n == ZERO_SHOT):
        say(f"[3/4] evaluating {name}")
        if name == ZERO_SHOT:
            agent, source = build_policy(config, evaluation=True), model_source(config)
        else:
            directory = out / "methods" / name / "model"
            agent = saved_policy(directory, config, evaluation=True)
            source = served_folder(directory)
        evaluated = _eval_metrics(out, name).exists()
        with (
            generation(agent, source, config, _server_log(out, f"eval-{name}")),
            timed_stage(out, f"eval/{name}", finished_before=evaluated),
        ):
            evals[name] = evaluate_method(name, agent, config, out, progress)
        del agent
        _release_memory()
    base = WARM_START if WARM_START in evals else ZERO_SHOT
    episodes = {name: TrajectoryBuffer.load(out / "eval" / f"{name}.jsonl") for name in names}
    versus = _versus_base(episodes, base, config.seed)

    # 4. The report (main process); the others read it back once it is written.
    test_tasks = env_kwargs(config, "test")["tasks"][: config.eval.test_tasks]
    methods: dict[str, Any] = {}
    for name in [*names, *[m for m in run if m not in names]]:
        fit = warm["fit"] if warm is not None and name == WARM_START else fits.get(name)
        paired = versus.get(name)
        methods[name] = {
            "eval": evals.get(name),
            "fit": fit,
            "versus_base": paired.to_record() if paired is not None else None,
        }
        if name in episodes:  # what pooling reads, kept where the episodes are not
            methods[name]["outcomes"] = episode_outcomes(episodes[name])
    results = {
        "name": config.name,
        "config": _run_record(config),
        "seeds": {
            "comparison": config.seed,
            **({} if training_file is not None else {"collect": config.seed}),
            "eval": config.seed,
        },
        "task_sets": {
            "train": {"tasks": len(train_tasks), "sha256": task_set_hash(train_tasks)},
            "test": {"tasks": len(test_tasks), "sha256": task_set_hash(test_tasks)},
        },
        # Which rules produced the Backend numbers ("ours" or "official", the paper's).
        "scoring": config.env.answer_scoring,
        "base": base,
        "warm_start": warm["summary"] if warm is not None else None,
        "demonstrations": list(config.data.demonstrations),
        # Where the training episodes came from: collected here, or a file (its hash).
        "training_data": (
            training_file.record if training_file is not None else {"source": "collected"}
        ),
        "buffer": {
            "episodes": len(buffer),
            "mean_reward": sum(t.reward for t in buffer) / max(1, len(buffer)),
            "success_rate": sum(t.success for t in buffer) / max(1, len(buffer)),
        },
        "methods": methods,
        "seconds": round(time.perf_counter() - started, 1),
        "resumed": resumed,
        "stage_seconds": read_stage_times(out),
        "processes": state.num_processes,
    }
    say("[4/4] writing the report")
    if state.is_main_process:
        write_report(results, out)
    state.wait_for_everyone()
    return json.loads((out / "results.json").read_text())


def _collect_training_data(
    config: ComparisonConfig, out: Path, offset: int, progress: bool, say: Any
) -> tuple[TrajectoryBuffer, list[Any]]:
    """Collect (or resume) the training episodes: the base policy's, then demonstrations.

    Returns:
        The buffer, and the training tasks it was collected on.

    """
    train_kwargs = env_kwargs(config, "train")
    available = _training_tasks_left(config, len(train_kwargs["tasks"]))
    n_train = min(config.data.train_tasks, available)
    train_indices = range(offset, offset + n_train)
    k = config.data.samples_per_task
    say(f"[1/4] collecting {n_train} tasks x {k} episodes with the base policy")
    path = out / "data" / "train.jsonl"
    with (
        generation(*_base(config, out), config, _server_log(out, "collect")) as policy,
        timed_stage(out, "collect/train", finished_before=_collected(path, n_train * k)),
    ):
        buffer = _collect_train(config, policy, train_indices, path, progress, k)
    for name in config.data.demonstrations:
        say(f"      adding {name} demonstrations on the same tasks")
        path = demonstrations_file(out, name)
        with timed_stage(out, f"collect/{name}", finished_before=_collected(path, n_train)):
            buffer = buffer + _collect_train(
                config, scripted_agent(name, config), train_indices, path, progress
            )
    del policy  # the base policy
    _release_memory()
    return buffer, train_kwargs["tasks"][offset : offset + n_train]


def demonstrations_file(out: Path, name: str) -> Path:
    """Return where a comparison keeps a scripted demonstrator's training episodes."""
    return out / "data" / f"demonstrations-{name}.jsonl"


def _warm_start(
    config: ComparisonConfig, out: Path, progress: bool, say: Any
) -> dict[str, Any] | None:
    """Collect the demonstrator's episodes and clone them (behaviour cloning); cached.

    Returns:
        ``None`` without a warm start; else ``{"fit": fit.json's record, "summary": the
        demonstrations' count and success rate}``.

    """
    section = config.warm_start
    if not section.demonstrator:
        return None
    count = min(section.tasks, len(env_kwargs(config, "train")["tasks"]))
    say(f"[0/4] warm start: {count} {section.demonstrator} demonstrations, then cloning")
    path = out / "data" / f"{WARM_START}-demonstrations.jsonl"
    with timed_stage(out, f"collect/{WARM_START}", finished_before=_collected(path, count)):
        demos = _collect_train(
            config, scripted_agent(section.demonstrator, config), range(count), path, progress
        )
    record = fit_method(
        WARM_START_ALGORITHM,
        config,
        demos,
        out / "methods" / WARM_START,
        settings=config.warm_start_settings(),
    )
    if record["status"] != "trained":
        raise ValueError(f"the warm start did not train: {record.get('reason')}")
    return {
        "fit": record,
        "summary": {
            "demonstrator": section.demonstrator,
            "ask_probability": section.ask_probability,
            "episodes": len(demos),
            "success_rate": sum(t.success for t in demos) / max(1, len(demos)),
        },
    }


def _collected(path: Path, episodes: int) -> bool:
    """Whether a collection's ``.jsonl`` file already holds all its planned episodes."""
    try:
        with path.open(encoding="utf-8") as lines:
            return sum(1 for line in lines if line.strip()) >= episodes
    except OSError:  # not collected yet
        return False


def _collect_train(
    config: ComparisonConfig,
    agent: Any,
    task_indices: range,
    path: Path,
    progress: bool,
    samples_per_task: int = 1,
) -> TrajectoryBuffer:
    """Play (or resume) episodes on training tasks, split across processes, kept in ``path``."""
    from agents import collect

    return collect(
        config.env.id,
        agent,
        task_indices=task_indices,
        samples_per_task=samples_per_task,
        num_envs=config.data.num_envs,
        split="train",
        seed=config.seed,
        env_kwargs=env_kwargs(config, "train"),
        out=path,
        resume=True,
        progress=progress,
        shard="auto",
    )


def _versus_base(
    episodes: Mapping[str, TrajectoryBuffer], base: str, seed: int
) -> dict[str, PairedDifference]:
    """Paired differences of each method's evaluation from the base's, on the same tasks."""
    from agents.statistics import paired_difference

    return {
        name: paired_difference(buffer, episodes[base], seed=seed)
        for name, buffer in episodes.items()
        if name != base
    }


def _run_record(config: ComparisonConfig) -> dict[str, Any]:
    """Return the config as one run's folder records it (``config.json``, ``results.json``).

    Its ``to_dict`` form without ``seeds``: one run is its ``seed`` alone.
    """
    return {key: value for key, value in config.to_dict().items() if key != "seeds"}


def _claim(out: Path, record: Mapping[str, Any]) -> bool:
    """Record the config of a run folder (:func:`_run_record`); refuse another config's run.

    A config that only adds methods to ``methods.run`` resumes the run: what is done
    stays, the new methods are fitted from the same buffer and evaluated on the same
    tasks. So does one that turns gradient checkpointing on or off (the memory a fit
    takes, not what it computes) or gives the simulated human's server more time
    (``env.simulator_timeout_s``). A folder written before a setting existed resumes too
    when the setting is at its default (:func:`with_new_defaults`). Every process checks
    before the main process writes, so all refuse or none does.

    Returns:
        Whether an earlier launch had claimed the folder (this one resumes its run).

    """
    state = process_state()
    path = out / "config.json"
    text = json.dumps(record, indent=2, sort_keys=True) + "\n"
    current = json.loads(text)  # as it reads back from the file (tuples become lists)
    written = json.loads(path.read_text()) if path.exists() else None
    stored = with_new_defaults(written) if written is not None else None
    if stored is not None and stored != current and not _resumable_change(stored, current):
        raise ValueError(
            f"{out} holds a run of another config ({path}); use a new --out folder, or "
            "delete it to start over"
        )
    state.wait_for_everyone()
    if state.is_main_process:
        out.mkdir(parents=True, exist_ok=True)
        if written != current:
            write_atomically(path, lambda target: target.write_text(text, "utf-8"))
    state.wait_for_everyone()
    return written is not None


def _claim_training_file(out: Path, record: Mapping[str, Any]) -> None:
    """Keep the trajectory file's hash in ``data/trajectories.json``; refuse a changed file.

    A resumed run must train its remaining methods on the episodes its first launch
    trained on: a file whose bytes changed since (its sha256) is refused.

    Raises:
        ValueError: If the folder's run began with a file of other content.

    """
    state = process_state()
    path = out / "data" / "trajectories.json"
    if path.exists():
        stored = json.loads(path.read_text())
        if stored.get("sha256") != record["sha256"]:
            raise ValueError(
                f"{record['path']} is not the file this run began with ({path}: sha256 "
                f"{stored.get('sha256')}, now {record['sha256']}); use a new --out folder"
            )
    state.wait_for_everyone()
    if state.is_main_process and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(dict(record), indent=2) + "\n"
        write_atomically(path, lambda target: target.write_text(text, "utf-8"))
    state.wait_for_everyone()


def with_new_defaults(stored: dict[str, Any]) -> dict[str, Any]:
    """Fill in the settings of its sections a stored config predates, at their defaults.

    A run folder written before a setting existed ran with what is now its default, so a
    newer version of the package resumes it instead of calling it another config.
    """
    defaults = json.loads(json.dumps(ComparisonConfig().to_dict()))  # as JSON reads it back
    return {
        key: {**defaults[key], **value}
        if isinstance(value, dict) and isinstance(defaults.get(key), dict)
        else value
        for key, value in stored.items()
    }


def _resumable_change(stored: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Whether ``current`` is ``stored`` with methods added or run-only settings changed.

    Methods only added to ``methods.run`` (none removed); run-only settings: the training
    settings that change how or in how much memory a fit runs, not what it computes
    (``TrainingConfig.RUN_ONLY_SETTINGS``: a run killed for memory resumes with gradient
    checkpointing on), and ``EnvConfig.RUN_ONLY_SETTINGS`` (a human whose server timed
    out resumes with a longer wait).
    """
    from algorithms import TrainingConfig

    before, after = stored["methods"]["run"], current["methods"]["run"]
    same_rest = {
        **stored,
        "methods": {**stored["methods"], "run": after},
        "training": _with_run_only(stored, current, "training", TrainingConfig),
        "env": _with_run_only(stored, current, "env", EnvConfig),
    }
    return set(before) <= set(after) and same_rest == current


def _with_run_only(
    stored: Mapping[str, Any], current: Mapping[str, Any], section: str, settings: Any
) -> dict[str, Any]:
    """Return ``stored``'s section with ``current``'s values of its run-only settings."""
    merged = dict(stored.get(section, {}))
    for key in settings.RUN_ONLY_SETTINGS:
        if key in current.get(section, {}):
            merged[key] = current[section][key]
    return merged
