"""Research analyses: how good the tasks and the similarity score are (scripts, run alone).

Each runs from the repository root as ``python -m research.analyses.NAME``. Analyses may
read the packages (the harness included); no package imports them.
"""
