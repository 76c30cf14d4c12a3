"""All speed benchmarks in one run: each ours-vs-baseline ratio measured side by side.

``sweetrl bench`` runs :func:`main`, which reads top to bottom: describe the machine ->
run each selected benchmark at the chosen scale (each times ours and its baseline in the
same run, on the same work) -> turn each result into rows (ours, baseline, ratio, notes)
-> write ``bench.json`` (rows, machine, every benchmark's full result) and ``bench.md``
(a table) to ``--out``. A benchmark that cannot run here (TRL not installed, no browser
for the renderer, the default model missing) becomes a row "skipped: <reason>" and the
others still run; one that fails becomes a row "error: <reason>".

The benchmarks: each module's ``run(...)`` takes its settings as keyword arguments and
returns its result, which is what this calls; each also runs alone as
``python -m benchmarks.speed.<module>``, which prints the result:

- ``sandbox`` (sandbox_speed): candidates scored per second, our warm sandbox vs a fresh
  Python interpreter per candidate and vs the official in-process ``exec`` (no isolation).
- ``env`` (env_speed): env steps/s with the offline simulators, ``num_envs`` envs stepped
  in parallel vs one env at a time (backend and frontend).
- ``render`` (render_speed): pages rendered per second, our reused browser vs a fresh
  browser per page.
- ``rollout`` (rollout_speed): agent turns/s with a local model, batched across envs vs
  one env at a time; and the batched rollout's generated tokens/s vs a bare
  ``model.generate`` on the same prompts.
- ``sampling`` (sampling_speed): sampled generation tokens/s, our one-uniform-draw
  sampler vs transformers' ``torch.multinomial``, the same model and prompts.
- ``dpo`` (dpo_speed): DPO training pairs/s and peak memory, ours vs TRL's DPOTrainer,
  and ours against its own pairs as two plain rows (the prompt read twice).
- ``logprobs`` (logprob_memory): peak memory and time of scoring a multi-turn dialogue's
  turns, one packed row + chunked output head vs one row per turn + full logits.
- ``critic`` (critic_speed): ArCHer critic steps/s with sampled actions for ``V``'s
  target, read as branches of the dialogue's row vs as a plain row each.

    python -m benchmarks.speed.bench --scale quick --out runs/bench
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.machine import describe_machine, machine_line
from benchmarks.speed.output import DEFAULT_DIR

__all__ = [
    "BENCHMARKS",
    "SCALES",
    "Measure",
    "Row",
    "describe_machine",
    "main",
    "other_cpu_load",
    "write_markdown",
]

SCALES: dict[str, dict[str, dict[str, Any]]] = {
    # For the tests: a couple of tasks each (use with --tiny).
    "smoke": {
        "sandbox": {"tasks": 2},
        "env": {"tasks": 2, "num_envs": 2},
        "render": {"pages": 2},
        "rollout": {"tasks": 2, "num_envs": 2, "max_turns": 2, "max_new_tokens": 4},
        "sampling": {"prompts": 4, "new_tokens": 4, "repeats": 1},
        "dpo": {"pairs": 4, "batch_size": 2},
        "logprobs": {"turns": 3, "tokens": 300},
        "critic": {"trajectories": 2, "turns": 2, "tokens": 200, "samples": 2, "batch_size": 2},
    },
    # A few minutes on 2 idle CPU cores with the default model.
    "quick": {
        "sandbox": {"tasks": 30},
        "env": {"tasks": 32, "frontend_tasks": 6},
        "render": {"pages": 8},
        "rollout": {"tasks": 16, "num_envs": 16, "max_turns": 2, "max_new_tokens": 64},
        "sampling": {"prompts": 32, "batch_size": 32, "new_tokens": 32, "repeats": 2},
        "dpo": {"pairs": 4, "batch_size": 2},
        "logprobs": {"turns": 8, "tokens": 500},
        "critic": {"trajectories": 4, "turns": 4, "tokens": 800, "samples": 1, "batch_size": 2},
    },
    # The budgets of the standalone scripts.
    "full": {
        "sandbox": {"tasks": 100},
        "env": {"tasks": 100, "frontend_tasks": 24},
        "render": {"pages": 30},
        "rollout": {"tasks": 16, "num_envs": 8, "max_turns": 3, "max_new_tokens": 96},
        "sampling": {"prompts": 64, "batch_size": 32, "new_tokens": 64, "repeats": 3},
        "dpo": {"pairs": 16, "batch_size": 4},
        "logprobs": {"turns": 8, "tokens": 3000},
        "critic": {"trajectories": 8, "turns": 4, "tokens": 1500, "samples": 2, "batch_size": 4},
    },
}
"""Each benchmark's keyword arguments to its module's ``run`` at each ``--scale``.

