"""Count how often the critic orders its turn pairs right, by the size of its score gap.

SWEET-RL pairs a turn's candidates by the critic's scores. This reads finished
comparison folders (one seed each), takes every turn pair SWEET-RL drew (the run's cache
of them when present, so pairs that an older version's ``pair_gap_quantile`` left out
count too; else ``turn_pairs.json``), judges each against the environment
(:func:`algorithms.pair_signal.judge_turn_pairs`: facts obtained for two
questions, hidden tests passed for two answers), splits each kind's pairs of each run at
the median of their score gaps (``chosen_score - rejected_score``), and counts the
pairs ordered as the environment orders them (right), the other way (wrong), or that the
environment does not tell apart (tied), per half, per run and pooled.

    python -m research.analyses.pair_gaps runs/quick/seed-0 runs/quick/seed-1

Prints a table and saves JSON (``--output``; default ``runs/analyses/pair_gaps.json``).
Backend comparisons only. Reads files; trains and generates nothing.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from algorithms.controls import TURN_PAIRS
from algorithms.pair_signal import judge_turn_pairs
from sweetrl_gym.atomic_write import write_atomically

SOURCE = "sweet-rl"  # the method whose turn pairs these read

__all__ = ["HALVES", "KINDS", "gap_counts", "main"]

RESULTS = Path("runs") / "analyses" / "pair_gaps.json"
KINDS = {"questions": "obtains", "answers": "passes"}
"""The pair kinds judged, and the word of their verdicts (``chosen_obtains_more``, ...)."""
HALVES = ("wider", "narrower")
_TIES = {"questions": "same", "answers": "same_tests"}


def gap_counts(run: Path) -> dict[str, dict[str, dict[str, int]]]:
    """Count one run's judged pairs per kind and gap half.

    Args:
        run: A comparison's folder (one seed) in which SWEET-RL drew turn pairs.

    Returns:
        ``{kind: {half: {"right": n, "wrong": n, "tied": n}}}`` for :data:`KINDS` and
        :data:`HALVES`; a pair whose gap equals the median goes to the wider half.

    Raises:
        FileNotFoundError: If the folder holds no SWEET-RL turn pairs or training data.

    """
    from algorithms.pairs import TurnPair
    from sweetrl_gym.trajectory import TrajectoryBuffer

    rows = _drawn_pairs(run)
    train = run / "data" / "train.jsonl"
    if not train.exists():
        raise FileNotFoundError(f"{train} is missing: pass a comparison's folder (one seed)")
    fields = {"messages", "chosen", "rejected", "chosen_score", "rejected_score", "task_id"}
    pairs = [TurnPair(**{k: v for k, v in row.items() if k in fields}) for row in rows]
    verdicts = judge_turn_pairs(pairs, TrajectoryBuffer.load(train))
    counts = _zero_counts()
    for kind, word in KINDS.items():
        judged = [
            (pair.chosen_score - pair.rejected_score, verdict)
            for pair, verdict in zip(pairs, verdicts)
            if word in verdict or verdict == _TIES[kind]
        ]
        if not judged:
            continue
        median = float(np.median([gap for gap, _ in judged]))
        for gap, verdict in judged:
            cell = counts[kind]["wider" if gap >= median else "narrower"]
            if verdict.endswith("_more"):
                cell["right"] += 1
            elif verdict.endswith("_fewer"):
                cell["wrong"] += 1
            else:
                cell["tied"] += 1
    return counts


def _drawn_pairs(run: Path) -> list[dict[str, Any]]:
    """Every turn pair SWEET-RL drew in ``run`` (its stage cache), else those it trained on."""
    cache = run / "methods" / SOURCE / "run" / "stages" / "candidate_pairs.json"
    if cache.exists():
        data = json.loads(cache.read_text())
        return data["pairs"] if isinstance(data, dict) else data
    trained = run / "methods" / SOURCE / TURN_PAIRS
    if not trained.exists():
        raise FileNotFoundError(f"{trained} is missing: did SWEET-RL run in {run}?")
    return json.loads(trained.read_text())


def _zero_counts() -> dict[str, dict[str, dict[str, int]]]:
    return {
        kind: {half: dict.fromkeys(("right", "wrong", "tied"), 0) for half in HALVES}
        for kind in KINDS
    }


def _pooled(per_run: Sequence[dict[str, Any]]) -> dict[str, Any]:
    total = _zero_counts()
    for counts in per_run:
        for kind in KINDS:
            for half in HALVES:
                for key, value in counts[kind][half].items():
                    total[kind][half][key] += value
    return total


def _line(name: str, counts: dict[str, Any]) -> str:
    cells = []
    for kind in KINDS:
        for half in HALVES:
            c = counts[kind][half]
            told = c["right"] + c["wrong"]
            share = f" ({c['right'] / told:.0%})" if told else ""
            cells.append(f"{c['right']} / {c['wrong']} / {c['tied']}{share}")
    return f"| {name} | " + " | ".join(cells) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m research.analyses.pair_gaps RUN [RUN ...]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="comparison folders (one seed each)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    per_run = [gap_counts(run) for run in args.runs]
    pooled = _pooled(per_run)
    header = [f"{kind}, {half} half" for kind in KINDS for half in HALVES]
    print("right / wrong / tied (right of those told apart)")
    print("| run | " + " | ".join(header) + " |")
    print("|---" * (len(header) + 1) + "|")
    for run, counts in zip(args.runs, per_run):
        print(_line(str(run), counts))
    print(_line("pooled", pooled))
    report = {"runs": {str(r): c for r, c in zip(args.runs, per_run)}, "pooled": pooled}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report, indent=2) + "\n"
    write_atomically(args.output, lambda path: path.write_text(text, "utf-8"))
    print(f"saved: {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
