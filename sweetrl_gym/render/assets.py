"""Where the renderer's browser and offline Tailwind come from, and how set-up gets them.

Nothing third-party is committed: Chromium comes from the system (Debian's ``chromium``
package) and Tailwind from the npm registry, both fetched at install time by
``python -m sweetrl_gym.render.install`` (which ``make`` runs). At run time nothing is
downloaded: a missing piece is an error that names the command that installs it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = [
    "TAILWIND_PACKAGE",
    "AssetMissingError",
    "BrowserNotFoundError",
    "assets_home",
    "find_chromium",
    "tailwind_path",
]

TAILWIND_PACKAGE = "@tailwindcss/browser@4.3.4"
"""The npm package (pinned) whose ``dist/index.global.js`` styles Tailwind pages offline."""

TAILWIND_FILE = "tailwindcss-browser-4.3.4.js"
_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_COMMAND = "python -m sweetrl_gym.render.install"


class AssetMissingError(RuntimeError):
    """A file the renderer needs (the offline Tailwind script) is not installed."""


class BrowserNotFoundError(RuntimeError):
    """No Chromium executable was found."""


def assets_home() -> Path:
    """Return the folder for fetched assets (``$SWEETRL_GYM_HOME`` or ``~/.cache/sweetrl_gym``)."""
    root = os.environ.get("SWEETRL_GYM_HOME")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "sweetrl_gym"


def tailwind_path() -> Path:
    """Return the local Tailwind file that replaces the CDN tag of pages.

    ``$SWEETRL_TAILWIND`` may point at any Tailwind build: a ``.js`` file (such as
    ``@tailwindcss/browser``) is injected as a script, a ``.css`` file (such as Tailwind
    2's prebuilt ``tailwind.min.css``) as a stylesheet.

    Raises:
        AssetMissingError: If the file is not there (the message says how to install it).

    """
    override = os.environ.get("SWEETRL_TAILWIND")
    path = Path(override).expanduser() if override else assets_home() / "assets" / TAILWIND_FILE
    if not path.is_file():
        where = "$SWEETRL_TAILWIND points at" if override else "expected"
        raise AssetMissingError(
            f"offline Tailwind not found ({where} {path}); install it with "
            f"`{INSTALL_COMMAND}` (fetches {TAILWIND_PACKAGE} from the npm registry)"
        )
    return path


def find_chromium() -> str:
    """Return the path of the system Chromium (``$SWEETRL_CHROMIUM`` first).

    Raises:
        BrowserNotFoundError: If there is none (the message names the install command).

    """
    override = os.environ.get("SWEETRL_CHROMIUM")
    if override:
        if not Path(override).is_file():
            raise BrowserNotFoundError(f"$SWEETRL_CHROMIUM points at {override}, which is missing")
        return override
    for name in _CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserNotFoundError(
        "no Chromium found for rendering pages: install it with `apt-get install chromium` "
        f"(Debian/Ubuntu, as root; or `{INSTALL_COMMAND}`), or set $SWEETRL_CHROMIUM to a "
        "Chromium/Chrome executable"
    )