Those not given keep ``run``'s defaults (the standalone script's); the runners here add
the output file and the model (the tiny one with ``--tiny``).
"""

_TRL_HINT = 'pip install "sweetrl-gym[bench]"'
# Optional dependencies: a benchmark that needs a missing one is skipped, not failed.
_OPTIONAL = {"trl", "datasets", "playwright", "skimage"}


@dataclass
class Measure:
    """One side of a comparison: what was run and how fast (or big) it was."""

    label: str
    value: float
    unit: str

    def __str__(self) -> str:
        return f"{self.value:g} {self.unit} ({self.label})"


@dataclass
class Row:
    """One line of the report: ours vs a baseline, measured in the same run.

    Attributes:
        benchmark: The benchmark that produced it (``sandbox``, ``env``, ...).
        name: What the row measures.
        status: ``"ok"``, ``"skipped: <reason>"`` or ``"error: <reason>"``.
        ours: Our side (``None`` unless ok).
        baseline: The baseline side (``None`` unless ok).
        ratio: ``ours.value / baseline.value`` (``None`` when not measurable).
        better: ``"higher"`` or ``"lower"``: which way the ratio is good for us.
        notes: What was run and what else the result says.
        seconds: Wall time of the whole benchmark the row comes from.
        other_cores: CPU cores that other processes kept busy meanwhile, on average
            (``None`` without ``/proc``): a busy machine skews ratios.

    """

    benchmark: str
    name: str
    status: str = "ok"
    ours: Measure | None = None
    baseline: Measure | None = None
    ratio: float | None = None
    better: str = "higher"
    notes: str = ""
    seconds: float | None = field(default=None)
    other_cores: float | None = field(default=None)


def _row(benchmark: str, name: str, ours: Measure, baseline: Measure, **extra: Any) -> Row:
    ratio = round(ours.value / baseline.value, 3) if baseline.value > 0 else None
    return Row(benchmark, name, ours=ours, baseline=baseline, ratio=ratio, **extra)


class Skip(Exception):
    """A benchmark cannot run here (a missing optional dependency); the reason says why."""


# -- 1. The machine -------------------------------------------------------------------------


def _processes() -> dict[int, tuple[int, float]] | None:
    """Return pid -> (parent pid, CPU seconds incl. reaped children) from ``/proc``, or None."""
    if not Path("/proc/self/stat").exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # it ended meanwhile
        # utime stime cutime cstime; but init reaps every orphan (a closed browser's
        # helpers among them), so its children's time is nobody's in particular.
        pid = int(entry.name)
        cpu = sum(int(x) for x in fields[11 : 13 if pid == 1 else 15]) / tick
        table[pid] = (int(fields[1]), cpu)
    return table


def _descendants(table: dict[int, tuple[int, float]], root: int) -> set[int]:
    family, grew = {root}, True
    while grew:
        grew = False
        for pid, (parent, _) in table.items():
            if parent in family and pid not in family:
                family.add(pid)
                grew = True
    return family


@contextlib.contextmanager
def other_cpu_load() -> Iterator[dict[str, Any]]:
    """Measure the CPU cores other processes use while the block runs (into the dict).

    "Other" are the processes that were already running before the block and are not
    this process or its descendants; anything started meanwhile counts as ours (a
    browser's helpers leave our process tree, so they cannot be told apart by parent).
    Fills ``cores`` (their average total; ``None`` without ``/proc``) and ``by_process``
    (pid -> cores, for those that used at least 0.05 cores).
    """
    measured: dict[str, Any] = {"cores": None, "by_process": {}}
    before, start = _processes(), time.perf_counter()
    try:
        yield measured
    finally:
        after, wall = _processes(), time.perf_counter() - start
        if before is not None and after is not None and wall > 0:
            ours = _descendants(before, os.getpid())
            used = {
                pid: max(0.0, after[pid][1] - cpu) / wall
                for pid, (_, cpu) in before.items()
                if pid not in ours and pid in after
            }
            measured["cores"] = round(sum(used.values()), 2)
            measured["by_process"] = {
                pid: round(cores, 2) for pid, cores in used.items() if cores >= 0.05
            }


# -- 2. The benchmarks: run one, turn its result into rows ----------------------------------


def _run_sandbox(
    settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any], list[Row]]:
    from benchmarks.speed import sandbox_speed

    result = sandbox_speed.run(**settings)
    rates = result["candidates_per_s"]
    ours = Measure("warm sandbox, one batch", rates["sandbox_batched"], "candidates/s")
    notes = (
        f"{result['candidates']} candidates ({result['passed']} pass); verdicts agree: "
        f"{result['verdicts_agree']}; sandbox one at a time: {rates['sandbox_sequential']}/s; "
        f"isolation: {result['isolation']}"
    )
    rows = [
        _row(
            "sandbox",
            "sandbox scoring vs a fresh interpreter per candidate",
            ours,
            Measure("fresh Python per candidate", rates["fresh_interpreter"], "candidates/s"),
            notes=notes,
        ),
        _row(
            "sandbox",
            "sandbox scoring vs official in-process exec",
            ours,
            Measure("exec + SIGALRM in-process", rates["official_in_process"], "candidates/s"),
            notes="the official evaluator's way: faster, but no isolation at all",
        ),
    ]
    return result, rows


def _run_env(
    settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any], list[Row]]:
    from benchmarks.speed import env_speed

    result = env_speed.run(**settings, out=raw_dir / "env_speed.json")
    rows = []
    for short, env_id in env_speed.ENVIRONMENTS.items():
        part = result.get(short)
        name = f"{env_id} steps/s, offline simulator"
        if part is None:
            continue
        if "skipped" in part:
            rows.append(Row("env", name, status=f"skipped: {part['skipped']}"))
            continue
        one, parallel = part["one_env"], part["parallel"]
        rewards = f"{parallel['mean_reward']:g} vs {one['mean_reward']:g}"
        rows.append(
            _row(
                "env",
                name,
                Measure(f"{part['num_envs']} envs in parallel", parallel["steps_per_s"], "steps/s"),
                Measure("one env at a time", one["steps_per_s"], "steps/s"),
                notes=f"{part['tasks']} tasks, {part['agent']}; episodes/s "
                f"{parallel['episodes_per_s']:g} vs {one['episodes_per_s']:g}; mean reward "
                f"{rewards} (same episodes: {part['same_rewards']})",
            )
        )
    return result, rows


def _run_render(
    settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any], list[Row]]:
    from benchmarks.speed import env_speed

    missing = env_speed.renderer_missing()
    if missing is not None:
        raise Skip(f"renderer not set up: {missing}")
    from benchmarks.speed import render_speed

    result = render_speed.run(**settings, out=raw_dir / "render_speed.json")
    rates = result["renders_per_s"]
    pooled = next(key for key in rates if key.startswith("reused_pool_"))
    pool = pooled.removeprefix("reused_pool_")
    row = _row(
        "render",
        "page renders vs a fresh browser per page",
        Measure(f"reused browser, {pool} pages at once", rates[pooled], "renders/s"),
        Measure("fresh browser per page", rates["fresh_browser_per_page"], "renders/s"),
        notes=f"{result['pages']} pages (mean height {result['mean_height_px']} px); reused "
        f"one at a time: {rates['reused_sequential']}/s; same pixels: {result['renders_agree']}",
    )
    return result, [row]


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    """Set environment variables (inherited by the benchmark's processes) for a while."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _tiny_agent(max_new_tokens: int, batch_size: int) -> Any:
    from agents import TransformersAgent
    from agents.tiny_model import make_tiny_lm

    model, tokenizer = make_tiny_lm(seed=0)
    return TransformersAgent(
        model, tokenizer, temperature=0.0, max_new_tokens=max_new_tokens, batch_size=batch_size
    )


def _run_rollout(
    settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any], list[Row]]:
    from agents import DefaultModelNotInstalled
    from benchmarks.speed import rollout_speed

    agent = None
    if tiny:
        agent = _tiny_agent(settings["max_new_tokens"], settings["num_envs"])
    try:
        result = rollout_speed.run(**settings, out=raw_dir / "rollout_speed.json", agent=agent)
    except DefaultModelNotInstalled as err:
        raise Skip(f"the default model is not installed: {err}") from None
    sequential = result["one_env_at_a_time"]
    batched_key = next(key for key in result if key.startswith("batched_"))
    batched, bare = result[batched_key], result["bare_generate"]
    envs = batched_key.removeprefix("batched_").removesuffix("_envs")
    work = (
        f"{result['model']} ({result['dtype']}), greedy, {result['tasks']} tasks x up to "
        f"{result['max_turns']} turns, {result['max_new_tokens']} new tokens at most"
    )
    speedup = _row(
        "rollout",
        "agent turns/s, local model",
        Measure(f"{envs} envs, one batched generation", batched["turns_per_s"], "turns/s"),
        Measure("one env at a time", sequential["turns_per_s"], "turns/s"),
        notes=f"{work}; same work: turns {batched['turns']} vs {sequential['turns']}, episodes "
        f"{batched['episodes']} vs {sequential['episodes']}; generated tokens/s "
        f"{batched['tokens_per_s']:g} vs {sequential['tokens_per_s']:g}",
    )
    overhead = _row(
        "rollout",
        "rollout tokens/s vs bare model.generate",
        Measure(
            f"collect, {envs} envs (chat templates, envs, tests included)",
            batched["tokens_per_s"],
            "tokens/s",
        ),
        Measure(
            f"model.generate alone, same prompts, batch {result['batch_size']}",
            bare["tokens_per_s"],
            "tokens/s",
        ),
        notes=f"{work}; same work: {bare['sequences']} prompts (the rollout's own, "
        f"{'all' if result['same_prompts'] else 'NOT all'} replayed), generated tokens "
        f"{batched['generated_tokens']} vs {bare['generated_tokens']} (each reply through its "
        f"end-of-sequence token); the rollout reuses the states of earlier turns "
        f"({batched['reused_tokens']} of {batched['prompt_tokens']} prompt tokens), bare "
        "generate computes every prompt whole",
    )
    return result, [speedup, overhead]


def _run_sampling(
    settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any], list[Row]]:
    from agents import DefaultModelNotInstalled
    from benchmarks.speed import sampling_speed

    agent = _tiny_agent(4, settings.get("batch_size", 4)) if tiny else None
    try:
        result = sampling_speed.run(**settings, out=raw_dir / "sampling_speed.json", agent=agent)
    except DefaultModelNotInstalled as err:
        raise Skip(f"the default model is not installed: {err}") from None
    rates = result["tokens_per_s"]
    row = _row(
        "sampling",
        "sampled generation tokens/s",
        Measure("one uniform draw a row (sweetrl_gym.lm.sampling)", rates["ours"], "tokens/s"),
        Measure("transformers do_sample (torch.multinomial)", rates["multinomial"], "tokens/s"),
        notes=f"{result['model']} ({result['dtype']}), {result['prompts']} prompts in batches "
        f"of {result['batch_size']}, {result['new_tokens']} tokens each at temperature "
        f"{result['temperature']:g}; median of {result['repeats']} alternating rounds",
    )
    return result, [row]


