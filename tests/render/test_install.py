import io
import tarfile

import pytest

from sweetrl_gym.render import BrowserNotFoundError, install
from sweetrl_gym.render.assets import tailwind_path


def test_without_root_the_error_names_the_apt_command(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium anywhere
    monkeypatch.setattr(install.os, "geteuid", lambda: 1000)
    with pytest.raises(BrowserNotFoundError, match="apt-get install -y chromium"):
        install.install_chromium()


def _tarball(script: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("package/dist/index.global.js")
        info.size = len(script)
        archive.addfile(info, io.BytesIO(script))
    return buffer.getvalue()


def test_a_changed_package_is_refused_and_nothing_is_installed(monkeypatch, tmp_path):
    monkeypatch.setenv("SWEETRL_GYM_HOME", str(tmp_path))
    monkeypatch.delenv("SWEETRL_TAILWIND", raising=False)
    monkeypatch.setattr(install, "_fetch_tarball", lambda: _tarball(b"alert('not tailwind')"))
    with pytest.raises(RuntimeError, match="integrity"):
        install.install_tailwind()
    assert not list(tmp_path.rglob("*.js"))


def test_an_installed_build_is_found_and_kept(monkeypatch, tmp_path):
    monkeypatch.setenv("SWEETRL_GYM_HOME", str(tmp_path))
    monkeypatch.delenv("SWEETRL_TAILWIND", raising=False)
    target = tmp_path / "assets" / install.TAILWIND_FILE
    target.parent.mkdir(parents=True)
    target.write_text("/* tailwind */")

    def no_fetch():
        raise AssertionError("an installed build must not be fetched again")

    monkeypatch.setattr(install, "_fetch_tarball", no_fetch)
    assert install.install_tailwind() == target == tailwind_path()
