import pytest

from sweetrl_gym.atomic_write import write_atomically


def test_a_failed_write_leaves_the_old_file_whole_and_no_temporary(tmp_path):
    path = tmp_path / "deep" / "results.json"
    assert write_atomically(path, lambda p: p.write_text("old")) == path
    assert path.read_text() == "old"

    def crash(p):
        p.write_text("half of the n")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, crash)
    assert path.read_text() == "old"
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.json"]
    write_atomically(path, lambda p: p.write_text("new"))
    assert path.read_text() == "new"
