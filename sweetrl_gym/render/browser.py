"""A pool of headless Chromium pages that turns untrusted HTML into screenshots.

One browser (Debian's Chromium, driven by Playwright) is started once and reused: a
reused page renders in about a tenth of a second, a fresh browser takes most of a second.
Playwright's sync API is tied to the thread that started it, so the browser lives on a
private event loop thread and every public method is a thread-safe blocking call; the
pool's pages render concurrently.

Each render is a real navigation to a fresh origin (so no timer, storage or script of one
page can touch the next), with every request blocked except the page itself and the local
Tailwind build, pop-ups closed, dialogs dismissed, animations frozen, and time bounds on
navigation, scripts and the screenshot. A page that still hangs is closed; a browser that
stops answering is killed and started again.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import hashlib
import importlib.util
import io
import itertools
import json
import logging
import os
import shutil
import threading
import weakref
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from PIL import Image

from sweetrl_gym.atomic_write import write_atomically
from sweetrl_gym.render.assets import find_chromium, tailwind_path
from sweetrl_gym.render.layout import LAYOUT_SCRIPT, Block, blocks_from_json
from sweetrl_gym.render.page_source import ASSET_ORIGIN, TAILWIND_FUNCTION, with_local_tailwind

__all__ = ["RenderError", "RenderTimeout", "RenderedPage", "Renderer"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_PAGE_HOST = "page.sweetrl.invalid"
# Flags for a closed network and a quiet, isolated browser (background services would
# otherwise try to reach Google at every start). The dead proxy catches any request the
# route handler does not see (websockets, prefetches).
_CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--js-flags=--max-old-space-size=256",
)
# Chromium's shared memory (every screenshot passes through it) lives in /dev/shm unless
# told to use the temporary directory, which is on disk; Playwright tells it so by default.
# A near-full disk then fails every screenshot ("Unable to capture screenshot"), so the
# disk is used only where /dev/shm is too small for tall pages (Docker's default: 64 MB).
_DISK_SHARED_MEMORY = "--disable-dev-shm-usage"
_MIN_DEV_SHM_BYTES = 512 * 1024**2
_REFUSED_CAPTURE = "Unable to capture screenshot"
_CAPTURE_RETRY_S = 0.2


def _shared_memory_on_disk(dev_shm: str = "/dev/shm") -> bool:
    """Whether Chromium must keep its shared memory in the temporary directory.

    Args:
        dev_shm: The shared-memory mount to measure.

    Returns:
        True where ``dev_shm`` is missing or has less than 512 MB free.

    """
    try:
        return shutil.disk_usage(dev_shm).free < _MIN_DEV_SHM_BYTES
    except OSError:
        return True


_PAGE_HEIGHT_SCRIPT = (
    "() => Math.max(document.documentElement ? document.documentElement.scrollHeight : 0, "
    "document.body ? document.body.scrollHeight : 0)"
)
# Before the page is measured and shot: every animation and transition at a fixed state
# (finite ones at their end, endless ones stopped: the element's own style) and no
# blinking caret, so that a page renders to the same pixels every time.
_FREEZE_SCRIPT = """() => {
  const style = document.createElement('style');
  style.textContent = '*, *::before, *::after { caret-color: transparent !important; }';
  (document.head || document.documentElement).appendChild(style);
  for (const animation of document.getAnimations()) {
    try { animation.finish(); } catch (e) { animation.cancel(); }
  }
}"""
# Frozen, measured and sized in one round trip to the page.
_SETTLE_SCRIPT = (
    f"() => {{ ({_FREEZE_SCRIPT})(); return [({LAYOUT_SCRIPT})(), ({_PAGE_HEIGHT_SCRIPT})()]; }}"
)


# Runs before any script of every frame: pop-ups and modal dialogs become no-ops (a page
# opening windows in a loop would otherwise keep the browser busy past the time limit).
_NO_POPUPS_SCRIPT = """
(() => {
  const replace = (name, value) => {
    try {
      Object.defineProperty(window, name, { value, writable: false, configurable: false });
    } catch (e) {}
  };
  replace('open', () => null);
  replace('alert', () => undefined);
  replace('confirm', () => false);
  replace('prompt', () => null);
  replace('print', () => undefined);
})();
"""


def _define_global(name: str, body: str) -> str:
    """Return a script that defines ``window[name]``, a function running ``body``.

    The property can be neither overwritten nor deleted: a page's own script cannot take
    the name before the page calls it.
    """
    return (
        f"(() => {{ const run = function () {{\n{body}\n}};\n"
        f"try {{ Object.defineProperty(window, {json.dumps(name)}, "
        "{ value: run, writable: false, configurable: false }); } catch (e) {} })();"
    )


class RenderError(RuntimeError):
    """A page could not be rendered (it crashed the tab, was too large, ...)."""


class RenderTimeout(RenderError):
    """A page did not finish loading or painting within the time limit."""


@dataclass(frozen=True)
class RenderedPage:
    """A rendered page.

    Attributes:
        image: Full-page screenshot (RGB), ``width`` pixels wide, cut at ``max_height``.
        blocks: The page's top-level blocks (see :class:`~sweetrl_gym.render.layout.Block`).
        sha256: Hash of the HTML that was rendered.

    """

    image: Image.Image = field(repr=False)
    blocks: tuple[Block, ...]
    sha256: str

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save the screenshot as PNG (atomically) and return the path."""
        return write_atomically(path, lambda temporary: self.image.save(temporary, format="PNG"))