def _run_dpo(
    settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any], list[Row]]:
    if importlib.util.find_spec("trl") is None:
        raise Skip(f"TRL is not installed: {_TRL_HINT}")
    from benchmarks.speed import dpo_speed

    # The tiny model's byte-level tokenizer makes longer sequences of the same dialogues.
    model = {"model": "tiny", "max_length": 1024} if tiny else {"model": "default"}
    with _environment(HF_DATASETS_DISABLE_PROGRESS_BARS="1"):  # TRL's dataset-map bars
        result = dpo_speed.run(**{**settings, **model}, out=raw_dir / "dpo_speed.json")
    ours, plain, trl = result["ours"], result["ours-plain"], result["trl"]
    used = result["settings"]
    check = trl["token_check"]
    work = (
        f"{used['pairs']} pairs, batch {used['batch_size']}, "
        f"{ours['optimizer_steps']} optimizer steps, max length {used['max_length']}, "
        f"{result['machine']['device']}; token-identical sequences "
        f"{check['identical_sequences']}/{check['sequences']}"
    )
    speed = _row(
        "dpo",
        "DPO training pairs/s",
        Measure("SweetRL.fit_policy (sigmoid DPO)", ours["pairs_per_s"], "pairs/s"),
        Measure("TRL DPOTrainer", trl["pairs_per_s"], "pairs/s"),
        notes=f"{work}; train seconds {ours['train_seconds']:g} vs {trl['train_seconds']:g}",
    )
    packed = _row(
        "dpo",
        "DPO turn pairs: the prompt read once",
        Measure("a pair in one row (encode_turn_pairs)", ours["pairs_per_s"], "pairs/s"),
        Measure("two plain rows a pair", plain["pairs_per_s"], "pairs/s"),
        notes=f"{work}; input tokens {ours['train_tokens']} vs {plain['train_tokens']}",
    )
    memory = _row(
        "dpo",
        "DPO training peak memory",
        Measure("SweetRL.fit_policy", ours["peak_memory_mb"], "MB"),
        Measure("TRL DPOTrainer", trl["peak_memory_mb"], "MB"),
        better="lower",
        notes=f"{result['machine']['memory']}, each side in a fresh process; lower is better",
    )
    if result["ratio_peak_memory"] is None:  # a side stayed below its import peak
        memory.ratio = None
        memory.notes += "; too small to measure here (a tiny model may add nothing)"
    return result, [speed, packed, memory]


