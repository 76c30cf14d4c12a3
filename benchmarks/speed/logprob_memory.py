"""Log-prob memory: peak memory and time of scoring a multi-turn dialogue, old vs new.

Reads top to bottom: build one deterministic ColBench-like dialogue (``--turns`` agent
turns, about ``--tokens`` tokens in all) and format each turn's prompt with the model's
chat template and the agent's system prompt -> score its turns four ways, each in its
own fresh process so that its peak memory is its own: {old, new} x {forward only,
forward + backward} -> report, for each, the peak memory above the process's memory
just before scoring (CPU: peak resident set size, ``VmHWM`` after resetting it; CUDA:
``max_memory_allocated``), the wall time and the per-turn log-probs; then the ratios
new/old and the largest per-turn difference.

* OLD is the computation before issue 14, copied below as :func:`_old_turn_logprobs`:
  one row per turn holding that turn's whole prefix (``O(turns x length)`` tokens) and
  the full-vocabulary fp32 logits ``(turns, length, vocab)``.
* NEW is :func:`algorithms.logprobs.encode_dialogues` (the dialogue as one row) and
  :func:`algorithms.logprobs.turn_logprobs` (the output head applied in chunks, only
  at the positions that predict action tokens).

With gradients, both sides' peaks include the parameters' gradients (one model's worth).
A variant whose process passes ``--memory-limit-gb`` (default: 80% of the memory
available at the start) is stopped before the OOM killer steps in; the result then says
so and gives an upper bound of the ratio instead of the ratio.

Target: new/old peak memory <= 0.5 and per-turn log-probs equal to 1e-4 (per-token
means: absolute difference; sums: relative to their size, as fp32 itself rounds a sum
of -1000 nats to ~6e-5).

    python -m benchmarks.speed.logprob_memory --model default --turns 8 --tokens 3000
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import re
import threading
import time
import traceback
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.speed.output import DEFAULT_DIR, run_from_command_line, write_result
from benchmarks.speed.synthetic import MODELS, chats, grow_dialogue, load_model

if TYPE_CHECKING:
    from sweetrl_gym.lm import CausalLM, Tokenizer

__all__ = ["MODELS", "MODES", "VARIANTS", "main", "make_dialogue", "run", "run_variant"]

_RESULTS = DEFAULT_DIR / "logprob_memory.json"
MODES = ("no_grad", "grad")
"""Forward only, or forward + backward."""
VARIANTS = tuple(f"{side}_{mode}" for mode in MODES for side in ("old", "new"))
"""``{old,new}_{no_grad,grad}``: implementation x mode."""
TOLERANCE = 1e-4
MEMORY_TARGET = 0.5

# -- 1. A deterministic ColBench-like dialogue ---------------------------------------------


def make_dialogue(agent: Any, turns: int, tokens: int, seed: int = 0) -> tuple[list, list]:
    """Return ``(prompts, actions)`` of a ``turns``-turn dialogue of about ``tokens`` tokens.

    The dialogue of :func:`benchmarks.speed.synthetic.grow_dialogue`, each turn's prompt
    formatted with ``agent``'s chat template and system prompt.
    """
    users, actions = grow_dialogue(agent, turns, tokens, random.Random(seed))
    return agent.format_prompts(chats(users, actions)), actions


# -- 2. The two implementations -------------------------------------------------------------


def _old_turn_logprobs(model: CausalLM, tokenizer: Tokenizer, prompts: list, actions: list) -> Any:
    """Score turns as before issue 14 (the baseline): rows per turn, full fp32 logits.

    A copy of the old ``encode_turns`` + ``turn_logprobs`` (``max_length=None``, all
    rows in one forward pass), kept here so the comparison needs no old checkout.
    """
    import torch

    prompt_ids = tokenizer(prompts, add_special_tokens=False)["input_ids"]
    action_ids = tokenizer(actions, add_special_tokens=False)["input_ids"]
    rows = [(p, [*a, tokenizer.eos_token_id]) for p, a in zip(prompt_ids, action_ids)]
    width = max(len(p) + len(a) for p, a in rows)
    input_ids = torch.full((len(rows), width), tokenizer.pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), width), dtype=torch.long)
    action_mask = torch.zeros((len(rows), width), dtype=torch.long)
    for row, (prompt, action) in enumerate(rows):
        input_ids[row, : len(prompt) + len(action)] = torch.tensor([*prompt, *action])
        attention_mask[row, : len(prompt) + len(action)] = 1
        action_mask[row, len(prompt) : len(prompt) + len(action)] = 1
    device = next(model.parameters()).device
    input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    logits = logits[:, :-1].float()
    token_logps = logits.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    token_logps = token_logps - torch.logsumexp(logits, dim=-1)
    mask = action_mask[:, 1:].to(device).float()
    total, count = (token_logps * mask).sum(dim=1), mask.sum(dim=1)
    shape = {"rows": len(rows), "padded_tokens": input_ids.numel()}
    return total, total / count.clamp(min=1), shape


def _new_turn_logprobs(model: CausalLM, tokenizer: Tokenizer, prompts: list, actions: list) -> Any:
    from algorithms.logprobs import encode_dialogues, turn_logprobs

    turns = encode_dialogues(tokenizer, [(prompts, actions)])
    logps = turn_logprobs(model, turns)
    shape = {"rows": len(turns), "padded_tokens": turns.input_ids.numel()}
    return logps.sum, logps.mean, shape


# -- 3. One variant, in its own fresh process ----------------------------------------------


def _status_kib(field: str) -> int:
    text = Path("/proc/self/status").read_text()
    return int(re.search(rf"^{field}:\s+(\d+)", text, re.MULTILINE).group(1))


class _PeakMemory:
    """Peak memory from a starting point: CUDA allocator stats, or the CPU's peak RSS."""

    def __init__(self, device: str):
        self.device = device

    def start(self) -> None:
        import torch

        if self.device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.base = torch.cuda.memory_allocated()
            return
        self.base = _status_kib("VmRSS") * 1024
        # Writing 5 resets the kernel's peak-RSS mark (VmHWM) to the current RSS.
        Path("/proc/self/clear_refs").write_text("5")

    def peak_mb(self) -> float:
        import torch

        if self.device == "cuda":
            torch.cuda.synchronize()
            return (torch.cuda.max_memory_allocated() - self.base) / 2**20
        return (_status_kib("VmHWM") * 1024 - self.base) / 2**20


