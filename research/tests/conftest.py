"""The research tests share the cores as `make test`'s do (see tests/conftest.py)."""

from benchmarks.machine import share_cores_politely

# The 2 test workers and the comparisons they start: OpenMP threads sleep while they
# wait. Before torch loads.
share_cores_politely()