def _run_logprobs(
    settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any], list[Row]]:
    from agents import DefaultModelNotInstalled
    from benchmarks.speed import logprob_memory

    model = "tiny" if tiny else "default"
    try:
        result = logprob_memory.run(
            **{**settings, "model": model}, out=raw_dir / "logprob_memory.json"
        )
    except DefaultModelNotInstalled as err:
        raise Skip(f"the default model is not installed: {err}") from None
    used = result["settings"]
    work = (
        f"{result['model']}, {used['turns']}-turn dialogue of {result['dialogue_tokens']} "
        f"tokens, vocabulary {result['vocab_size']}, {result['machine']['device']}"
    )
    rows = []
    for mode, what in (("no_grad", "forward only"), ("grad", "forward + backward")):
        old, new, compared = (
            result["variants"][f"old_{mode}"],
            result["variants"][f"new_{mode}"],
            result[mode],
        )
        name = f"log-prob peak memory, {what}"
        if "error" in compared:
            rows.append(Row("logprobs", name, status=f"error: {compared['error']}"))
            continue
        ours = Measure("one row per dialogue, chunked head", new["peak_memory_mb"], "MB")
        if "over_memory_limit_gb" in old:
            room = round(old["over_memory_limit_gb"] * 1024 - new["baseline_mb"], 1)
            baseline = Measure("one row per turn, full logits: over the limit", room, "MB")
            notes = f"{work}; the old way passed the {old['over_memory_limit_gb']} GB limit "
            notes += "and was stopped, so the ratio is an upper bound; lower is better"
        else:
            baseline = Measure("one row per turn, full logits", old["peak_memory_mb"], "MB")
            notes = (
                f"{work}; seconds {new['seconds']:g} vs {old['seconds']:g}; rows "
                f"{new['rows']} vs {old['rows']}; per-turn log-probs equal to 1e-4: "
                f"{compared['equal']}; lower is better"
            )
        rows.append(_row("logprobs", name, ours, baseline, better="lower", notes=notes))
    return result, rows


