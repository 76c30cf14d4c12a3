"""The ``sweetrl`` command: play, collect, train, eval, compare and bench from the terminal.

Every subcommand reads a config (``--config NAME|PATH``: a bundled name such as ``smoke``
or a TOML file; see ``sweetrl configs``), then ``--set section.key=value`` overrides, then
its own flags (``--tasks``, ``--model``, ...), which are shorthands for config keys::

    sweetrl play --agent oracle --env backend --task-index 0
    sweetrl collect --config smoke --agent oracle --tasks 2 --out data.jsonl
    sweetrl train --algo rft --config smoke --buffer data.jsonl --out runs/rft
    sweetrl eval --config smoke --agent runs/rft/model --tasks 2

Models are local folders or Hugging Face hub ids (``--model meta-llama/Llama-3.1-8B-Instruct``),
read as ``from_pretrained`` reads them (``HF_HUB_OFFLINE=1``: from the cache only).
Under ``accelerate launch`` (several processes) collect, eval and compare split the
episodes across the processes and only the main process writes files and prints results.

A mistake on the command line (an unknown flag, config or key) exits with status 2, a
failure while running (a missing file or optional dependency, a training error) with 1,
an interrupt with 130; each prints one ``sweetrl: error: ...`` line (``--debug``: the
traceback). Heavy packages (torch, transformers, browsers) load only when a subcommand
needs them, so ``sweetrl --help`` answers at once.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from benchmarks.harness.experiment_config import (
    ComparisonConfig,
    ConfigError,
    config_names,
    load_config,
)
from benchmarks.machine import quiet_library_progress_bars, share_cores_politely
from sweetrl_gym.plugins import ALGORITHM_GROUP, entry_point_names
from sweetrl_gym.processes import process_state

__all__ = ["UsageError", "build_parser", "describe_error", "main", "make_agent"]

ENV_IDS = {"backend": "ColBench-Backend-v0", "frontend": "ColBench-Frontend-v0"}
FRONTEND = ENV_IDS["frontend"]
ALGORITHMS = tuple(entry_point_names(ALGORITHM_GROUP))  # the installed methods, by name
SCRIPTED_AGENTS = ("human", "oracle", "random", "immediate")
MODEL_AGENTS = ("default", "tiny")
AGENT_HELP = (
    "human | oracle | random | immediate | default (SmolLM2-135M) | tiny (random init) | "
    "openai (--openai-url, --openai-model) | package.module:NAME: your agent class or a "
    "function returning one, called with no arguments | the name of an installed package's "
    "entry point (group sweetrl_gym.agents) | PATH: a saved algorithm (`sweetrl train`'s "
    "--out or its model/ folder) or a local model folder | a Hugging Face hub id (org/name)"
)
MODEL_HELP = "base policy: default | tiny | PATH | HUB_ID (e.g. meta-llama/Llama-3.1-8B-Instruct)"
# Optional dependencies by import name: what to install when one is missing.
_INSTALL_HINTS = {
    "playwright": "pip install 'sweetrl-gym[frontend]' && python -m sweetrl_gym.render.install",
    "skimage": "pip install 'sweetrl-gym[frontend]'",
    "trl": "pip install 'sweetrl-gym[bench]'",
    "matplotlib": "pip install matplotlib",
    "tomli": "pip install tomli",
}
_OWN_PACKAGES = ("sweetrl_gym", "agents", "algorithms", "benchmarks")
_RESUME_HINTS = {
    "collect": " (add --resume to the same command to continue)",
    "train": " (add --resume to the same command to continue)",
    "eval": " (with --episodes, add --resume to the same command to continue)",
    "compare": " (run the same command again to continue)",
}


class UsageError(Exception):
    """The command line is wrong (flag, config, override): exit status 2."""


class _Parser(argparse.ArgumentParser):
    """Raises :class:`UsageError` instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


