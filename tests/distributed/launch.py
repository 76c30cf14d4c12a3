"""Start a script on 2 CPU processes (gloo) with ``torchrun``, as ``accelerate launch`` would on GPUs.

``accelerate`` runs several CPU processes only when told the run is on the CPU
(``ACCELERATE_USE_CPU``), and it refuses FSDP there. With ``fsdp=True`` the child imports
:mod:`tests.distributed.cpu_fsdp` first, which switches the shared ``AcceleratorState``
to FSDP2 (read from the same ``FSDP_*`` variables ``accelerate launch`` sets), so
``Accelerator.prepare`` shards models exactly as on GPUs, over gloo.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FSDP2_ENV = {
    "ACCELERATE_USE_FSDP": "true",
    "FSDP_VERSION": "2",
    "FSDP_RESHARD_AFTER_FORWARD": "true",
    "FSDP_STATE_DICT_TYPE": "FULL_STATE_DICT",
    "FSDP_CPU_RAM_EFFICIENT_LOADING": "false",
    "FSDP_AUTO_WRAP_POLICY": "NO_WRAP",
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_on_processes(
    args: list[str],
    *,
    nproc: int = 2,
    fsdp: bool = False,
    timeout: float = 600,
    cpu_flag: bool = True,
) -> subprocess.CompletedProcess:
    """Run ``python -m`` ``args`` on ``nproc`` CPU processes; raise with the output on failure.

    Args:
        args: A module name and its arguments (run with ``python -m``), or a script path.
        nproc: Processes (one per simulated GPU).
        fsdp: Shard models with FSDP2 instead of replicating them (DDP).
        timeout: Seconds before the whole run is killed (a deadlock fails the test).
        cpu_flag: Set ``ACCELERATE_USE_CPU`` as ``accelerate launch --cpu`` does; ``False``
            starts the processes as a bare ``torchrun`` on a CPU machine does.

    """
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "OMP_NUM_THREADS": "1"}
    if not cpu_flag:
        env.pop("ACCELERATE_USE_CPU")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("ACCELERATE_USE_FSDP", None)
    if fsdp:
        env.update(FSDP2_ENV)
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc_per_node={nproc}",
        "--master_addr=127.0.0.1",
        f"--master_port={_free_port()}",
    ]
    command += ["-m", args[0], *args[1:]] if not args[0].endswith(".py") else args
    result = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(command)} exited {result.returncode}\n--- stdout\n{result.stdout[-6000:]}"
            f"\n--- stderr\n{result.stderr[-6000:]}"
        )
    return result