def _run_critic(
    settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any], list[Row]]:
    from agents import DefaultModelNotInstalled
    from benchmarks.speed import critic_speed

    model = "tiny" if tiny else "default"
    try:
        result = critic_speed.run(**{**settings, "model": model}, out=raw_dir / "critic_speed.json")
    except DefaultModelNotInstalled as err:
        raise Skip(f"the default model is not installed: {err}") from None
    used = result["settings"]
    ours, plain = result["branches"], result["plain-rows"]
    row = _row(
        "critic",
        "ArCHer critic steps/s, sampled actions for V's target",
        Measure("branches of the dialogue's row", ours["steps_per_s"], "steps/s"),
        Measure("a plain row per (state, sample)", plain["steps_per_s"], "steps/s"),
        notes=f"{result['model']} ({result['dtype']}), {used['trajectories']} dialogues x "
        f"{used['turns']} turns of ~{used['tokens']} tokens, {used['samples']} samples a "
        f"turn, batch {used['batch_size']}, {ours['steps']} steps; the target's input "
        f"tokens {ours['target_tokens']} vs {plain['target_tokens']}; critic losses equal to "
        f"{critic_speed.TOLERANCE:g}: {result['losses_agree']} (largest difference "
        f"{result['max_loss_difference']:g}); best of {used['repeats']} alternating rounds",
    )
    return result, [row]