# -- entry point ------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sweetrl`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    share_cores_politely()  # before any subcommand loads torch
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    debug = "--debug" in argv[: argv.index(command)] if command == "bench" else False
    try:
        if command == "bench":
            return _bench(argv[argv.index("bench") + 1 :])
        args, extra = build_parser().parse_known_args(argv)
        if extra:  # name the subcommand whose --help lists the right flags
            raise UsageError(
                f"unrecognized arguments: {' '.join(extra)} (see 'sweetrl {args.command} --help')"
            )
        debug = bool(getattr(args, "debug", False))
        quiet_library_progress_bars(downloads=not getattr(args, "no_progress", False))
        if "LOCAL_RANK" in os.environ:  # started by accelerate launch / torchrun
            # Fix the process state before any model is placed (PartialState() alone
            # would take a CPU run for a single process).
            process_state()
        return int(args.handler(args) or 0)
    except SystemExit as done:  # --help, or a forwarded script's own exit
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except UsageError as err:
        _say_error(str(err))
        return 2
    except BrokenPipeError:  # `sweetrl ... | head`: the reader left; nothing to report
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 1
    except KeyboardInterrupt:
        if debug:
            raise
        _say_error("interrupted" + _RESUME_HINTS.get(command or "", ""))
        return 130
    except Exception as err:
        if debug:
            raise
        _say_error(describe_error(err))
        return 1


def describe_error(err: BaseException) -> str:
    """Return a one-line description of ``err`` for the terminal."""
    if isinstance(err, ModuleNotFoundError) and err.name:
        root = err.name.split(".")[0]
        if root not in _OWN_PACKAGES:
            hint = _INSTALL_HINTS.get(root, f"pip install {root}")
            return f"missing optional dependency {root!r}: {hint}"
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    text = " ".join(text.split())
    known = (OSError, ValueError, KeyError, ImportError, EOFError)
    if isinstance(err, known) and text:
        return text
    return f"{type(err).__name__}: {text or 'no message'} (run with --debug for the traceback)"


def _say_error(message: str) -> None:
    print(f"sweetrl: error: {message}", file=sys.stderr)


