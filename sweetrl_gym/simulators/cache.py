"""Record and replay a simulator's replies, keyed by simulator, task and dialogue.

An LLM simulated human is the slow and costly part of an episode, and even at
temperature 0 an endpoint may not answer the same way twice. Recording its replies
once makes later evaluations reproducible and free: the same agent messages get the
same replies, from a file, with no endpoint at all.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweetrl_gym.jsonl_files import drop_truncated_tail
from sweetrl_gym.simulators.base import Simulator, SimulatorError

__all__ = ["CachedSimulator", "reply_key"]


def reply_key(simulator_name: str, task_id: str, messages: Sequence[Mapping[str, str]]) -> str:
    """Return the cache key of a reply: a hash of simulator, task and dialogue.

    Only each message's ``role`` and ``content`` count.
    """
    dialogue = [[str(m.get("role")), str(m.get("content"))] for m in messages]
    payload = json.dumps([simulator_name, task_id, dialogue], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedSimulator:
    """Wraps a simulator with a reply cache that can live in a JSONL file.

    Args:
        simulator: The simulator to record (its replies are stored on each miss), or
            the ``name`` of a recorded simulator to replay without it.
        path: JSONL file of recorded replies: read at start, appended to on each miss
            (every reply is on disk at once). ``None``: an in-memory cache.
        replay: Serve only recorded replies; a miss raises :class:`SimulatorError`
            instead of calling the simulator. Implied when ``simulator`` is a name.

    Attributes:
        name: The wrapped simulator's name: replies are the same, so is the identity.
        hits: Replies served from the cache.
        misses: Replies asked of the wrapped simulator.

    Example:
        >>> sim = CachedSimulator(OpenAISimulator(ChatClient(url, "llama-70b")), "runs/human.jsonl")
        >>> env = gym.make("ColBench-Backend-v0", simulator=sim)   # records
        >>> sim = CachedSimulator(sim.name, "runs/human.jsonl")    # replays, no endpoint

    """

    def __init__(
        self,
        simulator: Simulator | str,
        path: str | Path | None = None,
        *,
        replay: bool = False,
    ):
        if isinstance(simulator, str):
            self._inner: Simulator | None = None
            self.name = simulator
            replay = True
        elif callable(getattr(simulator, "reply", None)) and isinstance(
            getattr(simulator, "name", None), str
        ):
            self._inner = simulator
            self.name = simulator.name
        else:
            raise TypeError("simulator must be a Simulator (with name and reply) or a name")
        if replay and path is None:
            raise ValueError("replay needs the path of a file of recorded replies")
        self.replay = replay
        self.path = None if path is None else Path(path)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._replies: dict[str, str] = {}
        if self.path is not None:
            if self.path.exists():
                self._load(self.path)
            elif replay:
                raise FileNotFoundError(f"no recorded replies at {self.path}")

    def __len__(self) -> int:
        """Return the number of recorded replies of this simulator."""
        return len(self._replies)

    def reply(self, task: Any, messages: Sequence[Mapping[str, str]]) -> str:
        """Return the recorded reply, or ask the wrapped simulator and record its reply.

        Raises:
            SimulatorError: On a miss in replay mode, or when the wrapped simulator fails.

        """
        task_id = _task_id(task)
        key = reply_key(self.name, task_id, messages)
        with self._lock:
            if key in self._replies:
                self.hits += 1
                return self._replies[key]
        if self._inner is None or self.replay:
            raise SimulatorError(
                f"no recorded reply of {self.name!r} for task {task_id!r} after "
                f"{len(messages)} messages in {self.path} (replay mode records nothing: "
                "pass the simulator itself to record)"
            )
        reply = self._inner.reply(task, messages)
        if not isinstance(reply, str):
            raise SimulatorError(f"simulator {self.name!r} returned {type(reply).__name__}")
        with self._lock:
            self.misses += 1
            self._replies[key] = reply
            if self.path is not None:
                self._append(
                    {"simulator": self.name, "task_id": task_id, "key": key, "reply": reply}
                )
        return reply

    def _append(self, record: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _load(self, path: Path) -> None:
        drop_truncated_tail(path)  # a crash cut the last record short
        data = path.read_bytes()
        for number, line in enumerate(data.decode("utf-8").split("\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                simulator, key, reply = record["simulator"], record["key"], record["reply"]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise SimulatorError(f"{path}:{number}: not a recorded reply ({exc!r})") from exc
            if simulator == self.name and isinstance(reply, str):
                self._replies[key] = reply


def _task_id(task: Any) -> str:
    task_id = task.get("task_id") if isinstance(task, Mapping) else getattr(task, "task_id", None)
    if task_id is None:
        raise SimulatorError(f"cannot cache replies for a task without a task_id: {task!r:.80}")
    return str(task_id)
