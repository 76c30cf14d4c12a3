"""Batched rollouts: many environments in lockstep, one agent call per step for all.

The speed comes from batching: a local model generates for every active episode in one
call. Finished episodes are appended to the output file as they end, so a crash loses
nothing and ``resume=True`` carries on where the file stops.

Under ``accelerate launch`` or ``torchrun`` (several processes), ``shard="auto"`` splits
the planned episodes across the processes: each plays its share into its own part file
(:func:`part_path`), the main process folds the parts into the output file in plan order
(:func:`merge_parts`), and every process gets the whole buffer back.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from tqdm.auto import tqdm

from agents.base import Agent, PrivilegedAgent
from agents.description import describe_agent, description_differences
from agents.prompts import prompt_for, with_system_prompt
from sweetrl_gym.jsonl_files import drop_truncated_tail
from sweetrl_gym.processes import process_state
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer, Turn, append_jsonl

__all__ = ["Episode", "collect", "merge_parts", "part_path", "plan_episodes"]


@dataclass(frozen=True)
class Episode:
    """One planned episode of a collection.

    Attributes:
        index: Position in the plan (and in the returned buffer).
        task_index: Index of the task in the environment's task list.
        sample: Which repeat of the task this is (``0 .. samples_per_task - 1``).
        seed: The seed passed to ``env.reset``.

    """

    index: int
    task_index: int
    sample: int
    seed: int


def plan_episodes(
    num_tasks_available: int,
    num_episodes: int | None = None,
    *,
    task_indices: Sequence[int] | None = None,
    samples_per_task: int = 1,
    seed: int = 0,
) -> list[Episode]:
    """Decide which task each episode plays, deterministically from ``seed``.

    Repeats follow the official best-of-k layout: repeat ``j`` of the ``i``-th task is
    episode ``num_tasks * j + i``.

    Args:
        num_tasks_available: Tasks in the environment.
        num_episodes: Episodes wanted. Without ``task_indices``, tasks are drawn without
            replacement (shuffled by ``seed``) to cover them; with it, at most this many
            of the planned episodes are kept.
        task_indices: Play exactly these tasks (each ``samples_per_task`` times).
        samples_per_task: Episodes per task.
        seed: Seeds the task draw and each episode's reset seed.

    Raises:
        ValueError: For counts out of range or task indices outside the task list.

    """
    if samples_per_task < 1:
        raise ValueError(f"samples_per_task must be at least 1, got {samples_per_task}")
    if num_tasks_available < 1:
        raise ValueError("the environment has no tasks")
    if task_indices is not None:
        tasks = [int(i) for i in task_indices]
        bad = [i for i in tasks if not 0 <= i < num_tasks_available]
        if bad:
            raise ValueError(f"task_indices out of range 0..{num_tasks_available - 1}: {bad[:5]}")
    elif num_episodes is None:
        raise ValueError("give num_episodes or task_indices")
    else:
        if num_episodes < 1:
            raise ValueError(f"num_episodes must be at least 1, got {num_episodes}")
        wanted = math.ceil(num_episodes / samples_per_task)
        rng = np.random.default_rng(seed)
        order: list[int] = []
        while len(order) < wanted:  # more tasks wanted than exist: a fresh shuffle each pass
            order += rng.permutation(num_tasks_available).tolist()
        tasks = order[:wanted]
    plan = [
        Episode(
            index=len(tasks) * j + i,
            task_index=task,
            sample=j,
            seed=seed * 1_000_003 + len(tasks) * j + i,
        )
        for j in range(samples_per_task)
        for i, task in enumerate(tasks)
    ]
    return plan if num_episodes is None else plan[:num_episodes]


@dataclass
class _Slot:
    """One environment and the episode it is playing."""

    env: gym.Env
    episode: Episode | None = None
    info: dict[str, Any] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)


def collect(
    env_id_or_envs: str | gym.Env | Sequence[gym.Env],
    agent: Agent | PrivilegedAgent,
    num_episodes: int | None = None,
    *,
    num_envs: int = 8,
    split: str = "train",
    task_indices: Sequence[int] | None = None,
    samples_per_task: int = 1,
    seed: int = 0,
    out: str | Path | None = None,
    resume: bool = False,
    env_kwargs: Mapping[str, Any] | None = None,
    progress: bool = True,
    shard: tuple[int, int] | Literal["auto"] | None = None,
) -> TrajectoryBuffer:
    """Play episodes with ``agent``, many environments at once, into a buffer.

    Each step, the agent gets one batch with the conversation of every active episode
    and answers all of them in one call; the environments then step in parallel
    threads (simulator calls and sandboxed tests overlap). A finished episode's slot
    starts the next planned episode at once, so batches stay full. An agent with a
    ``prefix_caching()`` context (:class:`~agents.TransformersAgent`) keeps it open for
    the whole collection: each turn then computes only the tokens new since the
    conversation's previous turn.

    Each conversation starts with the environment's agent prompt as a system message
    (``env.unwrapped.agent_prompt``), unless the agent's ``own_system_prompt`` attribute
    is true (it brings its own; see :mod:`agents.prompts`); the recorded turns hold the
    messages as the environment has them, without it. Only agents whose ``privileged``
    attribute is true receive the episodes' ``info["reference"]``. Agents whose
    ``seeded_per_episode`` attribute is true also get ``seeds=``, each conversation's
    episode seed, so that their own random choices, and so the episodes, depend only on
    ``seed`` and the plan (not on ``num_envs`` or a resume; :class:`~agents.RandomAgent`
    does this). The agent's ``last_prompts`` (the exact formatted prompts, when it
    reports them) are recorded as each turn's ``prompt``, and its ``last_logprobs`` (the
    behaviour log-probs a server returned) as ``logprob``.

    Args:
        env_id_or_envs: A registered id (``"ColBench-Backend-v0"``), or environments
            already made (all on the same task list).
        agent: Any :class:`~agents.base.Agent`.
        num_episodes: Episodes to play (see :func:`plan_episodes`).
        num_envs: Environments made from an id (ignored when environments are given);
            never more than there are episodes left to play.
        split: The split of environments made from an id.
        task_indices: Play exactly these tasks.
        samples_per_task: Episodes per task (best-of-k data).
        seed: Seeds the task draw and the resets; the same arguments give the same plan.
        out: A ``.jsonl`` file: each finished episode is appended as it ends.
        resume: Continue the collection whose episodes ``out`` already holds (it must
            come from the same plan); otherwise an existing ``out`` is an error.
        env_kwargs: Extra keyword arguments for ``gym.make``.
        progress: Show a progress bar.
        shard: Split the episodes across processes. ``"auto"``: the processes of this
            ``accelerate``/``torchrun`` run (``accelerate.PartialState``), every one of
            which must make the same call: each plays its share, the main process
            merges the shares into ``out`` in plan order (without ``out`` they are
            gathered over ``torch.distributed``), and every process returns the whole
            buffer; one process collects as without ``shard``. ``(index, count)``:
            play only the share of process ``index`` of ``count`` -- every
            ``count``-th episode, from ``index``, of those ``out`` does not hold yet
            -- into its own part file (:func:`part_path`), leaving ``out`` as it is;
            :func:`merge_parts` folds the parts into ``out``. ``out`` must be on a
            file system that every process sees.

    Returns:
        The episodes in plan order (those read back from ``out`` on resume included).
        With ``shard=(index, count)``: those of ``out`` and this process's share.

    Raises:
        FileExistsError: If ``out`` (or a part file of it) exists and ``resume`` is
            false.
        ValueError: For a bad plan or shard, or an ``out`` file from a different plan.
        TypeError: If the agent does not reply with one string per conversation.

    """
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"agent must have an act(batch) method, got {type(agent).__name__}")
    run = functools.partial(
        _collect,
        env_id_or_envs,
        agent,
        num_episodes,
        num_envs=num_envs,
        split=split,
        task_indices=task_indices,
        samples_per_task=samples_per_task,
        seed=seed,
        out=out,
        env_kwargs=env_kwargs,
    )
    if shard == "auto":
        return _collect_on_processes(run, out, resume, progress)
    return run(resume=resume, progress=progress, shard=_check_shard(shard))


def part_path(out: str | Path, index: int) -> Path:
    """Return the file where process ``index`` appends its share of the episodes of ``out``.

    ``data/train.jsonl`` -> ``data/train.part3.jsonl`` for process 3.
    """
    path = Path(out)
    return path.with_name(f"{path.stem}.part{int(index)}{path.suffix}")


def merge_parts(out: str | Path) -> int:
    """Fold the part files of ``out`` (see :func:`part_path`) into ``out``; delete them.

    The episodes of ``out`` and of every part file are written back to ``out`` in plan
    order (``metadata["episode"]``), each once; ``out`` is replaced in one move, so a
    crash leaves either the old file and the parts or the merged file. Without part
    files nothing is touched. Call it from one process while no other writes.

    Args:
        out: The collection's ``.jsonl`` file (it need not exist yet).

    Returns:
        The number of part files merged.

    Raises:
        ValueError: If an episode has no integer ``metadata["episode"]``.

    """
    path = Path(out)
    parts = _part_files(path)
    if not parts:
        return 0
    episodes: dict[int, Trajectory] = {}
    for file in [path, *parts]:
        if not file.exists():
            continue
        drop_truncated_tail(file)  # a crash mid-write leaves a partial last line
        for trajectory in TrajectoryBuffer.load(file):
            index = trajectory.metadata.get("episode")
            if isinstance(index, bool) or not isinstance(index, int):
                raise ValueError(f"{file} holds an episode without its plan index (episode)")
            episodes.setdefault(index, trajectory)
    TrajectoryBuffer(episodes[i] for i in sorted(episodes)).save(path)
    for file in parts:
        file.unlink()
    return len(parts)


def _part_files(out: Path) -> list[Path]:
    if not out.parent.is_dir():
        return []
    pattern = re.compile(rf"{re.escape(out.stem)}\.part\d+{re.escape(out.suffix)}")
    return sorted(p for p in out.parent.iterdir() if pattern.fullmatch(p.name))


def _check_shard(shard: object) -> tuple[int, int] | None:
    if shard is None:
        return None
    if (
        isinstance(shard, tuple)
        and len(shard) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in shard)
        and 0 <= shard[0] < shard[1]
    ):
        return shard
    raise ValueError(
        f"shard must be None, 'auto' or (index, count) with 0 <= index < count, got {shard!r}"
    )


def _collect_on_processes(
    run: functools.partial[TrajectoryBuffer], out: str | Path | None, resume: bool, progress: bool
) -> TrajectoryBuffer:
    """``shard="auto"``: every process plays its share; all get the whole buffer."""
    state = process_state()
    if state.num_processes == 1:
        return run(resume=resume, progress=progress, shard=None)
    shard = (state.process_index, state.num_processes)
    progress = progress and state.is_main_process
    if out is None:
        from accelerate.utils import gather_object

        mine = run(resume=False, progress=progress, shard=shard)
        everyone = gather_object([(t.metadata["episode"], t) for t in mine])
        return TrajectoryBuffer(t for _, t in sorted(everyone, key=lambda item: item[0]))
    path = Path(out)
    # Every process decides before any of them writes, so all raise or none.
    if not resume and (path.exists() or _part_files(path)):
        raise FileExistsError(
            f"{path} (or a part file of it) exists; pass resume=True to continue that "
            "collection, or another path"
        )
    # The parts of an interrupted run (perhaps with another process count) go into out
    # first, so that every process sees the same finished episodes and the same shares.
    if state.is_main_process:
        if path.exists():
            drop_truncated_tail(path)
        merge_parts(path)
    state.wait_for_everyone()
    run(resume=True, progress=progress, shard=shard)
    state.wait_for_everyone()
    if state.is_main_process:
        merge_parts(path)
    state.wait_for_everyone()
    return run(resume=True, progress=False, shard=None, play=False)


def _collect(
    env_id_or_envs: str | gym.Env | Sequence[gym.Env],
    agent: Agent | PrivilegedAgent,
    num_episodes: int | None,
    *,
    num_envs: int,
    split: str,
    task_indices: Sequence[int] | None,
    samples_per_task: int,
    seed: int,
    out: str | Path | None,
    env_kwargs: Mapping[str, Any] | None,
    resume: bool,
    progress: bool,
    shard: tuple[int, int] | None,
    play: bool = True,
) -> TrajectoryBuffer:
    """:func:`collect` in one process; ``play=False`` only reads ``out`` back (all done)."""
    envs, owned = _make_envs(env_id_or_envs, num_envs, split, env_kwargs)
    try:
        plan = plan_episodes(
            len(_task_list(envs[0])),
            num_episodes,
            task_indices=task_indices,
            samples_per_task=samples_per_task,
            seed=seed,
        )
        # Shared: other processes read out too; only the main one repairs it (merge_parts).
        shared = shard is not None or not play
        agent_description = describe_agent(agent)
        done = (
            {}
            if out is None
            else _read_finished(out, resume, plan, envs[0], agent_description, shared=shared)
        )
        todo = [episode for episode in plan if episode.index not in done]
        target = out
        if shard is not None:
            todo = todo[shard[0] :: shard[1]]
            if out is not None:
                target = part_path(out, shard[0])
                mine = _read_finished(target, resume, plan, envs[0], agent_description)
                done.update(mine)
                todo = [episode for episode in todo if episode.index not in mine]
        if not play:
            if todo:
                raise RuntimeError(f"{out} lacks {len(todo)} of the planned episodes")
        else:
            if isinstance(env_id_or_envs, str):  # no more environments than episodes left
                while len(owned) < min(num_envs, len(todo)):
                    owned.append(gym.make(env_id_or_envs, split=split, **dict(env_kwargs or {})))
                envs = owned
            with _Writer(target) as writer:
                name = _env_name(env_id_or_envs)
                done.update(_run(envs, agent, todo, writer, progress, name, agent_description))
    finally:
        for env in owned:
            env.close()
    return TrajectoryBuffer(done[i] for i in sorted(done))


def _run(
    envs: list[gym.Env],
    agent: Agent | PrivilegedAgent,
    todo: list[Episode],
    writer: _Writer,
    progress: bool,
    env_name: str,
    agent_description: dict[str, Any],
) -> dict[int, Trajectory]:
    queue = list(reversed(todo))
    slots = [_Slot(env) for env in envs[: len(todo)]]
    finished: dict[int, Trajectory] = {}
    privileged = bool(getattr(agent, "privileged", False))
    seeded = bool(getattr(agent, "seeded_per_episode", False))
    system_prompt = prompt_for(agent, envs[0])  # the env's, unless the agent has its own
    bar = tqdm(total=len(todo), desc="episodes", unit="ep", disable=not progress)
    # Each turn resends the whole conversation: an agent that can keep the states of what
    # it has already read (TransformersAgent.prefix_caching) computes only the new tokens.
    caching = getattr(agent, "prefix_caching", None)
    with (
        caching() if callable(caching) else contextlib.nullcontext(),
        ThreadPoolExecutor(max_workers=max(1, len(slots))) as pool,
    ):
        for slot in slots:
            _start(slot, queue.pop())
        while any(slot.episode is not None for slot in slots):
            active = [slot for slot in slots if slot.episode is not None]
            batch = [with_system_prompt(slot.info["messages"], system_prompt) for slot in active]
            # An agent with its own randomness draws it from each episode's seed: the
            # episodes then do not depend on num_envs, batch order or a resume.
            seeds = {"seeds": [slot.episode.seed for slot in active]} if seeded else {}
            if privileged:
                replies = agent.act(batch, [slot.info["reference"] for slot in active], **seeds)
            else:
                replies = agent.act(batch, **seeds)
            _check_replies(replies, len(batch), agent)
            prompts = _per_reply(agent, "last_prompts", len(batch))
            logprobs = _per_reply(agent, "last_logprobs", len(batch))
            steps = list(pool.map(lambda s, a: s.env.step(a), active, replies))
            for slot, action, prompt, logprob, step in zip(
                active, replies, prompts, logprobs, steps
            ):
                _, reward, terminated, truncated, info = step
                slot.turns.append(
                    Turn(
                        messages=[dict(m) for m in slot.info["messages"]],
                        action=action,
                        prompt=prompt,
                        reward=float(reward),
                        done=bool(terminated or truncated),
                        logprob=logprob,
                    )
                )
                slot.info = info
                if terminated or truncated:
                    trajectory = _trajectory(slot, env_name, agent_description)
                    writer.write(trajectory)
                    finished[slot.episode.index] = trajectory
                    bar.update(1)
                    rate = np.mean([t.success for t in finished.values()])
                    bar.set_postfix(success=f"{rate:.1%}", refresh=False)
                    slot.episode = None
                    if queue:
                        _start(slot, queue.pop())
    bar.close()
    return finished


def _start(slot: _Slot, episode: Episode) -> None:
    _, info = slot.env.reset(seed=episode.seed, options={"task_index": episode.task_index})
    slot.episode, slot.info, slot.turns = episode, info, []


def _trajectory(slot: _Slot, env_name: str, agent_description: dict[str, Any]) -> Trajectory:
    info, episode = slot.info, slot.episode
    final = slot.turns[-1]
    metadata = {
        "episode": episode.index,
        "task_index": episode.task_index,
        "sample": episode.sample,
        "seed": episode.seed,
        "env": env_name,
        "agent": agent_description,
    }
    for key in ("tests_passed", "tests_total", "turn_limit_reached", "similarity"):
        if key in info:
            metadata[key] = info[key]
    return Trajectory(
        task_id=str(info["task_id"]),
        turns=slot.turns,
        messages=[dict(m) for m in info["messages"]],
        reward=final.reward,
        success=bool(info.get("success", final.reward >= 1.0)),
        answer=str(info.get("answer", "")),
        reference=dict(info.get("reference") or {}),
        metadata=metadata,
    )


def _per_reply(agent: object, name: str, expected: int) -> list[Any]:
    """Return the agent's per-reply record ``name`` of its last ``act`` (else ``None`` each)."""
    values = getattr(agent, name, None)
    if not isinstance(values, list) or len(values) != expected:
        return [None] * expected
    return values