Runner = Callable[[dict[str, Any], Path, bool], tuple[dict[str, Any], list[Row]]]
"""Run one benchmark (its settings, the folder for its raw result, ``--tiny``) -> rows."""

BENCHMARKS: dict[str, tuple[Runner, str]] = {
    "sandbox": (_run_sandbox, "sandbox candidates/s vs a fresh interpreter and in-process exec"),
    "env": (_run_env, "env steps/s with the offline simulators, parallel vs one env"),
    "render": (_run_render, "page renders/s, reused browser vs a fresh browser per page"),
    "rollout": (_run_rollout, "rollout speed: batched vs one env at a time, vs bare generate"),
    "sampling": (_run_sampling, "sampled generation tokens/s, one uniform draw vs multinomial"),
    "dpo": (_run_dpo, "DPO training tokens/s and peak memory vs TRL's DPOTrainer"),
    "logprobs": (_run_logprobs, "log-prob peak memory, packed dialogue vs a row per turn"),
    "critic": (_run_critic, "ArCHer critic steps/s, sampled actions as branches vs rows"),
}
"""Benchmark name -> (runner, what it compares), in the order they run."""


def _failure(err: BaseException) -> str:
    """Say why a benchmark did not finish: skipped (missing optional piece) or error."""
    from sweetrl_gym.render import AssetMissingError, BrowserNotFoundError

    if isinstance(err, Skip):
        return f"skipped: {err}"
    if isinstance(err, BrowserNotFoundError | AssetMissingError):
        return f"skipped: renderer not set up: {err}"
    if isinstance(err, ModuleNotFoundError) and (err.name or "").split(".")[0] in _OPTIONAL:
        return f"skipped: {err.name} is not installed"
    lines = str(err).strip().splitlines()
    return f"error: {type(err).__name__}" + (f": {lines[0][:300]}" if lines else "")


def run_one(
    name: str, settings: dict[str, Any], raw_dir: Path, tiny: bool
) -> tuple[dict[str, Any] | None, list[Row]]:
    """Run one benchmark; a missing dependency or a failure becomes a row, never a crash."""
    runner, what = BENCHMARKS[name]
    start = time.perf_counter()
    result: dict[str, Any] | None = None
    with other_cpu_load() as load:
        try:
            result, rows = runner(settings, raw_dir, tiny)
        except (Exception, SystemExit) as err:  # the other benchmarks still run
            rows = [Row(name, what, status=_failure(err))]
    seconds = round(time.perf_counter() - start, 2)
    for row in rows:
        row.seconds, row.other_cores = seconds, load["cores"]
    return result, rows


# -- 3. The report ---------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


