"""A second comparison on a folder that one is running in is refused before it writes."""

from __future__ import annotations

import os

from benchmarks.cli import main
from benchmarks.harness.folder_lock import LOCK_FILE, folder_lock


def test_a_second_comparison_on_a_running_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    with folder_lock(out):
        assert f"process {os.getpid()}" in (out / LOCK_FILE).read_text()
        code = main(["compare", "--config", "smoke", "--out", str(out), "--no-progress"])
        assert code == 1
        assert "being written by another comparison" in capsys.readouterr().err
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing written
    # Released when the run ends (a crash or kill releases it too): the next one goes on.
    with folder_lock(out):
        pass
