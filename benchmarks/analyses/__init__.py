"""Research analyses: how good the tasks and the similarity score are (scripts, run alone).

Each runs as ``python -m benchmarks.analyses.NAME``. Analyses may read the harness; no
other part of the project imports them.
"""