BUSY_CORES = 0.25
"""Other processes using at least this many cores on average make a row's ratio suspect."""


def _busy_warning(row: dict[str, Any], machine: dict[str, Any]) -> str:
    other = row.get("other_cores")
    if other is None or other < BUSY_CORES:
        return ""
    return (
        f"; BUSY MACHINE: other processes used {other:.1f} of {machine['usable_cores']} cores "
        "meanwhile, so this ratio is unreliable"
    )


def write_markdown(report: dict[str, Any], path: Path) -> None:
    """Write the report as a markdown table: benchmark | ours | baseline | ratio | notes."""
    lines = [
        "# sweetrl-gym speed benchmarks",
        "",
        f"`sweetrl bench {' '.join(report['argv'])}`, {report['started_at']}, "
        f"{report['seconds']:.0f} s in all. Each ratio is ours / baseline, both measured "
        "side by side in this run (higher is better unless the notes say otherwise).",
        "",
        f"**Machine:** {_cell(machine_line(report['machine']))}",
        "",
        "| benchmark | ours | baseline | ratio | notes |",
        "|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        if row["status"] != "ok":
            lines.append(f"| {_cell(row['name'])} | — | — | — | {_cell(row['status'])} |")
            continue
        ours, baseline = Measure(**row["ours"]), Measure(**row["baseline"])
        ratio = f"{row['ratio']:.2f}x" if row["ratio"] is not None else "n/a"
        notes = row["notes"] + _busy_warning(row, report["machine"])
        lines.append(
            f"| {_cell(row['name'])} | {_cell(str(ours))} | {_cell(str(baseline))} | {ratio} "
            f"| {_cell(notes)} |"
        )
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the selected benchmarks; returns (and writes) the report."""
    parser = argparse.ArgumentParser(prog="sweetrl bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", choices=tuple(SCALES), default="quick", help="budgets")
    parser.add_argument(
        "--only", help=f"comma-separated benchmarks to run (default: all): {', '.join(BENCHMARKS)}"
    )
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="rollout, dpo and logprobs use a tiny random-init model instead of the default model",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR, help="output folder")
    args = parser.parse_args(argv)
    names = list(BENCHMARKS)
    if args.only is not None:
        names = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = [name for name in names if name not in BENCHMARKS]
        if unknown or not names:
            parser.error(
                f"--only: unknown {unknown or 'empty'}; choose from {', '.join(BENCHMARKS)}"
            )

    started = datetime.now(timezone.utc)
    start = time.perf_counter()
    raw_dir = args.out / "raw"
    raw_dir.mkdir(parents=True, exist_ok=True)
    machine = describe_machine()
    print(f"machine: {machine_line(machine)}", flush=True)
    results: dict[str, Any] = {}
    rows: list[Row] = []
    for index, name in enumerate(names, 1):
        print(f"[{index}/{len(names)}] {name}: {BENCHMARKS[name][1]} ...", flush=True)
        result, new_rows = run_one(name, SCALES[args.scale][name], raw_dir, args.tiny)
        if result is not None:
            results[name] = result
        rows += new_rows
        for row in new_rows:
            ratio = "n/a" if row.ratio is None else f"{row.ratio:.2f}x"
            outcome = ratio if row.status == "ok" else row.status
            if row.other_cores is not None and row.other_cores >= BUSY_CORES:
                outcome += f" (busy machine: other processes used {row.other_cores} cores)"
            print(f"[{index}/{len(names)}] {name}: {row.name}: {outcome} ({row.seconds} s)")
        sys.stdout.flush()

    report = {
        "started_at": started.isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - start, 1),
        "argv": list(argv if argv is not None else sys.argv[1:]),
        "scale": args.scale,
        "tiny": args.tiny,
        "arguments": {name: SCALES[args.scale][name] for name in names},
        "machine": machine,
        "rows": [asdict(row) for row in rows],
        "results": results,
    }
    (args.out / "bench.json").write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(report, args.out / "bench.md")
    print(f"wrote {args.out / 'bench.md'} and bench.json ({report['seconds']:.0f} s)")
    return report


if __name__ == "__main__":
    main()
