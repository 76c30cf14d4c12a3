"""DPO training speed and memory: our ``SweetRL.fit_policy`` vs TRL's ``DPOTrainer``.

Reads top to bottom: make deterministic synthetic turn pairs (multi-turn ColBench-like
contexts, each with two different replies, trimmed to fit ``--max-length``) -> train the
same model init on the same pairs three times, each side in its own fresh process so its
peak memory is its own: ours (``fit_policy`` with ``nll_coef=0``: plain sigmoid DPO; a
pair is one row, its prompt read once), ours with each pair as two plain rows (the
prompt read twice, as TRL and our code before it do) and TRL (``DPOTrainer`` with
``precompute_ref_log_probs=True``, on the *same* prompt strings, formatted once with the
policy's chat template and system prompt) -> all with the same batch size, precision,
optimizer steps, learning rate, schedule and gradient clipping -> report, for each, wall
time of the training part (from the first forward pass with gradients to the end; the
frozen reference pass before it is timed apart), pairs trained per second (the same work
on every side), real (non-pad) tokens/s counted at the model's input, peak memory above
the process's baseline, and the ratios of ours to TRL and to its plain rows.

    python -m benchmarks.speed.dpo_speed --model default --pairs 16 --batch-size 4 --max-length 512

Needs TRL: ``pip install "sweetrl-gym[bench]"``.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from algorithms.pairs import TurnPair
from benchmarks.machine import describe_machine
from benchmarks.speed.output import DEFAULT_DIR, print_result, write_result
from benchmarks.speed.synthetic import (
    FUNCTION_NAMES,
    MODELS,
    code_answer,
    load_model,
    question,
    sentence,
)
from sweetrl_gym.lm import CausalLM

_RESULTS = DEFAULT_DIR / "dpo_speed.json"
_INSTALL_HINT = 'pip install "sweetrl-gym[bench]"'
SIDES = ("ours", "ours-plain", "trl")
"""Ours (a pair's prompt read once), ours with two plain rows a pair, and TRL."""

# -- 1. Synthetic pairs: a ColBench-like backend dialogue and two different replies --------


def synthetic_pairs(count: int, seed: int = 0) -> list[TurnPair]:
    """Return ``count`` deterministic turn pairs: a 1-4 exchange dialogue, then two replies."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        name = rng.choice(FUNCTION_NAMES)
        task = f"I need a Python function `{name}`. " + " ".join(
            sentence(rng) for _ in range(rng.randint(1, 3))
        )
        messages = [{"role": "user", "content": task}]
        for _ in range(rng.randint(0, 3)):
            messages.append({"role": "assistant", "content": question(rng)})
            answer = " ".join(sentence(rng) for _ in range(rng.randint(1, 2)))
            messages.append({"role": "user", "content": answer})
        chosen, rejected = question(rng), code_answer(rng, name)
        if rng.random() < 0.5:  # neither side is always the longer one
            chosen, rejected = rejected, chosen
        pairs.append(TurnPair(messages=tuple(messages), chosen=chosen, rejected=rejected))
    return pairs


def fit_pairs(pairs: Sequence[TurnPair], policy: Any, max_length: int) -> list[TurnPair]:
    """Drop each context's oldest exchanges until prompt + reply + end token fit ``max_length``.

    Both trainers then see every token: neither truncates (they would cut different ends).
    """
    tokenizer = policy.tokenizer

    def length(messages: tuple[dict[str, str], ...], reply: str) -> int:
        prompt = policy.format_prompts([list(messages)])[0]
        ids = tokenizer([prompt, reply], add_special_tokens=False)["input_ids"]
        return len(ids[0]) + len(ids[1]) + 1

    fitted = []
    for pair in pairs:
        messages = pair.messages
        while max(length(messages, pair.chosen), length(messages, pair.rejected)) > max_length:
            if len(messages) < 3:
                need = max(length(messages, pair.chosen), length(messages, pair.rejected))
                raise ValueError(f"--max-length {max_length} is too short: a pair needs {need}")
            messages = (messages[0], *messages[3:])  # keep the task, drop the oldest Q&A
        fitted.append(TurnPair(messages=messages, chosen=pair.chosen, rejected=pair.rejected))
    return fitted


# -- 2. What every side measures, in its own process ---------------------------------------


class _Meter:
    """Watches training from outside both trainers: tokens, wall and CPU clocks, memory.

    Hooks on the top-level model see every forward pass: those without gradients are the
    frozen reference pass, the first with gradients starts the training part. Global
    optimizer-step hooks (``torch.optim``) time each optimizer step and mark where the
    next step begins. CPU time is recorded next to wall time: on a shared machine it
    moves less when other work competes for the cores.
    """

    def __init__(self, model: CausalLM, device: str):
        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        self.device = device
        self.reference_start: tuple[float, float] | None = None
        self.reference_end: tuple[float, float] | None = None
        self.reference_tokens = 0
        self.train_start: tuple[float, float] | None = None
        self.forwards: list[tuple[float, int]] = []  # (wall start, real tokens) with gradients
        self.padded_tokens = 0
        self.forward_seconds = 0.0
        self.optimizer_seconds = 0.0
        self.step_ends: list[float] = []
        self.peak_after_reference = 0.0
        self._forward_start = self._optimizer_start = 0.0
        self._handles = [
            model.register_forward_pre_hook(self._before_forward, with_kwargs=True),
            model.register_forward_hook(self._after_forward),
            register_optimizer_step_pre_hook(self._before_step),
            register_optimizer_step_post_hook(self._after_step),
        ]

    def now(self) -> tuple[float, float]:
        """Return (wall, CPU) clock readings, after queued GPU work has finished."""
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()
        return time.perf_counter(), time.process_time()

    def _before_forward(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        import torch

        ids = kwargs.get("input_ids", args[0] if args else None)
        mask = kwargs.get("attention_mask")
        if mask is not None and mask.dim() == 4:  # a block mask: a real token sees itself
            seen = mask.diagonal(dim1=-2, dim2=-1)
            real = int(seen.sum() if seen.dtype == torch.bool else seen.eq(0).sum())
        else:
            real = int(mask.sum()) if mask is not None else int(ids.numel())
        now = self.now()
        if torch.is_grad_enabled():
            if self.train_start is None:
                self.train_start = now
                self.peak_after_reference = _peak_memory_mb(self.device)
            self.forwards.append((now[0], real))
            self.padded_tokens += int(ids.numel())
        else:
            self.reference_start = self.reference_start or now
            self.reference_tokens += real
        self._forward_start = now[0]

    def _after_forward(self, module: Any, args: tuple[Any, ...], output: Any) -> None:
        import torch

        if torch.is_grad_enabled():
            self.forward_seconds += self.now()[0] - self._forward_start
        else:
            self.reference_end = self.now()

    def _before_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self._optimizer_start = self.now()[0]

    def _after_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        now = self.now()[0]
        self.optimizer_seconds += now - self._optimizer_start
        self.step_ends.append(now)

    def step_rates(self) -> list[float]:
        """Real tokens/s of each optimizer step (from its first forward to its update)."""
        rates, begin = [], 0
        for end in self.step_ends:
            inside = [f for f in self.forwards[begin:] if f[0] < end]
            if inside:
                rates.append(sum(t for _, t in inside) / (end - inside[0][0]))
            begin += len(inside)
        return rates

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()


def _peak_memory_mb(device: str) -> float:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.max_memory_allocated() / 2**20
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _train_ours(policy: Any, pairs: list[TurnPair], s: dict[str, Any]) -> dict[str, Any]:
    from algorithms.callbacks import Callback, StopAfterSteps
    from algorithms.sweet_rl import SweetRL

    losses: list[float] = []

    class _Losses(Callback):
        def on_step(self, algorithm: Any, stage: str, step: int, metrics: Any) -> None:
            losses.append(float(metrics["train/loss"]))

    per_epoch = math.ceil(len(pairs) / (s["batch_size"] * s["gradient_accumulation_steps"]))
    algo = SweetRL(
        policy,
        callbacks=[_Losses(), StopAfterSteps(s["steps"])],
        nll_coef=0.0,  # plain sigmoid DPO, like TRL's default loss
        dpo_beta=s["beta"],
        learning_rate=s["learning_rate"],
        num_epochs=math.ceil(s["steps"] / per_epoch),
        batch_size=s["batch_size"],
        gradient_accumulation_steps=s["gradient_accumulation_steps"],
        max_length=s["max_length"],
        mixed_precision=s["mixed_precision"],
        gradient_checkpointing=s["gradient_checkpointing"],
        lr_scheduler="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        seed=s["seed"],
        progress=False,
    )
    algo.fit_policy(pairs)
    optimizer = "torch.optim.AdamW, defaults (CPU: one tensor at a time; CUDA: foreach)"
    return {"losses": losses, "optimizer": optimizer}


def _train_trl(policy: Any, pairs: list[TurnPair], s: dict[str, Any]) -> dict[str, Any]:
    from transformers import PrinterCallback
    from trl import DPOConfig, DPOTrainer

    from algorithms import preference_dataset

    dataset = preference_dataset(pairs, policy)  # our exact prompt strings: the same tokens
    # TRL defaults to bf16 and gradient checkpointing: set both to our settings.
    fields = DPOConfig.__dataclass_fields__
    checkpointing = (
        "activation_checkpointing"
        if "activation_checkpointing" in fields
        else ("gradient_checkpointing")
    )
    with tempfile.TemporaryDirectory() as output_dir:
        config = DPOConfig(
            output_dir=output_dir,
            per_device_train_batch_size=s["batch_size"],
            gradient_accumulation_steps=s["gradient_accumulation_steps"],
            max_steps=s["steps"],
            learning_rate=s["learning_rate"],
            lr_scheduler_type="constant",
            warmup_steps=0,
            weight_decay=0.0,
            max_grad_norm=1.0,
            bf16=s["mixed_precision"] == "bf16",
            fp16=s["mixed_precision"] == "fp16",
            beta=s["beta"],
            loss_type=["sigmoid"],
            precompute_ref_log_probs=True,
            precompute_ref_batch_size=s["batch_size"],
            max_length=s["max_length"],
            seed=s["seed"],
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            disable_tqdm=True,
            dataloader_num_workers=0,
            use_cpu=s["device"] == "cpu",
            **{checkpointing: s["gradient_checkpointing"]},
        )
        trainer = DPOTrainer(
            model=policy.model,
            args=config,
            train_dataset=dataset,
            processing_class=policy.tokenizer,
        )
        trainer.remove_callback(PrinterCallback)  # its per-step log lines; we keep the losses
        trainer.train()
    tokenized = trainer.train_dataset
    return {
        "losses": [entry["loss"] for entry in trainer.state.log_history if "loss" in entry],
        "optimizer": str(config.optim.value if hasattr(config.optim, "value") else config.optim),
        "_trl_ids": [
            (row["prompt_ids"], row["chosen_ids"], row["rejected_ids"]) for row in tokenized
        ],
    }


def run_side(side: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Train one side in this (fresh) process and measure it; returns a JSON-able dict."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    import transformers

    from agents import TransformersAgent

    if side == "trl":
        import datasets  # noqa: F401  (imported before the baseline, like torch)
        import trl  # noqa: F401
    transformers.logging.set_verbosity_error()
    if settings["threads"]:
        torch.set_num_threads(settings["threads"])
    device = settings["device"]
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    baseline = _peak_memory_mb(device)

    if side == "ours-plain":  # the library's own fallback: two plain rows a pair
        import algorithms.base

        algorithms.base.branch_rows_supported = lambda model: False
    model, tokenizer = load_model(settings["model"], device)
    policy = TransformersAgent(model, tokenizer, device=device)
    pairs = synthetic_pairs(settings["pairs"], settings["seed"])
    pairs = fit_pairs(pairs, policy, settings["max_length"])
    meter = _Meter(policy.model, device)
    start = meter.now()
    extra = (_train_trl if side == "trl" else _train_ours)(policy, pairs, settings)
    end = meter.now()
    meter.close()
    peak = _peak_memory_mb(device)

    if meter.train_start is None:
        raise RuntimeError(f"{side}: no training forward pass was seen")
    reference_start = meter.reference_start or meter.train_start
    reference_end = meter.reference_end or meter.train_start
    train_seconds = end[0] - meter.train_start[0]
    train_tokens = sum(tokens for _, tokens in meter.forwards)
    rates = sorted(meter.step_rates())
    pairs_trained = len(meter.step_ends) * settings["batch_size"]
    pairs_trained *= settings["gradient_accumulation_steps"]
    result = {
        "setup_seconds": round(reference_start[0] - start[0], 3),
        "reference_pass_seconds": round(reference_end[0] - reference_start[0], 3),
        "reference_pass_cpu_seconds": round(reference_end[1] - reference_start[1], 3),
        "between_seconds": round(meter.train_start[0] - reference_end[0], 3),
        "train_seconds": round(train_seconds, 3),
        "train_cpu_seconds": round(end[1] - meter.train_start[1], 3),
        "model_forward_seconds": round(meter.forward_seconds, 3),
        "optimizer_step_seconds": round(meter.optimizer_seconds, 3),
        "total_seconds": round(end[0] - start[0], 3),
        "optimizer_steps": len(meter.step_ends),
        "train_forwards": len(meter.forwards),
        "train_tokens": train_tokens,
        "train_padded_tokens": meter.padded_tokens,
        "reference_tokens": meter.reference_tokens,
        "pairs_per_s": round(pairs_trained / train_seconds, 3),
        "tokens_per_s": round(train_tokens / train_seconds, 2),
        "tokens_per_cpu_s": round(train_tokens / (end[1] - meter.train_start[1]), 2),
        "step_tokens_per_s_median": round(rates[len(rates) // 2], 2) if rates else None,
        "step_tokens_per_s_best": round(rates[-1], 2) if rates else None,
        "reference_tokens_per_s": round(
            meter.reference_tokens / max(reference_end[0] - reference_start[0], 1e-9), 2
        ),
        "peak_memory_mb": round(peak - baseline, 1),
        "peak_memory_after_reference_mb": round(meter.peak_after_reference - baseline, 1),
        "process_peak_mb": round(peak, 1),
        "first_loss": round(extra["losses"][0], 5),
        "last_loss": round(extra["losses"][-1], 5),
        "optimizer": extra["optimizer"],
        "torch_threads": torch.get_num_threads(),
    }
    if side == "trl":
        result["token_check"] = _compare_tokens(
            policy, pairs, extra["_trl_ids"], settings["max_length"]
        )
    return result


def _compare_tokens(
    policy: Any, pairs: list[TurnPair], trl_ids: list[Any], max_length: int
) -> dict[str, Any]:
    """Compare our tokenization of each (prompt, reply) with TRL's, sequence by sequence."""
    from algorithms.logprobs import encode_turns

    prompts = policy.format_prompts([list(p.messages) for p in pairs])
    ours_total = trl_total = identical = 0
    for side_index, attribute in ((1, "chosen"), (2, "rejected")):
        encoded = encode_turns(
            policy.tokenizer, prompts, [getattr(p, attribute) for p in pairs], max_length=max_length
        )
        for row, ids in enumerate(trl_ids):
            ours = encoded.input_ids[row][encoded.attention_mask[row].bool()].tolist()
            theirs = (list(ids[0]) + list(ids[side_index]))[:max_length]
            ours_total += len(ours)
            trl_total += len(theirs)
            identical += ours == theirs
    return {
        "identical_sequences": identical,
        "sequences": 2 * len(pairs),
        "ours_tokens_per_epoch": ours_total,
        "trl_tokens_per_epoch": trl_total,
    }


# -- 3. Run both sides, compare, write the results ------------------------------------------


def _in_fresh_process(side: str, settings: dict[str, Any]) -> dict[str, Any]:
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        try:
            return pool.submit(run_side, side, settings).result()
        except BrokenProcessPool:
            raise RuntimeError(
                f"the {side!r} training process was killed, most likely out of memory; "
                "lower --batch-size or --max-length"
            ) from None


def _split(run: dict[str, Any]) -> str:
    rest = run["train_seconds"] - run["model_forward_seconds"] - run["optimizer_step_seconds"]
    return f"{run['model_forward_seconds']:.1f} / {run['optimizer_step_seconds']:.1f} / {rest:.1f}"


def _cores(run: dict[str, Any], part: str) -> str:
    return f"{run[part + '_cpu_seconds'] / max(run[part + '_seconds'], 1e-9):.2f}"


def _notes(ours: dict[str, Any], plain: dict[str, Any], trl: dict[str, Any]) -> list[str]:
    """Summarize what the numbers say and the design differences behind them."""
    check = trl["token_check"]
    notes = [
        f"Same work: {check['identical_sequences']} of {check['sequences']} prompt+reply "
        f"sequences are token-identical in both trainers ({check['ours_tokens_per_epoch']} "
        f"and {check['trl_tokens_per_epoch']} real tokens per epoch); all start at loss "
        f"{ours['first_loss']} / {plain['first_loss']} / {trl['first_loss']} (log 2: the "
        "policy is its reference).",
        "Structure: one forward per batch, reference log-probs computed once before "
        "training (TRL: precompute_ref_log_probs=True), sigmoid DPO (ours: nll_coef=0). "
        "Ours reads a pair as one row, the prompt once and each reply as a branch that "
        "attends to the prompt and itself (algorithms/logprobs.py encode_turn_pairs): "
        f"{ours['train_tokens']} input tokens in training against {plain['train_tokens']} "
        "for its plain rows and TRL's chosen+rejected concatenated (2 x batch rows, "
        "right-padded).",
        f"Training wall seconds, model forward call / optimizer steps / the rest (backward, "
        f"loss, clipping, data, trainer): ours {_split(ours)}, its plain rows "
        f"{_split(plain)}, TRL {_split(trl)}. The "
        "forward call includes both log-prob heads (TRL's fused into the model's forward, "
        f"ours swapped in for the output layer). Cores used in training: "
        f"ours {_cores(ours, 'train')}, TRL {_cores(trl, 'train')}.",
        "Log-prob head: TRL's add_fused_lm_head never materializes the (rows, length, "
        "vocab) logits; it projects in [4096 tokens x 32768 vocab] tiles, recomputes them "
        "in backward, and also computes entropy, mean logit and top-1 metrics. Without "
        "Triton (CPU) it runs in torch and scores every position. Ours projects only the "
        "action positions, in checkpointed chunks of 1,024 (algorithms/logprobs.py "
        "token_logprobs).",
        f"Reference pass: ours {ours['reference_tokens_per_s']} tokens/s on "
        f"{_cores(ours, 'reference_pass')} cores (CPU time / wall time), TRL "
        f"{trl['reference_tokens_per_s']} on {_cores(trl, 'reference_pass')} (ours runs "
        "chosen and rejected together in batch-size chunks, TRL both in one forward).",
        f"Optimizers: ours {ours['optimizer']}; TRL {trl['optimizer']}.",
        "Ours tokenizes each batch in the stage's collate step (algorithms/batches.py); "
        "TRL tokenizes the dataset before training (in its setup_seconds).",
    ]
    spread = [
        run["step_tokens_per_s_best"] / run["step_tokens_per_s_median"]
        for run in (ours, plain, trl)
        if run["step_tokens_per_s_median"]
    ]
    if spread and max(spread) > 1.25:
        notes.append(
            f"Noisy machine: a side's best step was up to {max(spread):.2f}x its median step; "
            "compare tokens_per_cpu_s and step_tokens_per_s_best as well (or use --repeats)."
        )
    return notes


MIXED_PRECISION = ("no", "bf16", "fp16", "auto")


def run(
    *,
    model: str = "default",
    pairs: int = 16,
    steps: int | None = None,
    batch_size: int = 4,
    gradient_accumulation_steps: int = 1,
    max_length: int = 512,
    mixed_precision: str = "no",
    gradient_checkpointing: bool = False,
    learning_rate: float = 1e-6,
    beta: float = 0.1,
    repeats: int = 1,
    threads: int = 0,
    seed: int = 0,
    out: Path | None = None,
) -> dict[str, Any]:
    """Train ours, ours on plain rows and TRL's DPOTrainer on the same pairs; compare.

    Each side trains in a fresh process.

    Args:
        model: ``"default"`` (SmolLM2-135M, embedded) or ``"tiny"`` (random init).
        pairs: Synthetic turn pairs to train on.
        steps: Optimizer steps (``None``: one epoch).
        batch_size: Pairs per forward pass.
        gradient_accumulation_steps: Forward passes per optimizer step.
        max_length: Longest prompt + reply in tokens; contexts are trimmed to fit.
        mixed_precision: ``"no"``, ``"bf16"``, ``"fp16"`` or ``"auto"``.
        gradient_checkpointing: Recompute activations in backward (both sides).
        learning_rate: Both sides' (constant) learning rate.
        beta: The DPO temperature.
        repeats: Alternating runs of both sides; each side reports its fastest.
        threads: Torch CPU threads in each side's process (0: torch's default).
        seed: Seeds the pairs and the training.
        out: Also write the result to this JSON file (its folders made as needed).

    Returns:
        The machine, the settings, each side's best run (pairs/s, tokens/s, peak memory,
        timings, losses; TRL's with a token-by-token check against ours), every repeat's
        pairs/s, the ratios of ours to TRL and to its plain rows (peak memory ``None``
        when a side's measured zero) and notes.

    Raises:
        ValueError: If ``model`` or ``mixed_precision`` is unknown, a count is out of
            range, or ``max_length`` is too short for a pair.
        ModuleNotFoundError: If TRL is not installed (the message says how to install it).
        RuntimeError: If a side's training process died (most likely out of memory).

    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    if mixed_precision not in MIXED_PRECISION:
        raise ValueError(
            f"mixed_precision must be one of {', '.join(MIXED_PRECISION)}, got {mixed_precision!r}"
        )
    if min(pairs, batch_size, gradient_accumulation_steps, max_length, repeats) < 1:
        raise ValueError(
            "pairs, batch_size, gradient_accumulation_steps, max_length, repeats must be >= 1"
        )
    if (steps is not None and steps < 1) or threads < 0:
        raise ValueError(f"steps must be >= 1 (or None) and threads >= 0, got {steps}, {threads}")
    if importlib.util.find_spec("trl") is None:
        raise ModuleNotFoundError(
            f"benchmarks.speed.dpo_speed needs TRL, which is not installed: {_INSTALL_HINT}",
            name="trl",
        )
    import torch

    from algorithms.config import resolve_mixed_precision

    device = "cuda" if torch.cuda.is_available() else "cpu"
    per_epoch = math.ceil(pairs / (batch_size * gradient_accumulation_steps))
    settings = {
        "model": model,
        "pairs": pairs,
        "steps": steps or per_epoch,
        "batch_size": batch_size,
        "gradient_accumulation_steps": gradient_accumulation_steps,
        "max_length": max_length,
        "mixed_precision": resolve_mixed_precision(mixed_precision),
        "gradient_checkpointing": gradient_checkpointing,
        "learning_rate": learning_rate,
        "beta": beta,
        "seed": seed,
        "threads": threads,
        "device": device,
    }
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for _ in range(repeats):
        for side in SIDES:
            runs[side].append(_in_fresh_process(side, settings))
    best = {side: max(runs[side], key=lambda r: r["pairs_per_s"]) for side in SIDES}
    ours, plain, theirs = best["ours"], best["ours-plain"], best["trl"]

    result = {
        "machine": {
            **describe_machine(),
            "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
            "memory": "CUDA max_memory_allocated" if device == "cuda" else "ru_maxrss - baseline",
        },
        "settings": settings,
        "repeats": repeats,
        "ours": ours,
        "ours-plain": plain,
        "trl": theirs,
        "pairs_per_s_of_each_repeat": {
            side: [run["pairs_per_s"] for run in runs[side]] for side in SIDES
        },
        "ratio_pairs_per_s": round(ours["pairs_per_s"] / theirs["pairs_per_s"], 3),
        "ratio_pairs_per_s_vs_plain_rows": round(ours["pairs_per_s"] / plain["pairs_per_s"], 3),
        # A tiny model may not raise a process's peak above its baseline at all.
        "ratio_peak_memory": round(ours["peak_memory_mb"] / theirs["peak_memory_mb"], 3)
        if min(ours["peak_memory_mb"], theirs["peak_memory_mb"]) > 0
        else None,
        "notes": _notes(ours, plain, theirs),
    }
    return write_result(result, out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark from the command line; prints, writes and returns the result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=MODELS, default="default")
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--steps", type=int, help="optimizer steps (default: one epoch)")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--gradient-accumulation-steps", type=int, default=1)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--mixed-precision", choices=MIXED_PRECISION, default="no")
    parser.add_argument("--gradient-checkpointing", action="store_true")
    parser.add_argument("--learning-rate", type=float, default=1e-6)
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=1, help="alternating runs; best of each")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=_RESULTS, help="default: %(default)s")
    args = parser.parse_args(argv)
    try:
        result = run(**vars(args))
    except ModuleNotFoundError as err:
        if err.name != "trl":
            raise
        raise SystemExit(str(err)) from None
    print_result(result)
    return result


if __name__ == "__main__":
    main()
