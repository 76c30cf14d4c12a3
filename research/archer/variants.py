"""ArCHer variants on one comparison's warm start and data: which setting breaks its actor.

Issue 56 measured ArCHer on the quick config (seed 7) at 0 of 256 held-out tasks against
its warm start's 26.2%, every dialogue running to the turn limit. This script fits ArCHer
variants from that run's warm start on that run's training episodes and evaluates each on
the first ``--tasks`` held-out tasks (the same tasks, greedy), so the variants pair:

    python research/archer/variants.py RUN_FOLDER VARIANT [--tasks 128]

``RUN_FOLDER`` is a ``sweetrl compare`` output (``config.json``, ``data/train.jsonl``,
``methods/warm-start/model``). A variant fits a critic unless it reuses another variant's
advantages (run that one first). Results go to ``RUN_FOLDER/research-archer/VARIANT/``
(``metrics.json``, the evaluated episodes).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from agents import evaluate
from algorithms import ArCHer
from benchmarks.harness.compare import env_kwargs
from benchmarks.harness.experiment_config import ComparisonConfig
from benchmarks.harness.policies import saved_policy
from sweetrl_gym import TrajectoryBuffer

VARIANTS: dict[str, dict[str, Any]] = {
    # No fit: the warm start itself, the baseline every variant pairs with.
    "warm-start": {"no_fit": True},
    # A critic with the library's current heads (values start near 0), the run's settings
    # otherwise: the actor at the quick config's shared learning rate, 2e-5.
    "critic": {},
    # That critic's advantages, the actor at ArCHer's own default rate, 1e-6.
    "critic-lr1e-6": {"advantages_of": "critic", "learning_rate": 1e-6},
}


class _GivenAdvantages(ArCHer):
    """ArCHer whose critic stage is skipped: the actor trains on advantages given."""

    name = "archer-given-advantages"

    def __init__(self, *args: Any, advantages: list[float], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._given = advantages

    def fit_critic(self, buffer: Any) -> dict[str, float]:
        return {}

    def advantages(self, buffer: Any) -> list[float]:
        return list(self._given)


def main() -> None:
    """Fit one variant, evaluate it, write its ``metrics.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("variant", choices=sorted(VARIANTS))
    parser.add_argument("--tasks", type=int, default=128)
    args = parser.parse_args()

    config = ComparisonConfig.from_dict(json.loads((args.run / "config.json").read_text()))
    buffer = TrajectoryBuffer.load(args.run / "data" / "train.jsonl")
    out = args.run / "research-archer" / args.variant
    out.mkdir(parents=True, exist_ok=True)
    variant = dict(VARIANTS[args.variant])
    settings = {
        "seed": config.seed,
        **config.method_settings("archer"),
        "output_dir": str(out / "run"),
        "progress": False,
    }
    settings.update({k: v for k, v in variant.items() if k in ("learning_rate",)})
    variant = {k: v for k, v in variant.items() if k not in settings}
    policy = saved_policy(args.run / "methods" / "warm-start" / "model", config)
    start = time.perf_counter()
    metrics: dict[str, float] = {}
    advantages: list[float] = []
    if variant.pop("no_fit", False):
        trained = policy
    else:
        source = variant.pop("advantages_of", None)
        if source is not None:
            cached = args.run / "research-archer" / source / "run" / "stages"
            given = json.loads((cached / "archer_advantages.json").read_text())
            algorithm: ArCHer = _GivenAdvantages(policy, advantages=given, **settings, **variant)
        else:
            algorithm = ArCHer(policy, **settings, **variant)
        metrics = algorithm.fit(buffer, resume=True)
        advantages = json.loads((out / "run" / "stages" / "archer_advantages.json").read_text())
        trained = algorithm.policy
    fit_seconds = time.perf_counter() - start
    trained.temperature = float(config.policy.eval_temperature)
    evaluation = evaluate(
        trained,
        config.env.id,
        split="test",
        num_tasks=args.tasks,
        num_envs=config.eval.num_envs,
        seed=config.seed,
        env_kwargs=env_kwargs(config, "test"),
        out=out / "eval.jsonl",
        resume=(out / "eval.jsonl").exists(),
        progress=False,
    )
    record = {
        "variant": args.variant,
        "settings": {k: v for k, v in settings.items() if k != "output_dir"},
        "fit_seconds": round(fit_seconds, 1),
        "fit": metrics,
        "advantages": _summary(advantages) if advantages else None,
        "eval": evaluation,
    }
    (out / "metrics.json").write_text(json.dumps(record, indent=2, default=float) + "\n")
    print(json.dumps({"variant": args.variant, **evaluation}, default=float))


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "count": len(ordered),
        "min": ordered[0],
        "median": ordered[len(ordered) // 2],
        "max": ordered[-1],
    }


if __name__ == "__main__":
    main()