# -- the parser -------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """Return the ``sweetrl`` argument parser (one subparser per subcommand)."""
    parser = _Parser(
        prog="sweetrl",
        description="ColBench environments and SWEET-RL from the terminal.",
        epilog="Run 'sweetrl COMMAND --help' for a command's options.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = _common_options()

    def add(name: str, handler: Callable[[argparse.Namespace], int], text: str) -> Any:
        sub = commands.add_parser(name, parents=[common], help=text, description=text)
        sub.set_defaults(handler=handler, flag_keys={})
        return sub

    play = add("play", _play, "Play one episode in the terminal, as a person or with an agent.")
    play.add_argument("--agent", default="human", help=f"who plays (default: human): {AGENT_HELP}")
    _env_flags(play)
    play.add_argument(
        "--task-index",
        type=_non_negative_int,
        default=0,
        metavar="I",
        help="which task (default: 0)",
    )
    play.add_argument("--split", choices=("train", "test"), default="test")
    _model_flags(play, evaluation=True)
    # Without a config, a local model's reply stops at 256 tokens (the paper's 1,024
    # take minutes on a laptop CPU); a config or --set policy.max_new_tokens=N decides.
    play.set_defaults(defaults_toml="[policy]\nmax_new_tokens = 256\n")
    play.add_argument(
        "--screenshots", metavar="DIR", help="frontend: keep the page screenshots here"
    )
    _openai_flags(play)

    collect = add("collect", _collect, "Collect training episodes into a (resumable) JSONL file.")
    _rollout_flags(collect, "data", "train_tasks", split="train")
    collect.add_argument("--out", required=True, metavar="FILE.jsonl", help="episodes go here")
    collect.add_argument("--resume", action="store_true", help="continue the collection in --out")
    _openai_flags(collect)

    train = add("train", _train, "Train a policy with one algorithm from a buffer of episodes.")
    train.add_argument(
        "--algo",
        required=True,
        help=f"the algorithm: {' | '.join(ALGORITHMS)} | package.module:Class | the name of an "
        "installed package's entry point (group sweetrl_gym.algorithms)",
    )
    train.add_argument(
        "--buffer",
        required=True,
        metavar="FILE.jsonl",
        help="training episodes: `sweetrl collect`'s, or an official sweet_rl trajectory file",
    )
    train.add_argument("--out", required=True, metavar="DIR", help="run/ and model/ go here")
    train.add_argument("--resume", action="store_true", help="continue the run in --out")
    _flag(train, "--model", "policy.model", MODEL_HELP, convert=str)
    _flag(
        train,
        "--env",
        "env.id",
        "backend | frontend | an env id (sets the prompt)",
        convert=_env_id,
    )
    _flag(train, "--learning-rate", "training.learning_rate", "AdamW step size", convert=float)
    _flag(train, "--epochs", "training.num_epochs", "passes over the data")

    evaluate = add("eval", _eval, "Score an agent on held-out tasks with confidence intervals.")
    _rollout_flags(evaluate, "eval", "test_tasks", split="test")
    evaluate.add_argument("--out", metavar="FILE.json", help="also write the metrics here")
    evaluate.add_argument("--episodes", metavar="FILE.jsonl", help="keep the episodes here")
    evaluate.add_argument("--resume", action="store_true", help="continue --episodes")
    _openai_flags(evaluate)

    compare = add("compare", _compare, "Compare methods fairly: collect, fit each, evaluate.")
    compare.set_defaults(default_config="quick")
    compare.add_argument("--out", metavar="DIR", help="default: runs/compare/<config name>")
    _flag(compare, "--model", "policy.model", MODEL_HELP, convert=str)
    _env_flags(compare)
    _flag(compare, "--train-tasks", "data.train_tasks", "training tasks")
    _flag(compare, "--samples", "data.samples_per_task", "training episodes per task")
    _flag(compare, "--test-tasks", "eval.test_tasks", "held-out tasks")
    _flag(
        compare,
        "--methods",
        "methods.run",
        f"comma-separated, from zero-shot, {', '.join(ALGORITHMS)}, or an algorithm's import "
        "path package.module:Class",
        convert=_method_list,
    )
    _flag(
        compare,
        "--seeds",
        "seeds",
        "comma-separated seeds of the whole pipeline: a run each in OUT/seed-N, then pooled",
        convert=_seed_list,
    )
    compare.add_argument(
        "--parallel",
        type=int,
        default=1,
        metavar="N",
        help="seeds run at once, each in its own process (output in OUT/seed-N.log)",
    )
    compare.add_argument(
        "--check",
        action="store_true",
        help="list every missing prerequisite (files, the human's server, models) with the "
        "command that fixes it, and start nothing",
    )
    compare.epilog = "The config defaults to 'quick'. Run the same command again to resume."

    commands.add_parser(
        "bench", help="Throughput benchmarks (options: 'sweetrl bench --help').", add_help=False
    )

    text = "Pool comparisons of one config run with different seeds (paired, per task)."
    pool = commands.add_parser("pool", help=text, description=text)
    pool.set_defaults(handler=_pool)
    pool.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="folders of 'sweetrl compare', or their results.json files kept alone",
    )
    pool.add_argument("--out", metavar="DIR", help="also write pooled.json and pooled.md here")
    pool.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks of errors"
    )

    configs = add("configs", _configs, "List the bundled configs, or show one resolved.")
    configs.add_argument("name", nargs="?", help="a config to show (with --set applied)")

    mini = add(
        "mini-data",
        _mini_data,
        "Write small stand-ins for the paper's files, in their official formats (paper-mini).",
    )
    mini.add_argument("out", metavar="DIR", help="the files go here (paper-mini reads paper-mini/)")
    mini.add_argument("--train-tasks", type=_positive_int, default=24, metavar="N")
    mini.add_argument("--test-tasks", type=_positive_int, default=16, metavar="N")
    mini.add_argument(
        "--human-model",
        default="default",
        metavar="MODEL",
        help="the model to save in DIR/human-model for `transformers serve` to play the human "
        "(default: the embedded SmolLM2; 'none': save none)",
    )
    return parser


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("config")
    group.add_argument(
        "--config", metavar="NAME|PATH", help=f"bundled ({', '.join(config_names())}) or TOML"
    )
    group.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a config setting (repeatable), e.g. training.learning_rate=1e-6",
    )
    group.add_argument("--seed", type=int, help="the config's seed")
    group.add_argument("--no-progress", action="store_true", help="no progress bars")
    # SUPPRESS: a subcommand's default must not hide `sweetrl --debug COMMAND`.
    group.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks of errors"
    )
    return common