def _check_replies(replies: Any, expected: int, agent: object) -> None:
    name = type(agent).__name__
    if not isinstance(replies, list | tuple) or len(replies) != expected:
        got = len(replies) if isinstance(replies, list | tuple) else type(replies).__name__
        raise TypeError(f"{name}.act must return a list of {expected} strings, got {got}")
    bad = [i for i, reply in enumerate(replies) if not isinstance(reply, str)]
    if bad:
        raise TypeError(
            f"{name}.act returned a non-str reply for conversation {bad[0]}: "
            f"{type(replies[bad[0]]).__name__}"
        )


def _make_envs(
    source: str | gym.Env | Sequence[gym.Env],
    num_envs: int,
    split: str,
    env_kwargs: Mapping[str, Any] | None,
) -> tuple[list[gym.Env], list[gym.Env]]:
    if isinstance(source, str):
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}")
        # One for the task list; the caller makes the others when it knows how many it needs.
        envs = [gym.make(source, split=split, **dict(env_kwargs or {}))]
        return envs, envs
    envs = [source] if isinstance(source, gym.Env) else list(source)
    if not envs or not all(isinstance(env, gym.Env) for env in envs):
        raise TypeError("env_id_or_envs must be an env id, an env, or a list of envs")
    if env_kwargs:
        raise ValueError("env_kwargs only apply when an env id is given")
    tasks = [_task_list(env) for env in envs]
    if any(t is not tasks[0] and t != tasks[0] for t in tasks[1:]):
        raise ValueError("all environments must play the same task list")
    return envs, []


