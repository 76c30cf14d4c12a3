"""Fit algorithms on the tests' shared buffer; run by ``torchrun`` on 1 or 2 CPU processes.

``python -m tests.distributed.run_fit OUT --per-process-batch B [--algorithms ...] [--lora]``
fits each algorithm from a fresh tiny policy with ``B`` items per process (so the global
batch is ``B x processes``), saves it under ``OUT/<name>`` (every process calls ``save``)
and, on the main process, writes ``OUT/<name>.json``: the logged history, the learning
rates and the final metrics.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tests.distributed import cpu_fsdp

cpu_fsdp.enable()  # before anything creates an Accelerator

from accelerate import PartialState  # noqa: E402

from agents import ImmediateAnswerAgent, OracleAgent, RandomAgent, TransformersAgent, collect  # noqa: E402
from algorithms import Algorithm  # noqa: E402
from tests.conftest import make_tasks  # noqa: E402
from tests.tiny_lm import make_tiny_lm  # noqa: E402

SETTINGS = {
    "learning_rate": 1e-3,
    "max_length": 384,
    "gradient_checkpointing": False,
    "progress": False,
    "lr_scheduler": "linear",
    "warmup_steps": 1,
}
PER_ALGORITHM = {
    "rft": {"num_epochs": 2},
    "mt-dpo": {"num_epochs": 2},
    # V's targets from policy samples (value_samples > 0) differ between 1 and 2
    # processes: each process samples its share of the turns with its own generator, so
    # the critic's losses would too. The equality check uses the buffer-action target;
    # `sweetrl compare` on 2 processes (test_compare_processes) runs the sampled one.
    "archer": {"critic_epochs": 2, "value_samples": 0},
    "sweet-rl": {
        "critic_learning_rate": 1e-3,
        "critic_epochs": 2,
        "num_candidates": 2,
        "candidate_fraction": 0.2,
        "held_out_fraction": 0.25,
        "drop_truncated_candidates": False,  # the tiny policy's samples never end
    },
}


def shared_buffer():
    """The algorithm tests' buffer: per task an oracle success and two failures."""
    env_kwargs = {"tasks": make_tasks(4, seed=3), "max_turns": 10}
    buffers = [
        collect("ColBench-Backend-v0", agent, 4, num_envs=2, env_kwargs=env_kwargs, progress=False)
        for agent in (OracleAgent(), RandomAgent(seed=0), ImmediateAnswerAgent())
    ]
    return buffers[0] + buffers[1] + buffers[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--per-process-batch", type=int, required=True)
    parser.add_argument("--algorithms", nargs="+", default=list(PER_ALGORITHM))
    parser.add_argument("--lora", action="store_true")
    args = parser.parse_args()
    state = PartialState()
    buffer = shared_buffer()
    for name in args.algorithms:
        model, tokenizer = make_tiny_lm(seed=0)
        policy = TransformersAgent(model, tokenizer, max_new_tokens=8, seed=0)
        settings = {**SETTINGS, **PER_ALGORITHM[name]}
        settings["batch_size"] = args.per_process_batch
        if name in ("sweet-rl", "archer"):
            settings["critic_batch_size"] = args.per_process_batch
        if args.lora:
            settings.update(lora_rank=4, save_merged=True)
        algorithm = Algorithm.named(name)(policy, **settings)
        metrics = algorithm.fit(buffer)
        algorithm.save(args.out / name)
        if state.is_main_process:
            record = {
                "metrics": metrics,
                "history": algorithm.history,
                # DTensor when FSDP2 sharded the trained policy in place, else Parameter.
                "parameter_type": type(next(algorithm.policy.model.parameters())).__name__,
            }
            (args.out / f"{name}.json").write_text(json.dumps(record))
        state.wait_for_everyone()


if __name__ == "__main__":
    main()
