"""Install what the renderer needs: ``python -m sweetrl_gym.render.install``.

- Chromium: Debian's ``chromium`` package (plus fonts) via ``apt-get`` when running as
  root; otherwise an error naming the command to run.
- Tailwind: the pinned npm package :data:`~sweetrl_gym.render.assets.TAILWIND_PACKAGE`,
  fetched with ``npm pack`` (so the user's npm registry settings apply) and checked
  against its pinned integrity hash.

Both steps are idempotent: what is already installed is left alone.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.render.assets import (
    TAILWIND_FILE,
    TAILWIND_PACKAGE,
    BrowserNotFoundError,
    assets_home,
    find_chromium,
)

__all__ = ["install_chromium", "install_tailwind", "main"]

# npm's integrity (sha512) of the pinned tarball: a changed package is refused.
TAILWIND_INTEGRITY = "sha512-RQXHqduRVgmZx6yRl2qHl1hXzchnHNELryeeH2UWMrTWBfcVSo1jzuLl+TOdMWwBSSUbzVU1A4S59JeTlLiS4Q=="  # noqa: E501
_APT_PACKAGES = ("chromium", "fonts-liberation", "fonts-dejavu-core")
_TARBALL_MEMBER = "package/dist/index.global.js"


def install_chromium() -> str:
    """Return the system Chromium, installing Debian's package first if it is missing.

    Raises:
        BrowserNotFoundError: If Chromium is missing and cannot be installed here.

    """
    try:
        return find_chromium()
    except BrowserNotFoundError:
        pass
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise BrowserNotFoundError(
            "Chromium is missing; as root run `apt-get install -y "
            + " ".join(_APT_PACKAGES)
            + "` (or install Chromium/Chrome another way and set $SWEETRL_CHROMIUM)"
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", *_APT_PACKAGES]
    if subprocess.run(install, env=env, check=False).returncode != 0:
        # A fresh machine may have no package lists yet.
        subprocess.run(["apt-get", "update", "-q"], env=env, check=True)
        subprocess.run(install, env=env, check=True)
    return find_chromium()


def install_tailwind(force: bool = False) -> Path:
    """Fetch the pinned ``@tailwindcss/browser`` build into the assets folder.

    Args:
        force: Fetch again even if the file is there.

    Returns:
        The installed file.

    Raises:
        RuntimeError: If the fetch fails or the package's hash differs.

    """
    target = assets_home() / "assets" / TAILWIND_FILE
    if target.is_file() and not force:
        return target
    data = _fetch_tarball()
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if integrity != TAILWIND_INTEGRITY:
        raise RuntimeError(
            f"{TAILWIND_PACKAGE} has integrity {integrity}, expected {TAILWIND_INTEGRITY}: "
            "refusing a changed package"
        )
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        member = archive.extractfile(_TARBALL_MEMBER)
        if member is None:
            raise RuntimeError(f"{TAILWIND_PACKAGE} has no {_TARBALL_MEMBER}")
        script = member.read()
    return write_atomically(target, lambda temporary: temporary.write_bytes(script))


def _fetch_tarball() -> bytes:
    """Return the pinned package's tarball.

    By ``npm pack`` when npm is installed (so the user's npm settings apply), else
    straight from the registry.
    """
    npm = shutil.which("npm")
    if npm is None:
        registry = os.environ.get("NPM_CONFIG_REGISTRY", "https://registry.npmjs.org")
        name, version = TAILWIND_PACKAGE.rsplit("@", 1)
        url = f"{registry.rstrip('/')}/{name}/-/{name.split('/')[-1]}-{version}.tgz"
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return response.read()
        except OSError as err:
            raise RuntimeError(
                f"could not fetch {url} ({err}); install npm, or download {TAILWIND_PACKAGE}'s "
                "dist/index.global.js yourself and set $SWEETRL_TAILWIND to it"
            ) from err
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run(
            [npm, "pack", TAILWIND_PACKAGE, "--json", "--pack-destination", tmp],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"`npm pack {TAILWIND_PACKAGE}` failed:\n{result.stderr[-2000:]}")
        return next(Path(tmp).glob("*.tgz")).read_bytes()


def main(argv: list[str] | None = None) -> int:
    """Install Chromium and Tailwind; print where they are."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="fetch Tailwind again")
    parser.add_argument("--skip-chromium", action="store_true", help="only fetch Tailwind")
    args = parser.parse_args(argv)
    try:
        if not args.skip_chromium:
            print(f"chromium: {install_chromium()}")
        print(f"tailwind: {install_tailwind(force=args.force)}")
    except (RuntimeError, subprocess.CalledProcessError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(json.dumps({"assets": str(assets_home())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
