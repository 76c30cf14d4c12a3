"""The research record: analyses, run artefacts, device scripts and the run history.

Not part of the installed distribution (``pyproject.toml`` finds only the four
packages): these are scripts run from the repository root, e.g.
``python -m research.analyses.task_quality``. They may import the packages; no package
imports them (``tests/test_layout.py``). ``history.md`` is the run history; ``results/``
holds the runs' reports, trajectories and device scripts; ``tests/`` their tests
(``make test-research``).
"""
