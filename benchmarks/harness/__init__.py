"""The comparison of methods: one buffer, the same held-out tasks, simulator and seeds.

``sweetrl compare`` runs :func:`benchmarks.harness.compare.run_comparison`. The harness
imports neither the speed benchmarks nor the entry points (``tests/test_layout.py``).
"""
