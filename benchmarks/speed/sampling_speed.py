"""Sampled generation: our one-uniform-draw sampler vs transformers' ``torch.multinomial``.

Reads top to bottom: load the embedded default model (SmolLM2-135M-Instruct) -> format
the first user message of the first N backend test tasks with the agent's chat template
-> generate exactly ``--new-tokens`` tokens for all of them in chunks of ``--batch-size``
(no stop at end-of-sequence, so both sides do the same work), once with transformers'
sampling (``do_sample=True``: ``torch.multinomial``) and once with
:func:`sweetrl_gym.lm.sampling.sampling_processors` (what the library's agents use), the
same temperature, the same model -> report the generated tokens/s of each and the ratio.
With ``--repeats`` above 1 the sides alternate and each reports its median.

    python -m benchmarks.speed.sampling_speed --prompts 32 --batch-size 32
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from agents.default_model import load_default_agent
from benchmarks.speed.output import (
    DEFAULT_DIR,
    local_model_summary,
    print_result,
    write_result,
)
from sweetrl_gym.lm import left_pad, model_device, padding_token_id
from sweetrl_gym.lm.sampling import sampling_processors
from sweetrl_gym.tasks import load_backend_tasks

_RESULTS = DEFAULT_DIR / "sampling_speed.json"


def _settings(side: str, temperature: float) -> dict[str, Any]:
    if side == "multinomial":
        return {"do_sample": True, "temperature": temperature, "top_p": 1.0, "top_k": 0}
    return {
        "do_sample": False,
        "temperature": None,
        "top_p": None,
        "top_k": None,
        "logits_processor": sampling_processors(temperature, 1.0),
    }


def time_side(
    agent: Any, rows: list[list[int]], side: str, new_tokens: int, temperature: float
) -> float:
    """Generate ``new_tokens`` for every row in the agent's batches; return the seconds."""
    import torch

    model, tokenizer = agent.model, agent.tokenizer
    pad = padding_token_id(tokenizer)
    seconds = 0.0
    for start in range(0, len(rows), agent.batch_size):
        input_ids, mask = left_pad(rows[start : start + agent.batch_size], pad, model_device(model))
        began = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(
                input_ids=input_ids,
                attention_mask=mask,
                max_new_tokens=new_tokens,
                min_new_tokens=new_tokens,
                pad_token_id=pad,
                **_settings(side, temperature),
            )
        seconds += time.perf_counter() - began
        if out.shape[1] - input_ids.shape[1] != new_tokens:
            raise RuntimeError(f"{side}: generated {out.shape[1] - input_ids.shape[1]} tokens")
    return seconds


def run(
    *,
    prompts: int = 32,
    batch_size: int = 32,
    new_tokens: int = 64,
    temperature: float = 0.5,
    repeats: int = 3,
    out: Path | None = None,
    agent: Any = None,
) -> dict[str, Any]:
    """Time sampled generation both ways on the same prompts; return the rates and ratio.

    Args:
        prompts: The first N backend test tasks' opening messages, chat-templated.
        batch_size: Rows generated together (the default model's agent batch size).
        new_tokens: Tokens generated for every row (no early stop).
        temperature: The sampling temperature of both sides.
        repeats: Alternating rounds; each side reports its median.
        out: Also write the result to this JSON file (its folders made as needed).
        agent: A local-model agent to use instead of the default model (smoke tests);
            ``batch_size`` then comes from it.

    Returns:
        The machine, model and settings, each side's tokens/s (median and each round),
        and ``speedup`` (ours over multinomial).

    Raises:
        ValueError: If a count is below 1 or the temperature not above 0.
        DefaultModelNotInstalled: If no ``agent`` is given and the default model is not
            installed.

    """
    if min(prompts, batch_size, new_tokens, repeats) < 1 or not temperature > 0:
        raise ValueError("prompts, batch_size, new_tokens, repeats >= 1 and temperature > 0")
    if agent is None:
        agent = load_default_agent(temperature=temperature, batch_size=batch_size)
    tasks = load_backend_tasks("bundled", split="test")[:prompts]
    openings = [[{"role": "user", "content": task.problem_description}] for task in tasks]
    texts = agent.format_prompts(openings)
    rows = sorted(
        (agent.tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts), key=len
    )
    time_side(agent, rows[:1], "ours", 2, temperature)  # warm-up outside the timing
    seconds: dict[str, list[float]] = {"multinomial": [], "ours": []}
    for _ in range(repeats):
        for side in seconds:
            seconds[side].append(time_side(agent, rows, side, new_tokens, temperature))
    tokens = len(rows) * new_tokens
    rates = {side: [round(tokens / s, 1) for s in values] for side, values in seconds.items()}
    median = {side: statistics.median(values) for side, values in rates.items()}

    result = {
        **local_model_summary(agent),
        "prompts": len(rows),
        "batch_size": agent.batch_size,
        "new_tokens": new_tokens,
        "temperature": temperature,
        "repeats": repeats,
        "tokens_per_s": median,
        "tokens_per_s_each_repeat": rates,
        "speedup": round(median["ours"] / median["multinomial"], 2),
    }
    return write_result(result, out)


def main(argv: list[str] | None = None, agent: Any = None) -> dict[str, Any]:
    """Run the benchmark from the command line; prints, writes and returns the result."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--temperature", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds")
    parser.add_argument("--out", type=Path, default=_RESULTS, help="default: %(default)s")
    args = parser.parse_args(argv)
    result = run(**vars(args), agent=agent)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
