"""What would SWEET-RL gain with a perfect critic? Its policy step on environment-ranked pairs.

SWEET-RL is two parts: a critic that ranks candidate actions at a turn, and a DPO step on
the ranked turn pairs. When it does not beat its base, either part can be at fault.
:func:`critic_ceiling` takes a finished comparison's SWEET-RL turn pairs
(``methods/sweet-rl/turn_pairs.json``), keeps those the environment tells apart, the better
action chosen (:func:`benchmarks.pair_signal.environment_ranked_pairs`: the simulated human's
replies for questions, the hidden tests for answers), trains SWEET-RL's policy step on them
from the same base with the same settings, and evaluates it on the same held-out tasks.
If that gains and SWEET-RL does not, the critic's ranking is what holds it back; if it
does not gain either, the policy step (or the candidates) is.

This is an upper bound for diagnosis, not a method: it reads the simulated human and the
hidden tests. It runs on one process, on the backend environment.

Example:
    >>> sweetrl compare --config quick --out runs/quick
    >>> sweetrl ceiling runs/quick     # writes runs/quick/ceiling/ceiling.json

"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks.compare import (
    TURN_PAIRS,
    WARM_START,
    base_policy,
    evaluate_method,
    saved_policy,
)
from benchmarks.pair_signal import environment_ranked_pairs
from benchmarks.report import paired_cell
from sweetrl_gym.actions import parse_action
from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.processes import process_state
from sweetrl_gym.trajectory import TrajectoryBuffer

__all__ = ["CEILING", "critic_ceiling", "render_ceiling"]

CEILING = "ceiling"
"""The folder, inside the comparison's, that holds the ceiling's model, evaluation and report."""

_BACKEND = "ColBench-Backend-v0"
_NAME = "sweet-rl-ceiling"  # its evaluation: ceiling/eval/sweet-rl-ceiling.jsonl


def critic_ceiling(run_dir: str | Path, *, progress: bool = True) -> dict[str, Any]:
    """Train and evaluate SWEET-RL's policy step on its turn pairs as a perfect critic ranks them.

    Resumable: a trained ceiling model (``ceiling/model``) is not trained again, and the
    evaluation continues where it stopped.

    Args:
        run_dir: A folder of ``sweetrl compare`` with SWEET-RL trained and evaluated.
        progress: Show progress bars.

    Returns:
        ``pairs`` (SWEET-RL's), ``kept`` (``questions`` and ``answers``: the pairs the
        environment tells apart), ``fit`` (the policy step's metrics and seconds),
        ``eval`` (its evaluation's metrics), ``versus_base`` and ``versus_sweet_rl``
        (paired differences on the same tasks); also written to ``ceiling/ceiling.json``.

    Raises:
        FileNotFoundError: If the folder lacks the comparison's report, SWEET-RL's turn
            pairs or an evaluation it needs.
        ValueError: On the frontend, under several processes, or when the environment
            tells none of the pairs apart.

    """
    from agents import paired_difference
    from algorithms import SweetRL
    from algorithms.batches import from_json
    from algorithms.pairs import TurnPair

    out = Path(run_dir)
    results = _read_json(out / "results.json", "a finished 'sweetrl compare' report")
    config = results["config"]
    if config["env"]["id"] != _BACKEND:
        raise ValueError(
            f"the ceiling judges pairs with the backend's simulated human and tests; {out} "
            f"ran {config['env']['id']}"
        )
    if process_state().num_processes > 1:
        raise ValueError("sweetrl ceiling runs on one process; start it without torchrun")
    pairs_path = out / "methods" / "sweet-rl" / TURN_PAIRS
    rows = _read_json(
        pairs_path,
        "SWEET-RL's turn pairs (written by 'sweetrl compare' with sweet-rl in methods.run; "
        "runs from before they were saved need comparing again in a new folder)",
    )
    pairs = from_json(TurnPair, rows)
    base, sweet = results["base"], "sweet-rl"
    evaluations = {name: out / "eval" / f"{name}.jsonl" for name in (base, sweet)}
    for name, path in evaluations.items():
        if not path.exists():
            raise FileNotFoundError(f"no evaluation of {name} in {out} ({path})")
    buffer = TrajectoryBuffer.load(out / "data" / "train.jsonl")
    ranked = environment_ranked_pairs(pairs, buffer)
    if not ranked:
        raise ValueError(
            f"the environment tells none of SWEET-RL's {len(pairs)} turn pairs apart: "
            "there is nothing for a perfect critic to rank"
        )
    folder = out / CEILING
    model = folder / "model"
    fit_path = folder / "fit.json"
    if not fit_path.exists():
        settings = {"seed": config["seed"], **config["training"], **config["methods"][sweet]}
        settings["progress"] = progress
        algorithm = SweetRL(base_policy(config, out), **settings)
        start = time.perf_counter()
        metrics = algorithm.fit_policy(ranked)
        algorithm.save(model)
        fit = {"metrics": metrics, "seconds": round(time.perf_counter() - start, 1)}
        _write_json(fit_path, fit)
        del algorithm
    fit = json.loads(fit_path.read_text())
    agent = saved_policy(model, config, evaluation=True)
    metrics = evaluate_method(_NAME, agent, config, folder, progress)
    mine = TrajectoryBuffer.load(folder / "eval" / f"{_NAME}.jsonl")
    seed = config["seed"]
    answers = sum(parse_action(p.chosen).is_answer for p in ranked)  # a kept pair: two of one kind
    report = {
        "run": str(out),
        "base": base,
        "pairs": len(pairs),
        "kept": {"questions": len(ranked) - answers, "answers": answers},
        "fit": fit,
        "eval": metrics,
        "versus_base": paired_difference(mine, TrajectoryBuffer.load(evaluations[base]), seed=seed),
        "versus_sweet_rl": paired_difference(
            mine, TrajectoryBuffer.load(evaluations[sweet]), seed=seed
        ),
    }
    _write_json(folder / "ceiling.json", report)
    return report


def render_ceiling(report: dict[str, Any]) -> str:
    """Return :func:`critic_ceiling`'s report as a few lines of text."""
    kept = report["kept"]
    base = "warm start" if report["base"] == WARM_START else report["base"]
    lines = [
        f"SWEET-RL's policy step with a perfect critic ({report['run']}/{CEILING})",
        f"turn pairs: {report['pairs']} trained on by SWEET-RL; the environment tells "
        f"{kept['questions'] + kept['answers']} apart ({kept['questions']} of two questions, "
        f"{kept['answers']} of two answers), the better one chosen",
        f"success: {100 * report['eval']['success_rate']:.1f}%",
    ]
    for key, name in (("versus_base", base), ("versus_sweet_rl", "SWEET-RL")):
        versus = report[key]
        lines.append(
            f"vs {name}: {paired_cell(versus, 'success_rate')} points "
            f"({int(versus['gained'])} tasks gained, {int(versus['lost'])} lost)"
        )
    return "\n".join(lines) + "\n"


def _read_json(path: Path, what: str) -> Any:
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: it should hold {what}")
    return json.loads(path.read_text())


def _write_json(path: Path, data: Any) -> None:
    text = json.dumps(data, indent=2, default=float) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, lambda target: target.write_text(text, "utf-8"))
