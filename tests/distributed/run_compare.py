"""Run the ``sweetrl`` command in a process that :func:`tests.distributed.launch.run_on_processes` started.

``python -m tests.distributed.run_compare compare --config smoke ...``: switches the
process to FSDP2 first when the launcher asked for it (:mod:`tests.distributed.cpu_fsdp`;
the CLI itself never does), then runs :func:`benchmarks.cli.main` with the arguments.
"""

from __future__ import annotations

import sys

from tests.distributed import cpu_fsdp


def main(argv: list[str] | None = None) -> int:
    """Enable CPU FSDP2 if asked, then run ``sweetrl`` with ``argv``; return its exit status."""
    cpu_fsdp.enable()
    from benchmarks.cli import main as sweetrl

    return sweetrl(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