class Renderer:
    """Renders HTML pages in a reused headless Chromium.

    Args:
        width: Viewport width in CSS pixels (and screenshot width).
        height: Viewport height; pages shorter than this are shot at this height.
        max_height: Full-page screenshots are cut at this height (a hostile page may be
            millions of pixels tall).
        pages: Pages rendering at once.
        timeout_s: Limit for loading a page (scripts included) and for its screenshot.
        max_html_chars: Longer HTML is refused with :class:`RenderError`.
        cache_size: Rendered pages kept by HTML hash, so the target of an episode and a
            page the environment and the simulated human both look at render once (a
            1280 x 1500 screenshot holds about 6 MB).
        executable_path: Chromium to use (default:
            :func:`~sweetrl_gym.render.assets.find_chromium`).
        tailwind: Local Tailwind build (default:
            :func:`~sweetrl_gym.render.assets.tailwind_path`).

    """

    def __init__(
        self,
        *,
        width: int = 1280,
        height: int = 800,
        max_height: int = 6000,
        pages: int = 2,
        timeout_s: float = 5.0,
        max_html_chars: int = 2_000_000,
        cache_size: int = 32,
        executable_path: str | None = None,
        tailwind: str | os.PathLike[str] | None = None,
    ):
        for name, value in (("width", width), ("height", height), ("max_height", max_height)):
            if not isinstance(value, int) or not 16 <= value <= 20_000:
                raise ValueError(f"{name} must be an int in 16..20000, got {value!r}")
        if not isinstance(pages, int) or pages < 1:
            raise ValueError(f"pages must be a positive int, got {pages!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        self.width, self.height, self.max_height = width, height, max(max_height, height)
        self.pages = pages
        self.timeout_s = float(timeout_s)
        self.max_html_chars = max_html_chars
        self.cache_size = cache_size
        # Resolved now so a missing driver, browser or Tailwind is an error at construction.
        if importlib.util.find_spec("playwright") is None:
            raise ImportError(
                "rendering needs Playwright: pip install 'sweetrl-gym[frontend]' (it drives "
                "the system Chromium; no browser is downloaded)"
            )
        self.executable_path = executable_path or find_chromium()
        self.tailwind = Path(tailwind) if tailwind is not None else tailwind_path()
        self._tailwind_bytes = self.tailwind.read_bytes()
        self._tailwind_name = "tailwind.css" if self.tailwind.suffix == ".css" else "tailwind.js"
        # A script build is handed to the browser once per page, not sent with every render:
        # each document gets it as a function its inline call runs (with_local_tailwind).
        self._tailwind_init = (
            None
            if self._tailwind_name.endswith(".css")
            else _define_global(TAILWIND_FUNCTION, self._tailwind_bytes.decode("utf-8"))
        )
        self._sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self._cache: OrderedDict[str, RenderedPage] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._documents: dict[str, str] = {}
        self._counter = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._playwright: Any = None
        self._browser: Any = None
        self._idle: asyncio.Queue[Any] | None = None
        self._closed = False
        self.renders = 0  # browser renders done (cache hits excluded)
        self.restarts = 0

    def __repr__(self) -> str:
        return (
            f"Renderer(width={self.width}, pages={self.pages}, timeout_s={self.timeout_s}, "
            f"chromium={self.executable_path!r})"
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> Renderer:
        # A renderer is a handle on a browser: copies of an env's settings (gymnasium
        # deep-copies make() kwargs) share it rather than failing on its locks.
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # In another process (a spawned vector-env worker) it becomes a renderer with the
        # same settings and a browser of its own.
        settings = {
            "width": self.width,
            "height": self.height,
            "max_height": self.max_height,
            "pages": self.pages,
            "timeout_s": self.timeout_s,
            "max_html_chars": self.max_html_chars,
            "cache_size": self.cache_size,
            "executable_path": self.executable_path,
            "tailwind": str(self.tailwind),
        }
        return (_renderer_from_settings, (settings,))

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- public API

    def render(self, html: str) -> Image.Image:
        """Return the full-page screenshot of ``html`` (RGB).

        Raises:
            RenderTimeout: If the page does not load and paint within ``timeout_s``.
            RenderError: If the page cannot be rendered (too long, crashes the tab).
            TypeError: If ``html`` is not a string.

        """
        return self.render_page(html).image

    def render_page(self, html: str) -> RenderedPage:
        """Render ``html`` and return its screenshot and top-level blocks.

        Raises:
            RenderTimeout, RenderError, TypeError: As :meth:`render`.

        """
        return self.render_many([html])[0]

    def render_many(self, htmls: Sequence[str]) -> list[RenderedPage]:
        """Render several pages concurrently (up to ``pages`` at once), in order.

        Raises:
            RenderTimeout, RenderError, TypeError: From the first page that fails.

        """
        keys = [self._key(html) for html in htmls]
        results: dict[str, RenderedPage] = {}
        missing: dict[str, str] = {}
        for key, html in zip(keys, htmls):
            hit = self._cached(key)
            if hit is not None:
                results[key] = hit
            else:
                missing[key] = html
        if missing:
            rendered = self._call(self._render_all(list(missing.items())), len(missing))
            for key, page in rendered.items():
                results[key] = page
                self._remember(key, page)
        return [results[key] for key in keys]

    def close(self) -> None:
        """Close the browser and stop its thread (safe to call twice)."""
        if self._closed:
            return
        self._closed = True
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=10)
        except Exception:
            logger.debug("renderer shutdown failed", exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)

    # -------------------------------------------------------------- thread & loop

    def _key(self, html: str) -> str:
        if not isinstance(html, str):
            raise TypeError(f"html must be a str, got {type(html).__name__}")
        if len(html) > self.max_html_chars:
            raise RenderError(
                f"the page is {len(html):,} characters; the renderer's limit is "
                f"{self.max_html_chars:,}"
            )
        return hashlib.sha256(html.encode("utf-8", "surrogatepass")).hexdigest()

    def _cached(self, key: str) -> RenderedPage | None:
        with self._cache_lock:
            page = self._cache.get(key)
            if page is not None:
                self._cache.move_to_end(key)
            return page

    def _remember(self, key: str, page: RenderedPage) -> None:
        if self.cache_size <= 0:
            return
        with self._cache_lock:
            self._cache[key] = page
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def _call(self, coro: Coroutine[Any, Any, T], n_pages: int) -> T:
        if self._closed:
            coro.close()
            raise RenderError("the renderer is closed")
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        # Generous outer bound: each page's own limits fire well before this.
        rounds = -(-n_pages // self.pages)
        limit = rounds * (3 * self.timeout_s + 40) + 60
        try:
            return future.result(timeout=limit)
        except FutureTimeout as exc:
            future.cancel()
            raise RenderTimeout(f"rendering did not finish within {limit:.0f} s") from exc

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="sweetrl-renderer", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    # ------------------------------------------------------------- browser (loop)

    async def _start_browser(self) -> None:
        from playwright.async_api import async_playwright

        if self._playwright is None:
            self._playwright = await async_playwright().start()
        on_disk = _shared_memory_on_disk()
        self._browser = await self._playwright.chromium.launch(
            executable_path=self.executable_path,
            args=[*_CHROMIUM_ARGS, *([_DISK_SHARED_MEMORY] if on_disk else [])],
            ignore_default_args=[] if on_disk else [_DISK_SHARED_MEMORY],
            headless=True,
            timeout=max(30_000, self.timeout_s * 3000),
        )
        if self._idle is None:
            # Slots, not pages: a slot holding None (or a page of a browser that was
            # restarted since) gets a new page when it is next used.
            self._idle = asyncio.Queue()
            for _ in range(self.pages):
                self._idle.put_nowait(None)

    async def _new_page(self) -> Any:
        context = await self._browser.new_context(
            viewport={"width": self.width, "height": self.height},
            device_scale_factor=1,
            java_script_enabled=True,
            accept_downloads=False,
            service_workers="block",
            offline=False,
        )
        context.set_default_timeout(self.timeout_s * 1000)
        await context.route("**/*", self._route)
        await context.add_init_script(_NO_POPUPS_SCRIPT)
        if self._tailwind_init is not None:
            await context.add_init_script(self._tailwind_init)
        page = await context.new_page()
        # Pop-ups are closed as they open; dialogs are dismissed by Playwright's default.
        page.on("popup", lambda popup: asyncio.ensure_future(_quietly(popup.close())))
        return page

    async def _route(self, route: Any) -> None:
        request = route.request
        html = self._documents.get(request.url)
        if html is not None and request.resource_type == "document":
            await route.fulfill(body=html, content_type="text/html; charset=utf-8")
        elif request.url == f"{ASSET_ORIGIN}/{self._tailwind_name}" and self._tailwind_init is None:
            await route.fulfill(body=self._tailwind_bytes, content_type="text/css")
        else:
            await route.abort("blockedbyclient")

    async def _render_all(self, items: list[tuple[str, str]]) -> dict[str, RenderedPage]:
        if self._browser is None or not self._browser.is_connected():
            await self._restart()
        results = await asyncio.gather(*(self._render_one(key, html) for key, html in items))
        return dict(zip([key for key, _ in items], results))

    async def _render_one(self, key: str, html: str) -> RenderedPage:
        assert self._idle is not None
        page = await self._idle.get()
        # A fresh origin per render: nothing a page stores is visible to the next one.
        url = f"http://r{next(self._counter)}.{_PAGE_HOST}/"
        self._documents[url] = with_local_tailwind(html, self._tailwind_name)
        healthy = False
        try:
            if page is None or page.is_closed() or page.context.browser is not self._browser:
                page = await asyncio.wait_for(self._new_page(), timeout=15)
            image, blocks = await self._load_and_shoot(page, url)
            healthy = True
            self.renders += 1
            return RenderedPage(image=image, blocks=blocks, sha256=key)
        except asyncio.TimeoutError as exc:
            raise RenderTimeout(
                f"the page did not load and paint within {self.timeout_s:g} s"
            ) from exc
        except Exception as exc:
            if "Timeout" in type(exc).__name__:
                raise RenderTimeout(
                    f"the page did not load and paint within {self.timeout_s:g} s"
                ) from exc
            raise RenderError(f"the page could not be rendered: {exc}") from exc
        finally:
            self._documents.pop(url, None)
            if not healthy:
                await self._discard(page)
                page = None
            self._idle.put_nowait(page)

    async def _load_and_shoot(self, page: Any, url: str) -> tuple[Image.Image, tuple[Block, ...]]:
        # Every step is bounded: a script may start an endless loop after the load event.
        limit = self.timeout_s
        await asyncio.wait_for(page.goto(url, wait_until="load", timeout=limit * 1000), limit + 2)
        layout, height = await asyncio.wait_for(page.evaluate(_SETTLE_SCRIPT), limit)
        try:
            height = int(min(max(float(height), self.height), self.max_height))
        except (TypeError, ValueError):
            height = self.height
        png = await asyncio.wait_for(self._screenshot(page, height), limit + 2)
        image = Image.open(io.BytesIO(png)).convert("RGB")
        return image, blocks_from_json(layout)

    async def _screenshot(self, page: Any, height: int) -> bytes:
        """Return the page's top ``height`` pixels as PNG, lossless and quickly encoded.

        Chromium's own capture beyond the viewport (what a full-page screenshot does) with
        its fast PNG settings: the same pixels, cheaper to encode and decode than a fully
        compressed PNG (it mattered most with the CPU shared with training). The page keeps
        its DevTools session from one render to the next.
        """
        session = self._sessions.get(page)
        if session is None:
            session = self._sessions[page] = await page.context.new_cdp_session(page)
        request = {
            "format": "png",
            "clip": {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1},
            "captureBeyondViewport": True,
            "optimizeForSpeed": True,
        }
        try:
            shot = await session.send("Page.captureScreenshot", request)
        except Exception as exc:
            # On a busy CPU Chromium now and then refuses a capture of a loaded page
            # ("Unable to capture screenshot"); asked again, it gives it.
            if _REFUSED_CAPTURE not in str(exc):
                raise
            logger.warning("Chromium refused a page capture; asking again")
            await asyncio.sleep(_CAPTURE_RETRY_S)
            shot = await session.send("Page.captureScreenshot", request)
        return base64.b64decode(shot["data"])

    async def _discard(self, page: Any) -> None:
        """Close a page that failed (it may be stuck in a script); restart a stuck browser."""
        if page is None:
            return
        self._sessions.pop(page, None)
        try:
            await asyncio.wait_for(page.context.close(), timeout=5)
        except Exception:
            logger.warning("a stuck page could not be closed; restarting the browser")
            await self._restart()

    async def _restart(self) -> None:
        self.restarts += 1
        if self._browser is not None:
            await _quietly(asyncio.wait_for(self._browser.close(), timeout=5))
        await self._start_browser()

    async def _shutdown(self) -> None:
        if self._browser is not None:
            await _quietly(asyncio.wait_for(self._browser.close(), timeout=5))
        if self._playwright is not None:
            await _quietly(self._playwright.stop())


def _renderer_from_settings(settings: dict[str, Any]) -> Renderer:
    return Renderer(**settings)


async def _quietly(awaitable: Any) -> None:
    try:
        await awaitable
    except Exception:
        logger.debug("clean-up step failed", exc_info=True)


_default: Renderer | None = None
_default_pid: int | None = None
_default_lock = threading.Lock()


def default_renderer() -> Renderer:
    """Return the process-wide renderer (started on first use, closed at exit).

    A forked child process (e.g. a vector-env worker) gets its own.
    """
    global _default, _default_pid
    with _default_lock:
        if _default is None or _default_pid != os.getpid():
            _default = Renderer()
            _default_pid = os.getpid()
            atexit.register(_default.close)
        return _default
