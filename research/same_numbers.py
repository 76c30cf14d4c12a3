"""Digest of a smoke comparison, to check that a refactor changed no number.

Runs ``sweetrl compare --config smoke`` into a folder and writes what the run computed:
the report's table, every method's fit metrics (timings left out) and evaluation, and a
SHA-256 of each saved model's tensors (names, dtypes, shapes and bytes, not the file, whose
metadata may differ). Two digests from two checkouts should be equal::

    PYTHONPATH=OLD_CHECKOUT python research/same_numbers.py --out /tmp/old
    python research/same_numbers.py --out /tmp/new
    python research/same_numbers.py --diff /tmp/old/digest.json /tmp/new/digest.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

# Keys of fit.json that hold wall-clock or machine facts, not what the fit computed.
_TIMING_WORDS = ("seconds", "time", "elapsed", "per_s", "duration", "started", "finished")
# A table cell that is a duration ("13.7 s", "2.1 min"): how long, not what was computed.
_DURATION = re.compile(r"\|\s*[\d.]+ (?:s|min|h)\s*(?=\|)")


def _without_timings(value):
    if isinstance(value, dict):
        return {
            key: _without_timings(item)
            for key, item in value.items()
            if not any(word in key for word in _TIMING_WORDS)
        }
    if isinstance(value, list):
        return [_without_timings(item) for item in value]
    return value


def _tensor_digest(folder: Path) -> str | None:
    from safetensors import safe_open

    files = sorted(folder.rglob("*.safetensors"))
    if not files:
        return None
    digest = hashlib.sha256()
    for file in files:
        with safe_open(str(file), framework="pt") as handle:
            for name in sorted(handle.keys()):
                tensor = handle.get_tensor(name).contiguous()
                digest.update(f"{file.relative_to(folder)}:{name}:{tensor.dtype}:".encode())
                digest.update(str(tuple(tensor.shape)).encode())
                digest.update(tensor.view(-1).view(dtype=__import__("torch").uint8).numpy())
    return digest.hexdigest()


def digest_run(run: Path) -> dict:
    """Return what a finished smoke comparison computed, without timings."""
    methods = {}
    for folder in sorted((run / "methods").iterdir()):
        fit = folder / "fit.json"
        methods[folder.name] = {
            "fit": _without_timings(json.loads(fit.read_text())) if fit.exists() else None,
            "weights": _tensor_digest(folder / "model") if (folder / "model").exists() else None,
        }
    results = json.loads((run / "results.json").read_text())
    return {
        "methods": methods,
        "results": _without_timings(results),
        "table": [
            _DURATION.sub("| (time) ", line)
            for line in (run / "results.md").read_text().splitlines()
            if "|" in line
        ],
    }


def _diff(old, new, path="") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        lines = []
        for key in sorted(set(old) | set(new)):
            if key not in old or key not in new:
                lines.append(f"{path}/{key}: only in {'new' if key in new else 'old'}")
            else:
                lines += _diff(old[key], new[key], f"{path}/{key}")
        return lines
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="run the smoke comparison into this folder")
    parser.add_argument("--diff", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = parser.parse_args(argv)
    if args.diff:
        old, new = (json.loads(path.read_text()) for path in args.diff)
        lines = _diff(old, new)
        print("\n".join(lines) if lines else "the same numbers")
        return 1 if lines else 0
    run = args.out / "run"
    cli = "import sys; from benchmarks.cli import main; sys.exit(main())"
    command = [sys.executable, "-c", cli, "compare", "--config", "smoke", "--out", str(run)]
    subprocess.run(command, check=True)
    (args.out / "digest.json").write_text(json.dumps(digest_run(run), indent=1, sort_keys=True))
    print(f"digest: {args.out / 'digest.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