def _flag(
    parser: argparse.ArgumentParser,
    flag: str,
    key: str,
    text: str,
    convert: Callable[[str], Any] | None = None,
) -> None:
    """Add a flag that is a shorthand for ``--set key=value``."""
    dest = flag.lstrip("-").replace("-", "_")
    metavar = "N" if convert is None else dest.upper()
    parser.add_argument(
        flag, dest=dest, type=convert or _positive_int, metavar=metavar, help=f"{text} ({key})"
    )
    parser.get_default("flag_keys")[dest] = key


def _env_flags(parser: argparse.ArgumentParser) -> None:
    _flag(parser, "--env", "env.id", "backend | frontend | an env id", convert=_env_id)
    _flag(parser, "--max-turns", "env.max_turns", "agent messages per episode")


def _rollout_flags(
    parser: argparse.ArgumentParser, section: str, tasks_key: str, split: str
) -> None:
    """Add the flags of a subcommand that plays episodes (collect, eval) to ``section``."""
    parser.add_argument(
        "--agent", help=f"who plays (default: the config's policy.model): {AGENT_HELP}"
    )
    _env_flags(parser)
    _flag(parser, "--tasks", f"{section}.{tasks_key}", "tasks to play (the first N of the split)")
    _flag(parser, "--samples", f"{section}.samples_per_task", "episodes per task")
    _flag(parser, "--num-envs", f"{section}.num_envs", "environments stepped in lockstep")
    _model_flags(parser, evaluation=section == "eval")
    parser.add_argument("--split", choices=("train", "test"), default=split)


def _model_flags(parser: argparse.ArgumentParser, *, evaluation: bool) -> None:
    """Add the sampling flags every model-backed agent takes (saved, model, hub id, openai)."""
    temperature = "policy.eval_temperature" if evaluation else "policy.temperature"
    text = "a model agent's sampling temperature, 0: greedy"
    _flag(parser, "--temperature", temperature, text, convert=_non_negative_float)
    text = "a model agent's most new tokens a message"
    _flag(parser, "--max-new-tokens", "policy.max_new_tokens", text)


def _openai_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("--agent openai (any OpenAI-compatible server)")
    group.add_argument("--openai-url", metavar="URL", help="e.g. http://localhost:8000/v1")
    group.add_argument("--openai-model", metavar="NAME", help="the served model's name")


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _env_id(text: str) -> str:
    return ENV_IDS.get(text, text)


