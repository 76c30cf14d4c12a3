"""Benchmarks and the ``sweetrl`` command, in packages by role; imports run one way.

- :mod:`benchmarks.cli` (the ``sweetrl`` command) and :mod:`benchmarks.demo`: entry
  points, which no module imports.
- :mod:`benchmarks.harness`: the comparison of methods (``sweetrl compare``), its
  configs (``benchmarks/configs/``), report, pooled seeds, controls and serving.
- :mod:`benchmarks.speed`: speed benchmarks (``sweetrl bench``); may read the harness.
- :mod:`benchmarks.machine`: what a measurement ran on (the report and the speed
  benchmarks).

``tests/test_layout.py`` checks the direction and that no module imports itself back. The
research analyses are not here: they live in the repository's ``research/`` folder, which
may import these packages and is not installed.
"""
