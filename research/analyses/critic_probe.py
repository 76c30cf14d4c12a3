"""Score a SWEET-RL critic setting by how it ranks a comparison's judged turn pairs.

A seed of SWEET-RL gains when its critic orders the question pairs the way the simulated
human's replies do, and not otherwise (research/history.md, run 14), so a critic setting can
be judged before any policy step or evaluation. This reads one finished comparison
folder (its ``config.json``, training episodes and demonstrations, warm start and
SWEET-RL's ``turn_pairs.json``), trains SWEET-RL's critic again from the same base on the same
trajectory pairs with the given settings changed, re-scores every turn pair with it, and
counts how often its order agrees with the environment's verdict
(:func:`algorithms.pair_signal.judge_turn_pairs`: facts obtained for two
questions, hidden tests passed for two answers; on the Frontend, design facts told and
two pages' similarity to the target by the comparison's own scorer). The pairs are a
fixed, judged set, so two settings are compared on the same pairs.

    python -m research.analyses.critic_probe runs/quick/seed-0 --set critic_epochs=3
    python -m research.analyses.critic_probe runs/quick/seed-0 --untrained \
        --set 'hint_template="In light that ...: {hidden_facts}"'

``--untrained`` scores with the critic's start (the base policy reading the hint), so,
measured against the sampling policy without the hint, a pair is ordered by what the hint
alone makes likelier: whether a hint carries the signal before any training.

The result (and the critic's own training metrics) is printed and saved as JSON
(``--output``; default ``critic_probe.json`` in the folder). Pairs of two pages count
as answers.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from algorithms.controls import TURN_PAIRS, read_turn_pairs
from algorithms.pair_signal import judge_turn_pairs
from benchmarks.harness.compare import env_similarity
from benchmarks.harness.policies import base_policy
from research.analyses.run_folder import training_run

SOURCE = "sweet-rl"  # the method whose turn pairs these read

COUNTS = ("questions_right", "questions_wrong", "answers_right", "answers_wrong", "no_verdict")
"""The keys of :func:`probe`'s ``counts``: pairs the environment tells apart, ordered as it
does (right) or the other way (wrong); ``no_verdict``: the two actions do as well, the pair
sets a question against an answer, or its task is unknown."""


def probe(run: Path, overrides: Sequence[str] = (), *, untrained: bool = False) -> dict[str, Any]:
    """Train SWEET-RL's critic for ``run`` with ``overrides``; count its agreement.

    Args:
        run: A comparison's folder (one seed) in which SWEET-RL was trained.
        overrides: ``key=value`` settings of ``[methods.sweet-rl]`` (TOML values).
        untrained: Score with the critic's start instead of training it (``critic``
            is then empty).

    Returns:
        ``counts`` (:data:`COUNTS`), ``critic`` (its training metrics and held-out pair
        accuracy), ``settings`` (the overrides) and ``seconds``.

    Raises:
        FileNotFoundError: If the folder holds no SWEET-RL turn pairs or training data.

    """
    from algorithms import SweetRL
    from algorithms.pairs import split_pairs

    pairs_path = run / "methods" / SOURCE / TURN_PAIRS
    started = time.perf_counter()
    config, buffer = training_run(run, pairs_path)
    config = config.with_overrides([f"methods.{SOURCE}.{override}" for override in overrides])
    settings = {"seed": config.seed, **config.method_settings(SOURCE)}
    critic = SweetRL(base_policy(config, run), **settings)
    metrics: dict[str, float] = {}
    if untrained:
        # The start, as fit_critic begins from. Its held-out trajectory-pair accuracy is
        # not measured: the critic's loss scores against that same start, so it is 0.5.
        critic.build_critic()
    else:
        train, held_out = split_pairs(
            critic.trajectory_pairs(buffer),
            held_out_fraction=critic.config.held_out_fraction,
            seed=config.seed,
        )
        metrics = critic.fit_critic(train)
        if held_out:
            metrics["critic/heldout_pair_accuracy"] = critic.critic_accuracy(held_out)
    pairs = read_turn_pairs(pairs_path)
    references = {t.task_id: t.reference for t in buffer}
    counts = dict.fromkeys(COUNTS, 0)
    verdicts = judge_turn_pairs(pairs, buffer, similarity=env_similarity(config))
    for pair, verdict in zip(pairs, verdicts):
        if not verdict.endswith(("_more", "_fewer")):
            counts["no_verdict"] += 1
            continue
        chosen, rejected = critic.score_actions(
            pair.messages, references[pair.task_id], [pair.chosen, pair.rejected]
        )
        kind = "questions" if "obtains" in verdict else "answers"
        agrees = (chosen > rejected) == verdict.endswith("_more")
        counts[f"{kind}_{'right' if agrees else 'wrong'}"] += 1
    return {
        "counts": counts,
        "critic": metrics,
        "settings": list(overrides) + (["untrained"] if untrained else []),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m research.analyses.critic_probe RUN [--set k=v ...]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a comparison's folder (one seed)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a [methods.sweet-rl] setting to change (repeatable), e.g. critic_epochs=3",
    )
    parser.add_argument(
        "--untrained", action="store_true", help="score with the critic's start, untrained"
    )
    parser.add_argument("--output", type=Path, help="the JSON file (default: in the folder)")
    args = parser.parse_args(argv)
    result = probe(args.run, args.set, untrained=args.untrained)
    output = args.output or args.run / "critic_probe.json"
    output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["counts"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