def _method_list(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _seed_list(text: str) -> list[int]:
    try:
        return [int(seed) for seed in text.split(",") if seed.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated integers: {text!r}") from None


# -- config and agents ------------------------------------------------------------------


def _load(args: argparse.Namespace, algo: str | None = None) -> ComparisonConfig:
    """Read the config the arguments name: file, then ``--set``, then the shorthand flags.

    Every setting is checked before any work, the algorithms' ones against their config
    classes (``algo``: one more to check, for ``sweetrl train``).
    """
    overrides = list(args.overrides)
    for dest, key in args.flag_keys.items():
        value = getattr(args, dest, None)
        if value is not None:
            overrides.append(f"{key}={json.dumps(value)}")  # JSON scalars and lists are TOML
    if args.seed is not None:  # one run of this seed, whatever seeds the config lists
        overrides += [f"seed={args.seed}", "seeds=[]"]
    if args.no_progress:
        overrides.append("training.progress=false")
    name = args.config or getattr(args, "default_config", None)
    from benchmarks.harness.compare import check_training_settings

    try:
        if name is not None:
            config = load_config(name, overrides)
        else:
            with tempfile.TemporaryDirectory() as folder:  # no config: the defaults, checked
                defaults = Path(folder) / "defaults.toml"
                defaults.write_text(getattr(args, "defaults_toml", ""))
                config = load_config(defaults, overrides)
        check_training_settings(config, [algo] if algo else [])
    except (ValueError, FileNotFoundError) as err:  # ConfigError is a ValueError
        raise UsageError(str(err)) from err
    return config


def _with_model(config: ComparisonConfig, model: str) -> ComparisonConfig:
    return config.replace(policy=config.policy.replace(model=model))


def make_agent(
    spec: str | None, config: ComparisonConfig, args: argparse.Namespace, *, evaluation: bool
) -> Any:
    """Build the agent ``--agent`` names (``None``: the config's ``policy.model``).

    Args:
        spec: See :data:`AGENT_HELP`.
        config: The loaded config (environment, turn limit, sampling, seed).
        args: The parsed arguments (for ``--openai-url`` and ``--openai-model``).
        evaluation: Sample at ``policy.eval_temperature`` (else ``policy.temperature``).

    Model agents without a configured prompt (``openai``, your own) play with the
    environment's agent prompt (see :mod:`agents.prompts`); the config's
    ``policy.system_prompt`` is the prompt of the models it builds.

    Raises:
        UsageError: For ``openai`` without its flags, or an import path or entry point
            that names no agent (no such module, attribute or entry point; a factory
            that returns no agent).
        FileNotFoundError: If ``spec`` reads as a path (``./x``, ``/x``, ``~/x``,
            ``a/b/c``) that does not exist.
        OSError: If ``spec`` is a hub id that cannot be loaded.

    """
    import agents
    from agents.loading import is_local_path
    from benchmarks.harness.policies import build_policy, saved_policy, scripted_agent

    temperature = config.policy.eval_temperature if evaluation else config.policy.temperature
    if spec is None:
        return build_policy(config, evaluation=evaluation)
    if spec == "human":
        return agents.HumanAgent()
    if spec in ("oracle", "random", "immediate"):
        return scripted_agent(spec, config)
    if spec in MODEL_AGENTS:
        return build_policy(_with_model(config, spec), evaluation=evaluation)
    if spec == "openai":
        if not (getattr(args, "openai_url", None) and getattr(args, "openai_model", None)):
            raise UsageError("--agent openai needs --openai-url and --openai-model")
        from sweetrl_gym.lm import ChatClient

        return agents.OpenAIAgent(  # with the environment's prompt (ENVIRONMENT_PROMPT)
            ChatClient(args.openai_url, args.openai_model),
            temperature=temperature,
            max_tokens=config.policy.max_new_tokens,
        )
    if agents.is_agent_spec(spec):  # package.module:NAME, or an installed entry point
        from sweetrl_gym.plugins import PluginError

        try:
            return agents.load_agent(spec)
        except PluginError as err:
            raise UsageError(str(err)) from err  # a bad --agent value
    path = Path(spec).expanduser()
    for saved in (path, path / "model"):  # a saved algorithm, or `sweetrl train`'s --out
        if (saved / "algorithm.json").is_file():
            # As the comparison evaluates it: the config's sampling, batch, history, dtype.
            return saved_policy(saved, config, evaluation=evaluation)
    known = SCRIPTED_AGENTS + MODEL_AGENTS + ("openai", *agents.agent_entry_points())
    if is_local_path(spec) and not path.exists():
        raise FileNotFoundError(
            f"--agent {spec!r} is neither a known agent ({', '.join(known)}) nor an existing "
            "folder (a saved algorithm or a local model)"
        )
    try:  # a local model folder, or a hub id (from_pretrained decides, as it always does)
        return build_policy(_with_model(config, spec), evaluation=evaluation)
    except OSError as err:
        close = difflib.get_close_matches(spec, known, n=1)
        if close and "/" not in spec:  # a typo of a known agent more likely than a hub id
            raise OSError(f"{err}; or did you mean --agent {close[0]}?") from err
        raise


# -- subcommands ------------------------------------------------------------------------


def _play(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import agents
    from benchmarks.harness.compare import env_kwargs
    from sweetrl_gym import format_dialogue

    config = _load(args)
    env_id = config.env.id
    agent = make_agent(args.agent, config, args, evaluation=True)
    human = args.agent == "human"  # HumanAgent prints the dialogue itself
    kwargs = env_kwargs(config, args.split)
    if env_id == FRONTEND:
        kwargs["screenshot_dir"] = args.screenshots or tempfile.mkdtemp(prefix="sweetrl-play-")
    num_tasks = len(kwargs["tasks"])
    if args.task_index >= num_tasks:
        raise UsageError(f"--task-index must be in 0..{num_tasks - 1} for the {args.split} split")
    env = gym.make(env_id, split=args.split, **kwargs)
    try:
        _, info = env.reset(seed=config.seed, options={"task_index": args.task_index})
        print(
            f"=== {env_id}, {args.split} task {args.task_index} ({info['task_id']}), "
            f"up to {config.env.max_turns} agent messages"
        )
        if not human:
            print(format_dialogue(info["messages"]), end="", flush=True)
        streaming = not human and _stream_replies(agent)
        system_prompt = agents.prompt_for(agent, env)  # the env's, unless the agent has its own
        done = False
        while not done:
            if streaming:
                print("[AGENT] ", end="", flush=True)  # the reply follows as it is generated
            conversation = agents.with_system_prompt(info["messages"], system_prompt)
            if getattr(agent, "privileged", False):
                (reply,) = agent.act([conversation], [info["reference"]])
            else:
                (reply,) = agent.act([conversation])
            shown = len(info["messages"])
            _, reward, terminated, truncated, info = env.step(reply)
            done = terminated or truncated
            new = info["messages"][shown:]  # the agent's message, then the human's reply
            if streaming:
                print()
            elif not human:
                print(format_dialogue(new[:1]), end="")
            if info.get("screenshot"):
                print(f"[screenshot of the agent's page] {info['screenshot']}")
            if not human and new[1:]:
                print(format_dialogue(new[1:]), end="", flush=True)
    finally:
        env.close()
    if human:
        print()  # piped input leaves the last prompt without a line end
    print(f"=== reward {reward:.2f}: {_outcome(info)}")
    for line in _failed_tests(info.get("test_report") or {}):
        print(line)
    return 0


def _failed_tests(report: dict[str, Any], shown: int = 5) -> list[str]:
    """Say why a wrong answer failed: the answer's error, or the first failed tests."""
    if report.get("answer_error"):
        return [f"the answer failed before any test ran: {report['answer_error']}"]
    failed = [r for r in report.get("results", []) if not r["passed"]]
    lines = [
        f"  {r['expression']}: {r['status'].replace('_', ' ')}; expected {r['expected']}, "
        f"got {r['got']}"
        for r in failed[:shown]
    ]
    if len(failed) > shown:
        lines.append(f"  ... and {len(failed) - shown} more")
    return ["failed tests:", *lines] if lines else []


def _stream_replies(agent: Any) -> bool:
    """Show a local model's replies token by token (a reply can take a while on a CPU)."""
    if not hasattr(agent, "streamer") or getattr(agent, "tokenizer", None) is None:
        return False
    from transformers import TextStreamer

    agent.streamer = TextStreamer(agent.tokenizer, skip_prompt=True, skip_special_tokens=True)
    return True


def _outcome(info: dict[str, Any]) -> str:
    parts = []
    if "tests_total" in info:
        parts.append(f"{info['tests_passed']}/{info['tests_total']} tests passed")
    if "similarity" in info:
        parts.append(f"similarity {info['similarity']:.3f}")
    parts.append("success" if info.get("success") else "no success")
    parts.append(
        f"turns {info['turn']}" + (" (the limit)" if info.get("turn_limit_reached") else "")
    )
    if info.get("render_error"):
        parts.append(f"render error: {info['render_error']}")
    target = (info.get("reference") or {}).get("screenshot")
    if target:
        parts.append(f"target page: {target}")
    return ", ".join(parts)


def _task_count(requested: int, available: int, split: str) -> int:
    """Return how many tasks to play: as asked, or all there are (and say so)."""
    if requested > available and process_state().is_main_process:
        print(
            f"note: {requested} tasks asked for, but the {split} split has {available}: "
            f"playing all {available}",
            file=sys.stderr,
        )
    return min(requested, available)


def _collect(args: argparse.Namespace) -> int:
    from agents import collect, summarize
    from benchmarks.harness.compare import env_kwargs

    config = _load(args)
    data = config.data
    kwargs = env_kwargs(config, args.split)
    num_tasks = _task_count(data.train_tasks, len(kwargs["tasks"]), args.split)
    agent = make_agent(args.agent, config, args, evaluation=False)
    out = Path(args.out)
    try:
        buffer = collect(
            config.env.id,
            agent,
            task_indices=range(num_tasks),
            samples_per_task=data.samples_per_task,
            num_envs=min(data.num_envs, num_tasks * data.samples_per_task),
            split=args.split,
            seed=config.seed,
            env_kwargs=kwargs,
            out=out,
            resume=args.resume,
            progress=not args.no_progress and process_state().is_main_process,
            shard="auto",  # several processes: each plays its share, the main one merges
        )
    except FileExistsError:
        raise FileExistsError(
            f"{out} exists; pass --resume to continue that collection, or choose another --out"
        ) from None
    if process_state().is_main_process:
        print(f"{len(buffer)} episodes of {num_tasks} {args.split} tasks in {out}")
        _print_metrics(summarize(buffer, seed=config.seed))
    return 0


def _train(args: argparse.Namespace) -> int:
    from benchmarks.harness.compare import fit_method
    from sweetrl_gym import TrajectoryBuffer
    from sweetrl_gym.official_data import missing_trajectory_file_hint

    config = _load(args, algo=args.algo)
    path = Path(args.buffer)
    if not path.is_file():
        raise FileNotFoundError(
            f"buffer file not found: {path} (collect one with `sweetrl collect --out "
            f"FILE.jsonl`, or give an official trajectory file: {missing_trajectory_file_hint()})"
        )
    # Either format, every record checked before training; an official file without
    # rewards is scored as the config's environment scores.
    buffer = TrajectoryBuffer.read(path, scoring=config.env.answer_scoring)
    if not len(buffer):
        raise ValueError(f"{path} holds no episodes")
    out = Path(args.out)
    fresh = not (out / "run").exists()
    if not fresh and not args.resume:
        raise FileExistsError(
            f"{out} holds a training run; pass --resume to continue it, or choose another --out"
        )
    process_state().wait_for_everyone()  # all processes look at run/ before one creates it
    main_process = process_state().is_main_process
    if main_process:
        print(f"training {args.algo} on {len(buffer)} episodes from {path}")
    record = fit_method(args.algo, config, buffer, out)  # every process: training is collective
    if record["status"] != "trained":
        # Nothing was trained: let a later run with other data start afresh here.
        if main_process:
            (out / "fit.json").unlink(missing_ok=True)
            if fresh:
                shutil.rmtree(out / "run", ignore_errors=True)
        raise ValueError(f"{args.algo} cannot learn from {path}: {record.get('reason', record)}")
    if main_process:
        _print_metrics(record["metrics"])
        config_flag = f" --config {args.config}" if args.config else ""
        print(f"trained policy: {out / 'model'}")
        print(f"score it with: sweetrl eval --agent {out / 'model'}{config_flag}")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from agents import evaluate
    from benchmarks.harness.compare import env_kwargs

    config = _load(args)
    settings = config.eval
    kwargs = env_kwargs(config, args.split)
    num_tasks = _task_count(settings.test_tasks, len(kwargs["tasks"]), args.split)
    agent = make_agent(args.agent, config, args, evaluation=True)
    metrics = evaluate(
        agent,
        config.env.id,
        split=args.split,
        num_tasks=num_tasks,
        samples_per_task=settings.samples_per_task,
        num_envs=settings.num_envs,
        seed=config.seed,
        env_kwargs=kwargs,
        out=args.episodes,
        resume=args.resume,
        progress=not args.no_progress and process_state().is_main_process,
        shard="auto",
    )
    if not process_state().is_main_process:  # every process has the same metrics; one reports them
        return 0
    name = args.agent or config.policy.model
    scoring = config.env.answer_scoring
    scored = f", scoring {scoring!r}" if scoring else ""
    print(f"{name} on {num_tasks} {args.split} tasks of {config.env.id}{scored}:")
    _print_metrics(metrics)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "agent": name,
            "env": config.env.id,
            "split": args.split,
            "config": config.name,
            "scoring": scoring,
            "metrics": metrics,
        }
        out.write_text(json.dumps(record, indent=2) + "\n")
        print(f"metrics written to {out}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from benchmarks.harness.compare import run_comparison

    config = _load(args)
    out = Path(args.out or Path("runs") / "compare" / config.name)
    if not _prerequisites_found(config, check=args.check):
        return 1
    if args.check:
        return 0
    if config.seeds:
        from benchmarks.harness.pool import render_pooled
        from benchmarks.harness.seeds import run_seeds

        pooled = run_seeds(config, out, progress=not args.no_progress, parallel=args.parallel)
        if process_state().is_main_process and pooled is not None:
            print(f"results: {out / 'pooled.md'}")
            print(render_pooled(pooled), end="")
        return 0
    if args.parallel != 1:
        raise UsageError(
            "--parallel runs several seeds at once: give --seeds (or seeds in the config)"
        )
    run_comparison(config, out, progress=not args.no_progress)
    if not process_state().is_main_process:
        return 0
    report = out / "results.md"
    print(f"results: {report}")
    if report.is_file():
        text = report.read_text(encoding="utf-8")
        print(_first_table(text) or text)
        from benchmarks.harness.report import compare_to_baseline

        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        for line in compare_to_baseline(results):
            print(line)
    return 0


def _prerequisites_found(config: ComparisonConfig, *, check: bool) -> bool:
    """Check every prerequisite of ``config`` at once, before any folder is made; say what lacks."""
    from benchmarks.harness.prerequisites import (
        describe_items,
        describe_missing,
        missing_prerequisites,
    )

    missing = missing_prerequisites(config)
    if not process_state().is_main_process:
        return not missing
    if missing and check:
        print(describe_missing(missing))
    elif missing:
        print("\n".join(describe_items(missing)), file=sys.stderr)
        _say_error(
            f"{len(missing)} prerequisite(s) missing (listed above), nothing was started; "
            "`sweetrl compare --check` lists them without starting anything"
        )
    elif check:
        print(f"all prerequisites found for config {config.name!r}")
    return not missing


def _pool(args: argparse.Namespace) -> int:
    from benchmarks.harness.pool import pool_runs, render_pooled, write_pooled

    pooled = pool_runs(args.runs)
    print(render_pooled(pooled), end="")
    if args.out:
        write_pooled(pooled, args.out)
        print(f"written: {Path(args.out) / 'pooled.md'}")
    return 0


def _first_table(markdown: str) -> str:
    """Return the first Markdown table of ``markdown`` (the results), or ``""``."""
    table: list[str] = []
    for line in markdown.splitlines():
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    return "\n".join(table)


def _bench(argv: list[str]) -> int:
    bench = importlib.import_module("benchmarks.speed.bench")
    bench.main(argv)
    return 0


def _mini_data(args: argparse.Namespace) -> int:
    from agents.loading import load_causal_lm
    from benchmarks.harness.mini_data import write_mini_data

    out = Path(args.out)
    paths = write_mini_data(
        out, train_tasks=args.train_tasks, test_tasks=args.test_tasks, progress=not args.no_progress
    )
    if args.human_model != "none":
        model, tokenizer = load_causal_lm(args.human_model, what="--human-model")
        model.save_pretrained(str(out / "human-model"), safe_serialization=True)
        tokenizer.save_pretrained(str(out / "human-model"))
        paths["human_model"] = out / "human-model"
    for role, path in paths.items():
        print(f"{role:13s} {path}")
    return 0


def _configs(args: argparse.Namespace) -> int:
    if args.name is not None:
        args.config = args.name
        print(json.dumps(_load(args).to_dict(), indent=2))
        return 0
    names = config_names()
    width = max(map(len, names), default=0)
    for name in names:
        try:
            description = load_config(name).description
        except (ConfigError, OSError) as err:
            description = f"(unreadable: {err})"
        print(f"{name:{width}s} {description}")
    return 0


def _print_metrics(metrics: dict[str, Any]) -> None:
    """Print metrics, ``name  value  [low, high]`` when an interval comes with them."""
    from agents.statistics import Estimate

    first = ("success_rate", "tests_passed", "similarity", "avg_turns", "answer_rate")
    keys = [k for k in first if k in metrics] + sorted(k for k in metrics if k not in first)
    for key in keys:
        if key.endswith(("_ci_low", "_ci_high")):
            continue
        line = f"  {key:24s} {_number(key, metrics[key])}"
        estimate = Estimate.from_record(metrics, key)
        if estimate is not None and estimate.interval is not None:
            low, high = estimate.interval.low, estimate.interval.high
            line += f"  95% CI [{_number(key, low)}, {_number(key, high)}]"
        print(line)


def _number(key: str, value: Any) -> str:
    if key.startswith("num_") and isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:.3f}" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    sys.exit(main())