def _task_list(env: gym.Env) -> Sequence[Any]:
    tasks = getattr(env.unwrapped, "tasks", None)
    if tasks is None:
        raise TypeError(f"{env.unwrapped!r} has no task list: collect needs ColBench envs")
    return tasks


def _env_name(source: object) -> str:
    if isinstance(source, str):
        return source
    env = source if isinstance(source, gym.Env) else next(iter(source))  # type: ignore[call-overload]
    # The unwrapped env's spec: wrappers deep-copy theirs, which fails on unpicklable
    # kwargs such as a simulator holding a lock.
    spec = getattr(env.unwrapped, "spec", None)
    return spec.id if spec is not None else type(env.unwrapped).__name__


def _read_finished(
    out: str | Path,
    resume: bool,
    plan: list[Episode],
    env: gym.Env,
    agent_description: dict[str, Any],
    *,
    shared: bool = False,
) -> dict[int, Trajectory]:
    """Read the finished episodes of ``out``; ``shared``: other processes read it too."""
    path = Path(out)
    if path.suffix == ".gz":
        raise ValueError(
            f"out must be a plain .jsonl file (episodes are appended as they end): {path}; "
            "compress afterwards with TrajectoryBuffer.save('....jsonl.gz')"
        )
    if not path.exists():
        return {}
    if not resume:
        raise FileExistsError(
            f"{path} exists; pass resume=True to continue that collection, or another path"
        )
    if not shared:
        drop_truncated_tail(path)
    by_index = {episode.index: episode for episode in plan}
    tasks = _task_list(env)
    finished = {}
    for trajectory in TrajectoryBuffer.load(path):
        index = trajectory.metadata.get("episode")
        episode = by_index.get(index) if isinstance(index, int) else None
        if episode is None or tasks[episode.task_index].task_id != trajectory.task_id:
            raise ValueError(
                f"{path} holds episode {index} of task {trajectory.task_id!r}, which this "
                "plan does not have: resume with the same arguments (tasks, num_episodes, "
                "samples_per_task, seed) or write to another file"
            )
        if index in finished:  # two writers once appended the same episodes to one file
            raise ValueError(
                f"{path} holds episode {index} twice: it was written by two processes that "
                "each took itself for the only one; delete it and collect again"
            )
        recorded = trajectory.metadata.get("agent")
        if isinstance(recorded, dict) and recorded != agent_description:
            raise ValueError(
                f"{path} holds episodes of another agent or other settings ("
                + "; ".join(description_differences(recorded, agent_description))
                + "): resume with the same agent, or write to another file"
            )
        finished[index] = trajectory
    return finished


class _Writer:
    """Appends finished episodes to ``out`` (if any), flushed one by one."""

    def __init__(self, out: str | Path | None):
        self._path = None if out is None else Path(out)
        self._file = None

    def __enter__(self) -> _Writer:
        return self

    def write(self, trajectory: Trajectory) -> None:
        if self._path is None:
            return
        if self._file is None:  # opened on the first episode: no empty files
            self._path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self._path.open("a", encoding="utf-8")
        append_jsonl(self._file, trajectory)

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
