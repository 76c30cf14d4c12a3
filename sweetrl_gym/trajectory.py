"""Episodes as training data: turns, trajectories and a buffer with JSONL in and out.

A :class:`Trajectory` is one episode: the task, the whole chat, and one :class:`Turn` per
agent message — the messages the agent saw, its action, the exact formatted prompt when
the agent reported it, and the reward. Turns keep their messages structured (OpenAI
format), so an algorithm can re-format every turn with its own policy's chat template:
data from any agent trains any policy.

Two file formats:

* our own JSONL (:meth:`TrajectoryBuffer.save` / :meth:`TrajectoryBuffer.load`), which
  keeps everything, reference and metadata included;
* the official sweet_rl JSONL (:meth:`TrajectoryBuffer.from_official_jsonl` /
  :meth:`TrajectoryBuffer.to_official_jsonl`): ``{"task", "dialogue_history", "answer",
  "reward"}`` per line, assistant messages carrying ``input`` (the formatted prompt) and
  ``output`` (the raw text). Reading and writing back gives the same records.

:meth:`TrajectoryBuffer.read` takes a file in either format (it looks at the first
record): what to call on a file a user hands in, such as the published offline data.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import math
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, overload

from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.setting_types import is_finite_number

__all__ = [
    "TRAJECTORY_FORMAT",
    "Trajectory",
    "TrajectoryBuffer",
    "TrajectoryFormatError",
    "Turn",
    "append_jsonl",
    "trajectory_file_format",
]

TRAJECTORY_FORMAT = "sweetrl-gym/trajectory/v1"
OWN_FILE, OFFICIAL_FILE = "sweetrl-gym", "official"  # what trajectory_file_format returns
_OFFICIAL_KEYS = ("task", "dialogue_history", "answer", "reward")
_MESSAGE_KEYS = ("role", "content")
_OFFICIAL_ROLES = ("system", "user", "assistant")
_ASSISTANT_KEYS = ("role", "content", "input", "output")
_OWN_KEYS = ("format", "task_id", "turns", "messages", "reward", "success", "answer")


class TrajectoryFormatError(ValueError):
    """A trajectory record or file is malformed; the message names the file and line."""


@dataclass
class Turn:
    """One agent message and what led to it.

    Attributes:
        messages: The chat before the action, OpenAI format (``role``/``content``), as the
            agent saw it — without any system prompt the agent added itself.
        action: The agent's message as sent (raw model output).
        prompt: The exact formatted prompt the agent generated from, when it reported one
            (the official ``input`` field); ``None`` when unknown.
        reward: The environment's reward for this step (the final score on the last turn).
        done: Whether this turn ended the episode.
        extra: Keys of an official assistant message beyond ``role``, ``content``,
            ``input`` and ``output``, kept so that official files round-trip unchanged.
        logprob: The action's summed token log-probability under the policy that
            sampled it (the behaviour policy), when its generator reported one (a
            server that returns log-probs); ``None`` otherwise.

    """

    messages: list[dict[str, str]]
    action: str
    prompt: str | None = None
    reward: float = 0.0
    done: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    logprob: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        data: dict[str, Any] = {
            "messages": [dict(m) for m in self.messages],
            "action": self.action,
            "prompt": self.prompt,
            "reward": self.reward,
            "done": self.done,
        }
        if self.extra:
            data["extra"] = dict(self.extra)
        if self.logprob is not None:
            data["logprob"] = self.logprob
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Turn:
        """Build a turn from :meth:`to_dict` output."""
        return cls(
            messages=_messages(data["messages"], "turn messages"),
            action=_text(data["action"], "turn action"),
            prompt=None if data.get("prompt") is None else str(data["prompt"]),
            reward=float(data.get("reward", 0.0)),
            done=bool(data.get("done", False)),
            extra=dict(data.get("extra") or {}),
            logprob=None if data.get("logprob") is None else float(data["logprob"]),
        )


@dataclass
class Trajectory:
    """One episode.

    Attributes:
        task_id: The task's identifier (for official records: the id our task loader
            derives from the record, so the same task gets the same id everywhere).
        turns: One :class:`Turn` per agent message, in order.
        messages: The whole chat of the episode, OpenAI format. An agent message's
            ``content`` is what the dialogue shows; its turn's ``action`` is the raw
            output (the two differ only in official files that logged them apart).
        reward: The final score (fraction of hidden tests passed, or similarity).
        success: Whether the episode fully succeeded.
        answer: The final answer as scored.
        reference: Training-time information (ground truth, tests, hidden facts) for
            critics — never for the acting policy.
        task: The official task record this episode came from, kept as read; empty for
            episodes we collected (the export then writes the task id and the official
            fields of ``reference``).
        metadata: Anything else: episode index, sampling seed, tests passed, keys of an
            official record we do not model, ...

    """

    task_id: str
    turns: list[Turn]
    messages: list[dict[str, str]]
    reward: float
    success: bool
    answer: str
    reference: dict[str, Any] = field(default_factory=dict)
    task: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not math.isfinite(self.reward):
            raise TrajectoryFormatError(f"trajectory {self.task_id}: reward {self.reward}")
        agent_messages = sum(1 for m in self.messages if m.get("role") == "assistant")
        if agent_messages != len(self.turns):
            raise TrajectoryFormatError(
                f"trajectory {self.task_id}: {len(self.turns)} turns but "
                f"{agent_messages} assistant messages in the chat"
            )

    @property
    def num_turns(self) -> int:
        """Number of agent messages."""
        return len(self.turns)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict in our own format."""
        return {
            "format": TRAJECTORY_FORMAT,
            "task_id": self.task_id,
            "turns": [turn.to_dict() for turn in self.turns],
            "messages": [dict(m) for m in self.messages],
            "reward": self.reward,
            "success": self.success,
            "answer": self.answer,
            "reference": self.reference,
            "task": self.task,
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trajectory:
        """Build a trajectory from :meth:`to_dict` output.

        Raises:
            TrajectoryFormatError: If the record is not in our format.

        """
        if data.get("format") != TRAJECTORY_FORMAT:
            hint = (
                " (this looks like an official sweet_rl record: TrajectoryBuffer.read takes "
                "a file in either format, from_official_jsonl the official one)"
                if "dialogue_history" in data
                else ""
            )
            raise TrajectoryFormatError(
                f"not a {TRAJECTORY_FORMAT} record: format={data.get('format')!r}{hint}"
            )
        try:
            return cls(
                task_id=str(data["task_id"]),
                turns=[Turn.from_dict(t) for t in data["turns"]],
                messages=_messages(data["messages"], "messages"),
                reward=float(data["reward"]),
                success=bool(data["success"]),
                answer=_text(data["answer"], "answer"),
                reference=dict(data.get("reference") or {}),
                task=dict(data.get("task") or {}),
                metadata=dict(data.get("metadata") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, TrajectoryFormatError):
                raise
            raise TrajectoryFormatError(f"bad trajectory record: {exc!r}") from exc

    def to_official(self) -> dict[str, Any]:
        """Return the official sweet_rl record: task, dialogue_history, answer, reward."""
        turns = iter(self.turns)
        extras = self.metadata.get("official_message_extras", {})
        dialogue = []
        for index, message in enumerate(self.messages):
            entry: dict[str, Any] = {"role": message["role"], "content": message["content"]}
            if message["role"] == "assistant":
                turn = next(turns)
                if turn.prompt is not None:
                    entry["input"] = turn.prompt
                entry["output"] = turn.action
                entry.update(turn.extra)
            entry.update(extras.get(str(index), {}))
            dialogue.append(entry)
        # The official record's fields, plus our task id so the same task keeps its id.
        task = self.task or {
            "task_id": self.task_id,
            **{
                key: self.reference[key]
                for key in ("problem_description", "ground_truth", "test_cases")
                if key in self.reference
            },
        }
        record = {
            "task": task,
            "dialogue_history": dialogue,
            "answer": self.answer,
            "reward": self.reward,
        }
        record.update(self.metadata.get("official_extra_keys", {}))
        return record

    @classmethod
    def from_official(
        cls, record: Mapping[str, Any], where: str = "record", *, reward: float | None = None
    ) -> Trajectory:
        """Build a trajectory from one official sweet_rl record.

        Turns get reward 0 but the last, which gets the record's reward. The task id is
        the one :func:`sweetrl_gym.tasks.load_backend_tasks` gives the same task record.
        A Frontend record whose ``answer`` is ``null`` (the official page failed to
        render) reads as no page (``answer == ""``).

        Args:
            record: ``{"task", "dialogue_history", "answer", "reward"}``.
            where: Location for error messages (``"file.jsonl:12"``).
            reward: The reward of a record without one (the official simulation writes
                none), scored by the caller (:meth:`TrajectoryBuffer.read` with
                ``scoring=``).

        Raises:
            TrajectoryFormatError: If a field is missing or has the wrong type.

        """
        from sweetrl_gym.tasks.loaders import TaskFormatError, task_from_record

        if not isinstance(record, Mapping):
            raise TrajectoryFormatError(f"{where}: expected a JSON object")
        missing = [key for key in _OFFICIAL_KEYS if key not in record]
        if missing == ["reward"] and reward is not None:
            missing = []
        if missing:
            unscored = (
                " (an unscored record, as the official simulate_interactions.py writes "
                "them: read the file with a scoring to score its answers on load, "
                "TrajectoryBuffer.read(path, scoring='official'); a comparison's "
                "data.trajectories is scored with env.scoring)"
                if missing == ["reward"]
                else ""
            )
            raise TrajectoryFormatError(
                f"{where}: missing official fields {missing}{unscored}; the record has keys "
                f"{sorted(record)}, an official one {list(_OFFICIAL_KEYS)}"
            )
        task = record["task"]
        if not isinstance(task, Mapping):
            raise TrajectoryFormatError(f"{where}: 'task' must be an object")
        try:
            parsed = task_from_record(task, where=where)
            reference, task_id = parsed.reference(), parsed.task_id
        except TaskFormatError:
            # Not a backend record (frontend, or unknown): keep what the record says.
            reference = dict(task)
            digest = hashlib.sha256(json.dumps(task, sort_keys=True).encode()).hexdigest()
            task_id = str(task.get("task_id", f"task-{digest[:12]}"))
        dialogue = record["dialogue_history"]
        if not isinstance(dialogue, list):
            raise TrajectoryFormatError(f"{where}: 'dialogue_history' must be a list")
        messages: list[dict[str, str]] = []
        turns: list[Turn] = []
        extras: dict[str, dict[str, Any]] = {}
        for index, entry in enumerate(dialogue):
            at = f"{where}: dialogue_history[{index}]"
            if not isinstance(entry, Mapping) or not isinstance(entry.get("role"), str):
                raise TrajectoryFormatError(f"{at}: expected an object with a 'role'")
            if entry["role"] not in _OFFICIAL_ROLES:
                raise TrajectoryFormatError(
                    f"{at}: unknown role {entry['role']!r}; official dialogues hold "
                    f"{', '.join(map(repr, _OFFICIAL_ROLES))}"
                )
            content = _text(entry.get("content"), f"{at}.content")
            if entry["role"] == "assistant":
                action = _text(entry.get("output", content), f"{at}.output")
                extra = {k: v for k, v in entry.items() if k not in _ASSISTANT_KEYS}
                prompt = entry.get("input")
                turns.append(
                    Turn(
                        messages=[dict(m) for m in messages],
                        action=action,
                        prompt=None if prompt is None else str(prompt),
                        extra=extra,
                    )
                )
            else:
                unknown = {k: v for k, v in entry.items() if k not in _MESSAGE_KEYS}
                if unknown:
                    extras[str(index)] = unknown
            messages.append({"role": entry["role"], "content": content})
        if reward is None:
            reward = _number(record["reward"], f"{where}: reward")
        if turns:
            turns[-1].reward = reward
            turns[-1].done = True
        metadata: dict[str, Any] = {}
        if extras:
            metadata["official_message_extras"] = extras
        unknown_keys = {k: v for k, v in record.items() if k not in _OFFICIAL_KEYS}
        if unknown_keys:
            metadata["official_extra_keys"] = unknown_keys
        return cls(
            task_id=task_id,
            turns=turns,
            messages=messages,
            reward=reward,
            success=reward >= 1.0,
            # null: an official Frontend page that failed to render, i.e. no page.
            answer="" if record["answer"] is None else _text(record["answer"], f"{where}: answer"),
            reference=reference,
            task=dict(task),
            metadata=metadata,
        )


class TrajectoryBuffer(Sequence[Trajectory]):
    """A list of trajectories with filtering, grouping and JSONL files.

    Behaves like a list (indexing, slicing, ``len``, iteration, ``append``,
    ``extend``, ``+``).

    Example:
        >>> buffer = TrajectoryBuffer.load("runs/train.jsonl")
        >>> good = buffer.filter(lambda t: t.success)
        >>> by_task = buffer.group_by_task()

    """

    def __init__(self, trajectories: Iterable[Trajectory] = ()):
        self._items: list[Trajectory] = []
        self.extend(trajectories)

    @overload
    def __getitem__(self, index: int) -> Trajectory: ...

    @overload
    def __getitem__(self, index: slice) -> TrajectoryBuffer: ...

    def __getitem__(self, index: int | slice) -> Trajectory | TrajectoryBuffer:
        """Return one trajectory, or a buffer for a slice."""
        if isinstance(index, slice):
            return TrajectoryBuffer(self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        """Return the number of trajectories."""
        return len(self._items)

    def __iter__(self) -> Iterator[Trajectory]:
        """Iterate over the trajectories in order."""
        return iter(self._items)

    def __add__(self, other: Iterable[Trajectory]) -> TrajectoryBuffer:
        """Concatenate two buffers (or a buffer and a list) into a new buffer."""
        return TrajectoryBuffer([*self._items, *other])

    def __eq__(self, other: object) -> bool:
        """Buffers are equal when they hold equal trajectories in the same order."""
        if isinstance(other, TrajectoryBuffer):
            return self._items == other._items
        return NotImplemented

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        """Summarise the buffer."""
        return f"TrajectoryBuffer({len(self)} trajectories, {self.num_turns} turns)"

    def append(self, trajectory: Trajectory) -> None:
        """Add one trajectory.

        Raises:
            TypeError: If ``trajectory`` is not a :class:`Trajectory`.

        """
        if not isinstance(trajectory, Trajectory):
            raise TypeError(f"expected a Trajectory, got {type(trajectory).__name__}")
        self._items.append(trajectory)

    def extend(self, trajectories: Iterable[Trajectory]) -> None:
        """Add trajectories in order."""
        for trajectory in trajectories:
            self.append(trajectory)

    @property
    def num_turns(self) -> int:
        """Agent turns over all trajectories."""
        return sum(t.num_turns for t in self._items)

    def filter(self, keep: Callable[[Trajectory], bool]) -> TrajectoryBuffer:
        """Return a new buffer with the trajectories for which ``keep`` is true."""
        return TrajectoryBuffer(t for t in self._items if keep(t))

    def group_by_task(self) -> dict[str, TrajectoryBuffer]:
        """Return the trajectories of each task, tasks in order of first appearance."""
        groups: dict[str, TrajectoryBuffer] = {}
        for trajectory in self._items:
            groups.setdefault(trajectory.task_id, TrajectoryBuffer()).append(trajectory)
        return groups

    def similarities(self) -> list[float] | None:
        """Each episode's final similarity to its target, when the buffer is Frontend's.

        Returns:
            ``metadata["similarity"]`` of every trajectory, in order, or ``None`` when the
            buffer is empty or any episode lacks one (a Backend buffer is scored by tests).

        """
        if not self._items or any("similarity" not in t.metadata for t in self._items):
            return None
        return [float(t.metadata["similarity"]) for t in self._items]

    def turns(self) -> Iterator[tuple[Trajectory, Turn]]:
        """Iterate over every (trajectory, turn) pair."""
        for trajectory in self._items:
            for turn in trajectory.turns:
                yield trajectory, turn

    # -- our own JSONL -------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the buffer as JSONL in our format (``.gz`` suffix: gzip-compressed).

        The file is written next to its destination and moved into place, so a crash
        never leaves a half-written file.

        Returns:
            The path written.

        """
        return _write_jsonl(path, (t.to_dict() for t in self._items))

    @classmethod
    def load(cls, path: str | Path) -> TrajectoryBuffer:
        """Read a buffer saved by :meth:`save` or appended by :func:`agents.collect`.

        Args:
            path: A ``.jsonl`` or ``.jsonl.gz`` file.

        Raises:
            TrajectoryFormatError: Naming the file and line of a bad record.

        """
        return cls(_parse(path, Trajectory.from_dict))

    @classmethod
    def read(cls, path: str | Path, *, scoring: str | None = None) -> TrajectoryBuffer:
        """Read a trajectory file in either format, told apart by its first record.

        A record with ``"format": "sweetrl-gym/trajectory/v1"`` is ours (:meth:`save`,
        ``agents.collect``, ``sweetrl collect``: read as :meth:`load` does); one with
        ``dialogue_history`` is the official sweet_rl format (such as the published
        ``colbench_code_offline_15k_llama8b.jsonl``: read as :meth:`from_official_jsonl`
        does, every turn keeping the official ``input`` prompt and raw ``output``). Every
        record of the file must be of the first one's format.

        Args:
            path: A ``.jsonl`` or ``.jsonl.gz`` file; an empty one gives an empty buffer.
            scoring: How to score official Backend records that have no ``reward`` (the
                official ``simulate_interactions.py`` writes none): ``"ours"`` or
                ``"official"``, as ``ColBench-Backend-v0`` scores (``None``: such a
                record is refused, with how to score it).

        Raises:
            FileNotFoundError: If there is no such file.
            TrajectoryFormatError: Naming the file and line of a record that is in neither
                format (with the keys each format expects) or is malformed.

        """
        kind = trajectory_file_format(path)
        if kind == OFFICIAL_FILE:
            return cls.from_official_jsonl(path, scoring=scoring)
        return cls.load(path)  # ours, or an empty file

    # -- Hugging Face datasets ------------------------------------------------------

    def to_dataset(self) -> Any:
        """Return the buffer as a Hugging Face ``datasets.Dataset``, one row a trajectory.

        Columns: ``task_id``, ``messages`` (the whole chat), ``reward``, ``success``,
        ``answer``, ``turns`` (each turn's ``messages``, ``action``, ``prompt``,
        ``reward``, ``done``) and, as JSON text (their keys differ from row to row),
        ``reference``, ``task``, ``metadata`` and each turn's ``extra``.
        :meth:`from_dataset` reads it back unchanged; ``dataset.push_to_hub`` shares it.

        Raises:
            ModuleNotFoundError: Without the ``datasets`` package.

        """
        from datasets import Dataset

        return Dataset.from_list([_dataset_row(t) for t in self._items])

    @classmethod
    def from_dataset(cls, dataset: Any) -> TrajectoryBuffer:
        """Read a dataset written by :meth:`to_dataset` (or loaded from the hub).

        Raises:
            TrajectoryFormatError: Naming the row that is not a trajectory.

        """
        trajectories = []
        for index, row in enumerate(dataset):
            try:
                record = {key: row[key] for key in _DATASET_COLUMNS}
                for key in _JSON_COLUMNS:
                    record[key] = json.loads(record[key])
                record["turns"] = [
                    {**turn, "extra": json.loads(turn["extra"])} for turn in record["turns"]
                ]
            except (KeyError, TypeError, ValueError) as exc:
                raise TrajectoryFormatError(
                    f"dataset row {index}: not a trajectory of TrajectoryBuffer.to_dataset "
                    f"({exc!r})"
                ) from exc
            try:
                trajectories.append(Trajectory.from_dict({"format": TRAJECTORY_FORMAT, **record}))
            except TrajectoryFormatError as exc:
                raise TrajectoryFormatError(f"dataset row {index}: {exc}") from exc
        return cls(trajectories)

    # -- official sweet_rl JSONL --------------------------------------------------

    @classmethod
    def from_official_jsonl(
        cls, path: str | Path, *, scoring: str | None = None
    ) -> TrajectoryBuffer:
        """Read the official sweet_rl trajectory file (e.g. the published offline data).

        Best-of-k files keep their row order (repeat ``j`` of task ``i`` at row
        ``num_tasks * j + i``); :meth:`group_by_task` collects the repeats.

        Args:
            path: The file.
            scoring: How to score Backend records without ``reward`` (see :meth:`read`);
                such a trajectory's ``metadata["scored_on_load"]`` names the scoring.

        Raises:
            TrajectoryFormatError: Naming the file and line of a bad record.

        """
        if scoring is None:
            return cls(_parse(path, Trajectory.from_official, pass_where=True))
        from sweetrl_gym.sandbox import check_scoring

        check_scoring(scoring)
        records = list(_records(path))
        rewards = _score_unscored(records, scoring)
        out = []
        for index, (where, record) in enumerate(records):
            with _located(path, where):
                trajectory = Trajectory.from_official(record, where, reward=rewards.get(index))
            if index in rewards:
                trajectory.metadata["scored_on_load"] = scoring
            out.append(trajectory)
        return cls(out)

    def to_official_jsonl(self, path: str | Path) -> Path:
        """Write the buffer in the official sweet_rl trajectory format.

        Returns:
            The path written.

        """
        return _write_jsonl(path, (t.to_official() for t in self._items))


def trajectory_file_format(path: str | Path) -> str | None:
    """Tell which trajectory format a file is in, from its first non-empty record.

    Args:
        path: A ``.jsonl`` or ``.jsonl.gz`` file.

    Returns:
        ``"sweetrl-gym"`` (ours: :meth:`TrajectoryBuffer.save`), ``"official"`` (the
        official sweet_rl format), or ``None`` when the file holds no record.

    Raises:
        FileNotFoundError: If there is no such file.
        TrajectoryFormatError: If the first record is not JSON, or is in neither format;
            the message names the file and line, both formats and the keys each has.

    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no trajectory file at {path}")
    try:
        with _open_text(path, "r") as file:
            first = next(((n, text) for n, text in enumerate(file, start=1) if text.strip()), None)
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise TrajectoryFormatError(f"{path}: not a UTF-8 JSONL trajectory file ({exc})") from exc
    if first is None:
        return None
    number, line = first
    where = f"{path}:{number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TrajectoryFormatError(f"{where}: not valid JSON ({exc.msg})") from exc
    if isinstance(record, Mapping) and record.get("format") == TRAJECTORY_FORMAT:
        return OWN_FILE
    if isinstance(record, Mapping) and "format" not in record and "dialogue_history" in record:
        return OFFICIAL_FILE
    if isinstance(record, Mapping):
        found = f"keys {sorted(record)}"
        if "format" in record:
            found += f" and format {record['format']!r}"
    else:
        found = f"a JSON {type(record).__name__}, not an object"
    raise TrajectoryFormatError(
        f"{where}: a trajectory record in neither accepted format; this one has {found}. "
        f'Ours (TrajectoryBuffer.save, sweetrl collect) has "format": "{TRAJECTORY_FORMAT}" '
        f"and keys {', '.join(_OWN_KEYS)}; the official sweet_rl format has keys "
        f"{', '.join(_OFFICIAL_KEYS)} (assistant messages with input and output)"
    )


def append_jsonl(file: IO[str], trajectory: Trajectory) -> None:
    """Append one trajectory to an open text file in our format and flush it.

    Used by rollouts so that every finished episode is on disk at once.
    """
    file.write(json.dumps(trajectory.to_dict(), ensure_ascii=False) + "\n")
    file.flush()


def _open_text(path: Path, mode: str, *, compressed: bool | None = None) -> IO[str]:
    if path.suffix == ".gz" if compressed is None else compressed:
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def _write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> Path:
    path = Path(path)

    def write(temporary: Path) -> None:
        with _open_text(temporary, "w", compressed=path.suffix == ".gz") as file:
            for record in records:
                file.write(json.dumps(record, ensure_ascii=False) + "\n")

    return write_atomically(path, write)


_JSON_COLUMNS = ("reference", "task", "metadata")
_DATASET_COLUMNS = ("task_id", "messages", "reward", "success", "answer", "turns", *_JSON_COLUMNS)


def _dataset_row(trajectory: Trajectory) -> dict[str, Any]:
    record = trajectory.to_dict()
    row = {key: record[key] for key in _DATASET_COLUMNS}
    for key in _JSON_COLUMNS:
        row[key] = json.dumps(record[key], ensure_ascii=False, sort_keys=True)
    row["turns"] = [
        {**turn, "extra": json.dumps(turn.get("extra", {}), ensure_ascii=False, sort_keys=True)}
        for turn in record["turns"]
    ]
    return row


def _parse(
    path: str | Path,
    build: Callable[..., Trajectory],
    *,
    pass_where: bool = False,
) -> list[Trajectory]:
    out = []
    for where, record in _records(path):
        with _located(path, where):
            out.append(build(record, where) if pass_where else build(record))
    return out


@contextlib.contextmanager
def _located(path: str | Path, where: str) -> Iterator[None]:
    """Prefix a record's format error with its file and line (unless it has them)."""
    try:
        yield
    except TrajectoryFormatError as exc:
        message = str(exc)
        raise TrajectoryFormatError(
            message if message.startswith(str(path)) else f"{where}: {message}"
        ) from exc


def _score_unscored(records: list[tuple[str, Any]], scoring: str) -> dict[int, float]:
    """Score the answers of official Backend records without ``reward``, in one batch."""
    from sweetrl_gym.sandbox import default_sandbox
    from sweetrl_gym.tasks.loaders import TaskFormatError, task_from_record

    jobs, indices = [], []
    for index, (where, record) in enumerate(records):
        if not isinstance(record, Mapping) or "reward" in record:
            continue
        if any(key not in record for key in _OFFICIAL_KEYS if key != "reward"):
            continue  # not a record the official scripts write: from_official says why
        answer = record.get("answer")
        try:
            task = task_from_record(record.get("task"), where=where)
        except TaskFormatError as exc:
            raise TrajectoryFormatError(
                f"{where}: no 'reward', and only Backend records are scored on load "
                f"({exc}); score the file with the official scripts first"
            ) from exc
        if not isinstance(answer, str):
            raise TrajectoryFormatError(f"{where}: answer must be a string to be scored")
        # The file holds the answer as the official env cut it; ours strips it first.
        code = answer if scoring == "official" else answer.strip()
        jobs.append((code, task.ground_truth, task.test_cases))
        indices.append(index)
    reports = default_sandbox().run_tests_many(jobs, scoring=scoring) if jobs else []
    return {index: report.fraction for index, report in zip(indices, reports)}


def _records(path: str | Path) -> Iterator[tuple[str, Any]]:
    """Yield ``(file:line, decoded JSON)`` for every non-blank line of a JSONL file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no trajectory file at {path}")
    try:
        with _open_text(path, "r") as file:
            # Iterate, not splitlines(): that also splits on U+2028, U+0085 and the
            # like, which json.dumps(ensure_ascii=False) leaves raw inside strings.
            lines = list(file)
    except (UnicodeDecodeError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise TrajectoryFormatError(f"{path}: not a UTF-8 JSONL trajectory file ({exc})") from exc
    for number, line in enumerate(lines, start=1):
        where = f"{path}:{number}"
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TrajectoryFormatError(f"{where}: not valid JSON ({exc.msg})") from exc
        yield where, record


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TrajectoryFormatError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _number(value: Any, what: str) -> float:
    if not is_finite_number(value):
        raise TrajectoryFormatError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _messages(value: Any, what: str) -> list[dict[str, str]]:
    if not isinstance(value, list):
        raise TrajectoryFormatError(f"{what} must be a list of messages")
    out = []
    for index, message in enumerate(value):
        if not isinstance(message, Mapping):
            raise TrajectoryFormatError(f"{what}[{index}] must be an object")
        out.append(
            {
                "role": _text(message.get("role"), f"{what}[{index}].role"),
                "content": _text(message.get("content"), f"{what}[{index}].content"),
            }
        )
    return out
