"""Make ``accelerate`` use FSDP2 on CPU processes (gloo), for the multi-process tests only.

``accelerate`` turns FSDP on only for GPU-like devices. Importing this module in a
process launched by :func:`tests.distributed.launch.run_on_processes` (``fsdp=True``)
creates the shared ``AcceleratorState`` and sets it to FSDP with the plugin ``accelerate``
builds from the ``FSDP_*`` environment variables — everything after that (``prepare``,
``get_state_dict``, ``unwrap_model``) is accelerate's own FSDP2 code path.
"""

from __future__ import annotations

import os


def enable() -> None:
    """Set up this process's ``accelerate`` state for CPU processes (FSDP2 if asked for).

    ``PartialState()`` (which our code calls before any ``Accelerator`` exists) reads
    ``ACCELERATE_USE_CPU`` only when told ``cpu=True``; without it every CPU process
    would think it runs alone.
    """
    from accelerate import PartialState

    if os.environ.get("ACCELERATE_USE_CPU", "false").lower() == "true":
        PartialState(cpu=True)
    if os.environ.get("ACCELERATE_USE_FSDP", "false").lower() != "true":
        return
    from accelerate import Accelerator
    from accelerate.utils import DistributedType, FullyShardedDataParallelPlugin

    state = Accelerator(cpu=True).state
    if state.distributed_type is DistributedType.FSDP:
        return
    state.fsdp_plugin = FullyShardedDataParallelPlugin()
    state.distributed_type = DistributedType.FSDP
    # Every later AcceleratorState() first copies PartialState's fields over its own:
    # the process-level record must say FSDP too, or the next Accelerator undoes this.
    PartialState._shared_state["distributed_type"] = DistributedType.FSDP