def run_variant(variant: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Measure one variant in this (fresh) process; returns a JSON-able dict."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if settings["memory_limit_gb"]:
        _guard_memory(settings["memory_limit_gb"])
    import torch
    import transformers

    from agents import TransformersAgent

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()  # "Loading weights" from every process
    if settings["threads"]:
        torch.set_num_threads(settings["threads"])
    device = settings["device"]
    model, tokenizer = load_model(settings["model"], device)
    agent = TransformersAgent(model, tokenizer, device=device)
    prompts, actions = make_dialogue(agent, settings["turns"], settings["tokens"], settings["seed"])
    score = _old_turn_logprobs if variant.startswith("old") else _new_turn_logprobs
    grad = not variant.endswith("no_grad")

    def once(turns: int) -> tuple[Any, Any, dict[str, int]]:
        with torch.set_grad_enabled(grad):
            total, mean, shape = score(model, tokenizer, prompts[:turns], actions[:turns])
            if grad:
                mean.sum().backward()
        return total.detach(), mean.detach(), shape

    once(1)  # warm up (thread pools, kernels) on the shortest turn, outside the measure
    model.zero_grad(set_to_none=True)
    gc.collect()
    meter = _PeakMemory(device)
    meter.start()
    start = time.perf_counter()
    total, mean, shape = once(len(prompts))
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = meter.peak_mb()
    return {
        "peak_memory_mb": round(peak, 1),
        "baseline_mb": round(meter.base / 2**20, 1),
        "seconds": round(seconds, 3),
        **shape,
        "turn_logprob_sums": [float(x) for x in total],
        "turn_logprob_means": [float(x) for x in mean],
        "dialogue_tokens": len(tokenizer(prompts[-1], add_special_tokens=False)["input_ids"])
        + len(tokenizer(actions[-1], add_special_tokens=False)["input_ids"])
        + 1,
        "vocab_size": int(model.get_output_embeddings().weight.shape[0]),
        "model": getattr(model, "name_or_path", type(model).__name__),
        "torch_threads": torch.get_num_threads(),
    }


_OVER_LIMIT = 86
"""Exit status of a variant's process that went over ``--memory-limit-gb``."""


def _guard_memory(limit_gb: float) -> None:
    """End this process when its resident memory passes ``limit_gb``.

    On a shared machine an old variant too big for it must not wake the OOM killer (who
    may pick someone else's process): a thread polls ``VmRSS`` and exits first.
    """
    limit_kib = limit_gb * 2**20

    def watch() -> None:
        while _status_kib("VmRSS") < limit_kib:
            time.sleep(0.01)
        os._exit(_OVER_LIMIT)

    threading.Thread(target=watch, daemon=True).start()


def _child(variant: str, settings: dict[str, Any], send: Any) -> None:
    try:
        send.send(("ok", run_variant(variant, settings)))
    except BaseException:
        send.send(("error", traceback.format_exc()))


def _in_fresh_process(variant: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Run one variant in a new interpreter (spawn): its memory is measured alone."""
    context = get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(variant, settings, send), daemon=True)
    process.start()
    send.close()
    try:
        status, payload = receive.recv()
    except EOFError:  # it died without a word
        status, payload = "died", None
    process.join()
    if status == "ok":
        return payload
    if process.exitcode == _OVER_LIMIT:
        return {"over_memory_limit_gb": settings["memory_limit_gb"]}
    if status == "error":
        raise RuntimeError(f"the {variant!r} process failed:\n{payload}")
    raise RuntimeError(
        f"the {variant!r} process died (exit status {process.exitcode}), most likely out of "
        "memory; lower --tokens or set --memory-limit-gb"
    )


def _memory_available_gb() -> float | None:
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    return int(re.search(r"^MemAvailable:\s+(\d+)", text, re.MULTILINE).group(1)) / 2**20


# -- 4. All variants, compared ----------------------------------------------------------------


def _compare(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Compare NEW with OLD for one mode (forward only, or forward + backward)."""
    if "over_memory_limit_gb" in new:
        return {"error": f"the new variant went over {new['over_memory_limit_gb']} GB"}
    if "over_memory_limit_gb" in old:
        # OLD needed more than the limit above its own starting memory (about NEW's).
        room_mb = old["over_memory_limit_gb"] * 1024 - new["baseline_mb"]
        at_most = round(new["peak_memory_mb"] / room_mb, 3)
        return {
            "ratio_peak_memory": None,
            "ratio_peak_memory_at_most": at_most,
            "ratio_seconds": None,
            "equal": None,
            "meets_memory_target": at_most <= MEMORY_TARGET,
        }
    # Per-token means absolutely; sums relative to their size (fp32 itself cannot hold
    # a sum of -1000 nats closer than ~6e-5).
    means = max(abs(a - b) for a, b in zip(old["turn_logprob_means"], new["turn_logprob_means"]))
    sums = max(
        abs(a - b) / max(1.0, abs(a))
        for a, b in zip(old["turn_logprob_sums"], new["turn_logprob_sums"])
    )
    ratio = round(new["peak_memory_mb"] / old["peak_memory_mb"], 3)
    return {
        "ratio_peak_memory": ratio if old["peak_memory_mb"] > 0 else None,
        "ratio_seconds": round(new["seconds"] / old["seconds"], 3),
        "max_difference_means": float(f"{means:.3g}"),
        "max_relative_difference_sums": float(f"{sums:.3g}"),
        "equal": max(means, sums) <= TOLERANCE,
        "meets_memory_target": old["peak_memory_mb"] > 0 and ratio <= MEMORY_TARGET,
    }


def run(
    *,
    model: str = "default",
    turns: int = 8,
    tokens: int = 3000,
    threads: int = 0,
    seed: int = 0,
    memory_limit_gb: float | None = None,
    out: Path | None = None,
) -> dict[str, Any]:
    """Measure every variant in its own process and compare them; return the result.

    Args:
        model: ``"default"`` (SmolLM2-135M, embedded) or ``"tiny"`` (random init).
        turns: Agent turns in the dialogue.
        tokens: About how many tokens the whole dialogue has.
        threads: Torch CPU threads (0: torch's default).
        seed: Seeds the dialogue's text.
        memory_limit_gb: A variant's process ends when its resident memory passes this
            (0: no limit; ``None``: 80% of the memory available now); the result then
            says so and bounds the ratio instead of measuring it.
        out: Also write the result to this JSON file (its folders made as needed).

    Returns:
        The machine, the settings, the model, its vocabulary size and the dialogue's
        length, every variant's measurements, the comparison of each mode (``no_grad``,
        ``grad``: ratios new/old, largest differences, whether equal within tolerance)
        and whether the targets are met.

    Raises:
        ValueError: If ``model`` is unknown, ``turns`` or ``tokens`` is below 1, or
            ``threads`` or ``memory_limit_gb`` is negative.
        DefaultModelNotInstalled: If ``model="default"`` and it is not installed.
        RuntimeError: If a variant's process failed or died.

    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    if min(turns, tokens) < 1 or threads < 0 or (memory_limit_gb or 0) < 0:
        raise ValueError(
            "turns and tokens must be >= 1, threads and memory_limit_gb >= 0; got "
            f"turns={turns}, tokens={tokens}, threads={threads}, memory_limit_gb={memory_limit_gb}"
        )
    import torch

    if model == "default":
        from agents.default_model import default_gguf_path

        default_gguf_path()  # say so now if it is missing, not from four processes
    if memory_limit_gb is None:
        available = _memory_available_gb()
        memory_limit_gb = round(0.8 * available, 1) if available else 0.0
    settings = {
        "model": model,
        "turns": turns,
        "tokens": tokens,
        "threads": threads,
        "seed": seed,
        "memory_limit_gb": memory_limit_gb,
        "device": "cuda" if torch.cuda.is_available() else "cpu",
    }
    runs = {variant: _in_fresh_process(variant, settings) for variant in VARIANTS}
    modes = {mode: _compare(runs[f"old_{mode}"], runs[f"new_{mode}"]) for mode in MODES}
    new = runs["new_no_grad"]
    result = {
        "machine": {
            "cpu_count": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "device": torch.cuda.get_device_name() if settings["device"] == "cuda" else "cpu",
            "memory": "CUDA max_memory_allocated - allocated before"
            if settings["device"] == "cuda"
            else "peak RSS (VmHWM, reset just before) - RSS before",
        },
        "settings": settings,
        "model": new.get("model"),
        "vocab_size": new.get("vocab_size"),
        "dialogue_tokens": new.get("dialogue_tokens"),
        "variants": runs,
        **modes,
        "equal_within_tolerance": all(m.get("equal") is not False for m in modes.values()),
        "meets_memory_target": all(m.get("meets_memory_target") for m in modes.values()),
        "target": f"new/old peak memory <= {MEMORY_TARGET}; per-turn log-probs equal to "
        f"{TOLERANCE:g} (per-token means: absolute; sums: relative)",
    }
    return write_result(result, out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark from the command line; prints, writes and returns the result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=MODELS, default="default")
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=3000, help="about this many in all")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--memory-limit-gb",
        type=float,
        help="end a variant's process above this resident memory (0: never; default: 80%% "
        "of the memory available at the start)",
    )
    parser.add_argument("--out", type=Path, default=_RESULTS, help="default: %(default)s")
    return run_from_command_line(parser, argv, run)


if __name__ == "__main__":
    main()
