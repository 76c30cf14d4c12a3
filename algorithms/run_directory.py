"""A training run on disk: stage results, checkpoints and the progress record used to resume.

Layout under ``output_dir``::

    progress.json            algorithm, data fingerprint, per-stage status and checkpoint,
                             seconds spent over every launch
    history.json             every metric logged up to the last checkpoint or finished stage
    tensorboard/             TensorBoard events
    stages/<stage>/model/    the final weights of a finished training stage
    stages/<stage>/checkpoint-<step>/   the latest mid-stage checkpoint (accelerate state)
    stages/<name>.json       results of expensive non-training steps (reference log-probs,
                             sampled candidates), so a resumed run does not redo them

``progress.json`` is rewritten atomically after each checkpoint has been written whole,
so a crash at any moment leaves a record that points at complete files.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from algorithms.chunk_journal import ChunkJournal
from algorithms.distributed import from_main_process
from sweetrl_gym.atomic_write import write_atomically

__all__ = ["RunDirectory", "fingerprint"]

_FORMAT = "sweetrl-gym/run/v1"
_FINGERPRINT_VERSION = 2
"""What a run's fingerprint covers, numbered (2: without the settings since removed, with
those an older version left out at their old values). A folder of a lower number whose
fingerprint differs was written by an older version: it cannot resume, and says so."""


def fingerprint(parts: Iterable[Any]) -> str:
    """Return a short stable hash of JSON-serialisable parts (data and settings)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(json.dumps(part, sort_keys=True, default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()[:16]


def _write_json(path: Path, data: Any) -> None:
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    write_atomically(path, lambda temporary: temporary.write_text(text))


class RunDirectory:
    """Progress of one ``fit`` call, persisted under ``root`` (or kept in memory).

    Args:
        root: The run's ``output_dir``; ``None`` keeps nothing on disk.
        algorithm: The algorithm's name (recorded; a mismatch on resume raises).
        data_fingerprint: Hash of the training data and settings; a mismatch on resume
            raises, since the checkpoints would belong to another run (or to an older
            version of the package, which hashed other settings).
        resume: Continue the run recorded in ``root``. Without it an existing run there
            is an error, so that nothing is overwritten by accident.
        is_main: Whether this process writes (the others only read).

    Raises:
        FileExistsError: If ``root`` holds a run and ``resume`` is false.
        ValueError: If resuming a run of another algorithm, other data or settings, or
            an older version.

    """

    def __init__(
        self,
        root: str | Path | None,
        *,
        algorithm: str,
        data_fingerprint: str,
        resume: bool = False,
        is_main: bool = True,
    ):
        self.root = None if root is None else Path(root)
        self.is_main = is_main
        self._clock = time.perf_counter()
        self.progress: dict[str, Any] = {
            "format": _FORMAT,
            "algorithm": algorithm,
            "fingerprint": data_fingerprint,
            "fingerprint_version": _FINGERPRINT_VERSION,
            "stages": {},
        }
        if self.root is None:
            return
        # Every process takes the main process's reading: it writes the file just below.
        recorded = from_main_process(self._read() if self.is_main else None)
        if recorded is not None and not resume:
            raise FileExistsError(
                f"{self.root} already holds a run of {recorded.get('algorithm')!r}; pass "
                f"resume=True to continue it, or choose another output_dir"
            )
        if recorded is not None:
            self._check_same_run(recorded, algorithm, data_fingerprint)
            self.progress = {**recorded, "fingerprint_version": _FINGERPRINT_VERSION}
        if self.is_main:
            (self.root / "stages").mkdir(parents=True, exist_ok=True)
            self._save()

    def _check_same_run(self, recorded: dict[str, Any], algorithm: str, fingerprint: str) -> None:
        """Refuse to resume a run of another algorithm, other data or settings, or version."""
        if recorded.get("algorithm") != algorithm:
            raise ValueError(
                f"cannot resume {self.root}: it was started with algorithm "
                f"{recorded.get('algorithm')!r}, this run has {algorithm!r}; use a new "
                "output_dir"
            )
        if recorded.get("fingerprint") == fingerprint:
            return
        if recorded.get("fingerprint_version", 1) < _FINGERPRINT_VERSION:
            raise ValueError(
                f"cannot resume {self.root}: it was written by an older version of "
                "sweetrl-gym, which fingerprinted a run's settings otherwise (some of them "
                "since removed), or it holds a run of other data; use a new output_dir"
            )
        raise ValueError(
            f"cannot resume {self.root}: it was started with fingerprint "
            f"{recorded.get('fingerprint')!r}, this run has {fingerprint!r} (other data or "
            "settings); use a new output_dir"
        )

    def _read(self) -> dict[str, Any] | None:
        path = self.root / "progress.json"
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{path} is not valid JSON ({error}); remove it to start over"
            ) from None
        if data.get("format") != _FORMAT:
            raise ValueError(
                f"{path} is not a sweetrl-gym run record (format {data.get('format')!r})"
            )
        return data

    @property
    def seconds(self) -> float:
        """Seconds spent on this run, over every launch of it.

        A launch's time counts up to its last save (a finished stage, a checkpoint, a
        stored result): what a killed launch did after that is done again by the next,
        and counted there.
        """
        return float(self.progress.get("seconds", 0.0)) + time.perf_counter() - self._clock

    def _save(self) -> None:
        self.progress["seconds"] = round(self.seconds, 1)
        self._clock = time.perf_counter()
        if self.root is not None and self.is_main:
            _write_json(self.root / "progress.json", self.progress)

    @property
    def tensorboard_dir(self) -> Path | None:
        """Where TensorBoard events go (``None`` without a root)."""
        return None if self.root is None else self.root / "tensorboard"

    def stage_dir(self, stage: str) -> Path | None:
        """Return (and create) the folder of ``stage``; ``None`` without a root."""
        if self.root is None:
            return None
        path = self.root / "stages" / stage
        if self.is_main:
            path.mkdir(parents=True, exist_ok=True)
        return path

    def _stage(self, stage: str) -> dict[str, Any]:
        return self.progress["stages"].setdefault(stage, {"done": False})

    def is_done(self, stage: str) -> bool:
        """Whether ``stage`` finished in this run (its results are on disk)."""
        return self.root is not None and bool(self._stage(stage).get("done"))

    def stage_metrics(self, stage: str) -> dict[str, float]:
        """Return the final metrics recorded for ``stage``."""
        return dict(self._stage(stage).get("metrics", {}))

    def _save_history(self, history: Sequence[tuple[int, str, float]]) -> None:
        # Written before the progress record that it goes with: a crash between the two
        # leaves steps past that record, which history() leaves out.
        if self.root is not None and self.is_main:
            _write_json(self.root / "history.json", [list(row) for row in history])

    def history(self) -> list[tuple[int, str, float]]:
        """Return the ``(step, key, value)`` metrics earlier launches of this run logged.

        Only those up to the run's last checkpoint or finished stage: what came after was
        lost with its launch and is trained (and logged) again.
        """
        if self.root is None:
            return []
        try:
            rows = json.loads((self.root / "history.json").read_text())
        except (OSError, ValueError):
            return []
        stages = self.progress["stages"].values()
        last = max(
            [int(self.progress.get("global_step", 0))]
            + [int(r.get("global_step", 0)) for r in stages if r.get("checkpoint")]
        )
        return [(int(step), str(key), float(value)) for step, key, value in rows if step <= last]

    def mark_done(
        self,
        stage: str,
        metrics: dict[str, float],
        *,
        history: Sequence[tuple[int, str, float]],
    ) -> None:
        """Record that ``stage`` finished, with its metrics; drop its checkpoints.

        ``history``: every ``(step, key, value)`` metric logged so far, kept for a resume.
        """
        self._save_history(history)
        record = self._stage(stage)
        old = record.pop("checkpoint", None)
        record.update(done=True, metrics=dict(metrics))
        self._save()
        if old and self.is_main:
            shutil.rmtree(self.root / old, ignore_errors=True)

    def checkpoint(self, stage: str) -> tuple[Path, int, int] | None:
        """Return ``(path, optimizer step, global step)`` of the latest checkpoint, if any."""
        record = self._stage(stage)
        if self.root is None or not record.get("checkpoint"):
            return None
        return self.root / record["checkpoint"], int(record["step"]), int(record["global_step"])

    def new_checkpoint_path(self, stage: str, step: int) -> Path | None:
        """Return the folder a checkpoint at ``step`` of ``stage`` is written to."""
        directory = self.stage_dir(stage)
        return None if directory is None else directory / f"checkpoint-{step}"

    def record_checkpoint(
        self,
        stage: str,
        path: Path,
        step: int,
        global_step: int,
        *,
        history: Sequence[tuple[int, str, float]],
    ) -> None:
        """Point the record at a fully written checkpoint and delete the previous one.

        ``history``: every ``(step, key, value)`` metric logged so far, kept for a resume.
        """
        self._save_history(history)
        record = self._stage(stage)
        old = record.get("checkpoint")
        record.update(
            checkpoint=str(path.relative_to(self.root)), step=step, global_step=global_step
        )
        self._save()
        if old and old != record["checkpoint"] and self.is_main:
            shutil.rmtree(self.root / old, ignore_errors=True)

    def cached(self, name: str, compute: Callable[[], Any], wait: Callable[[], None]) -> Any:
        """Return the JSON result ``name``, computing and storing it the first time.

        Every process runs ``compute`` (which splits its work across them and gathers
        it, so each gets the whole result); the main process writes it. Whether the
        file exists is the main process's answer, so all processes take the same path.
        Without a root, every process computes and nothing is written.

        Args:
            name: File stem under ``stages/``.
            compute: Builds the JSON-serialisable result (collective under many processes).
            wait: A barrier across processes (``accelerator.wait_for_everyone``).

        """
        if self.root is None:
            return compute()
        path = self.root / "stages" / f"{name}.json"
        exists = from_main_process(path.exists())
        if not exists:
            result = json.loads(json.dumps(compute()))  # the same values as a re-read
            if self.is_main:
                _write_json(path, result)
            self._save()  # the time spent computing it is kept with it
            wait()
            if self.is_main:
                ChunkJournal(self.journal_dir(name)).remove()  # the whole result is stored
            return result
        return json.loads(path.read_text())

    def journal_dir(self, name: str) -> Path | None:
        """Where the sharded passes of cached result ``name`` log their finished chunks.

        Pass it as ``journal`` to :func:`algorithms.distributed.map_sharded` inside the
        ``compute`` of :meth:`cached`; it is deleted once the result is stored. ``None``
        without a root (nothing is written).
        """
        return None if self.root is None else self.root / "stages" / f"{name}.chunks"
