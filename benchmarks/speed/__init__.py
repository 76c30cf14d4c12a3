"""Speed benchmarks: ours against a baseline, measured side by side in one run.

``sweetrl bench`` runs them all (:mod:`benchmarks.speed.bench`); each also runs alone,
``python -m benchmarks.speed.NAME``. They may read the harness.
"""
