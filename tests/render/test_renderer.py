import http.server
import threading
import time

import numpy as np
import pytest
from PIL import Image

from sweetrl_gym.render import (
    AssetMissingError,
    BrowserNotFoundError,
    Renderer,
    RenderError,
    render_html,
)
from sweetrl_gym.render.page_source import TAILWIND_FUNCTION
from tests.render.conftest import page

RED_500 = (251, 44, 54)  # Tailwind 4's red-500, as Chromium paints it


def pixel(image: Image.Image, x: int, y: int) -> tuple[int, int, int]:
    return image.convert("RGB").getpixel((x, y))


def close_to(colour, expected, tolerance=6):
    return all(abs(a - b) <= tolerance for a, b in zip(colour, expected))


def test_tailwind_classes_render_offline(renderer):
    image = renderer.render(page('<div class="bg-red-500 w-full h-64"></div>'))
    assert image.mode == "RGB" and image.width == 1280
    assert close_to(pixel(image, 640, 120), RED_500)


def test_tailwind_link_tags_of_other_cdns_are_served_locally_too(renderer):
    link = '<link href="https://cdn.jsdelivr.net/npm/tailwindcss@2.2.19/dist/tailwind.min.css" rel="stylesheet">'
    image = renderer.render(page('<div class="bg-red-500 w-full h-64"></div>', head=link))
    assert close_to(pixel(image, 640, 120), RED_500)


def test_a_page_cannot_take_the_name_tailwind_runs_under(renderer):
    # The script build is defined in every document before the page's own scripts run;
    # a page that overwrites or deletes the name first still gets Tailwind where it asked.
    grab = (
        f"<script>try {{ window.{TAILWIND_FUNCTION} = () => {{}}; }} catch (e) {{}}"
        f"try {{ delete window.{TAILWIND_FUNCTION}; }} catch (e) {{}}</script>"
    )
    head = grab + '<script src="https://cdn.tailwindcss.com"></script>'
    image = renderer.render(page('<div class="bg-red-500 w-full h-64"></div>', head=head))
    assert close_to(pixel(image, 640, 120), RED_500)


def test_a_page_without_tailwind_is_shown_as_a_browser_would(renderer):
    image = renderer.render(page('<div class="bg-red-500 w-full h-64">x</div>', head=""))
    assert close_to(pixel(image, 640, 120), (255, 255, 255))


def test_public_render_html_uses_the_shared_renderer():
    image = render_html(page('<div style="background: rgb(0, 0, 255); height: 300px"></div>'))
    assert close_to(pixel(image, 300, 150), (0, 0, 255), tolerance=2)


def test_full_page_screenshot_is_as_tall_as_the_page_and_capped(renderer):
    tall = renderer.render(page('<div style="height: 2000px; background: #0f0"></div>'))
    assert tall.height >= 2000
    assert close_to(pixel(tall, 100, 1900), (0, 255, 0), tolerance=2)
    huge = renderer.render(page('<div style="height: 5000000px; background: #0f0"></div>'))
    assert huge.height == renderer.max_height
    short = renderer.render(page("<p>short</p>"))
    assert short.size == (1280, renderer.height)


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):
        type(self).hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"body { background: red; }")

    def log_message(self, *args):
        pass


def test_no_request_leaves_the_browser(renderer):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        html = page(
            f'<img src="{url}/img.png"><link rel="stylesheet" href="{url}/style.css">'
            f'<iframe src="{url}/frame"></iframe>'
            f'<script>fetch("{url}/fetch").catch(() => {{}});'
            f'new WebSocket("ws://127.0.0.1:{server.server_address[1]}/ws");'
            f'navigator.sendBeacon && navigator.sendBeacon("{url}/beacon", "x");</script>'
            "<p>hello</p>",
            head=f'<link rel="stylesheet" href="{url}/head.css">',
        )
        image = renderer.render(html)
        time.sleep(0.5)
    finally:
        server.shutdown()
    assert _Recorder.hits == []
    assert close_to(pixel(image, 600, 700), (255, 255, 255))


def test_one_page_cannot_touch_the_next(renderer):
    # Page A leaves a timer that would paint every later page black and stores a flag.
    renderer.render(
        page(
            "<script>localStorage.setItem('x', '1'); document.cookie = 'x=1';"
            "setInterval(() => { document.body.style.background = 'black'; }, 1);</script>"
            "<p>a</p>"
        )
    )
    image = renderer.render(
        page(
            "<p>b</p><script>if (localStorage.getItem('x') || document.cookie) "
            "document.body.style.background = 'black';</script>"
        )
    )
    assert close_to(pixel(image, 600, 400), (255, 255, 255))


@pytest.mark.slow
@pytest.mark.parametrize(
    "hostile",
    [
        "<script>while (true) {}</script>",
        "<script>setTimeout(() => { while (true) {} }, 0)</script>",
        "<script>const a = []; while (true) a.push(new Array(1e6).fill(1));</script>",
    ],
    ids=["loop", "loop-after-load", "memory"],
)
def test_hostile_pages_fail_within_bounded_time_and_the_renderer_recovers(renderer, hostile):
    start = time.monotonic()
    with pytest.raises(RenderError):
        renderer.render(page(f"<p>x</p>{hostile}") + f"<!-- {time.time()} -->")
    assert time.monotonic() - start < 4 * renderer.timeout_s + 10
    image = renderer.render(page('<div class="bg-red-500 h-32"></div>'))
    assert close_to(pixel(image, 100, 60), RED_500)


def test_pop_ups_and_dialogs_do_not_block(renderer):
    html = page(
        "<script>for (let i = 0; i < 50; i++) window.open('about:blank');"
        "alert(1); confirm('x'); prompt('y');</script>"
        '<div class="bg-red-500 h-32"></div>'
    )
    start = time.monotonic()
    image = renderer.render(html)
    assert time.monotonic() - start < renderer.timeout_s + 5
    assert close_to(pixel(image, 100, 60), RED_500)


def test_too_long_html_and_wrong_types_are_clear_errors(renderer):
    with pytest.raises(RenderError, match="limit"):
        renderer.render("<html>" + "x" * (renderer.max_html_chars + 1))
    with pytest.raises(TypeError, match="str"):
        renderer.render(b"<html></html>")  # type: ignore[arg-type]


def test_render_many_keeps_order_and_the_cache_renders_each_page_once(renderer):
    colours = [(255, 0, 0), (0, 128, 0), (0, 0, 255), (255, 255, 0)]
    pages = [page(f'<div style="height:200px;background:rgb{c}"></div>') for c in colours]
    before = renderer.renders
    rendered = renderer.render_many(pages + pages[:2])
    assert [close_to(pixel(p.image, 50, 100), c, 2) for p, c in zip(rendered, colours)] == [
        True
    ] * 4
    assert renderer.renders - before == 4
    again = renderer.render_page(pages[0])
    assert renderer.renders - before == 4
    assert again.sha256 == rendered[0].sha256


def test_renders_from_several_threads(renderer):
    results = {}

    def work(i):
        results[i] = renderer.render(
            page(f'<div style="height:100px;background:rgb({i * 40},0,0)"></div>')
        )

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [0, 1, 2, 3]
    assert [pixel(results[i], 10, 50)[0] for i in range(4)] == [0, 40, 80, 120]


def test_blocks_describe_sections(renderer):
    html = page(
        '<nav class="bg-indigo-700 text-white p-4 flex justify-between"><span>Acme</span><a>Home</a></nav>'
        '<header class="bg-red-500 text-white py-16 text-center"><h1 class="text-5xl">Fresh bread</h1></header>'
        '<section class="grid grid-cols-3 gap-4 p-8"><div class="h-24 bg-blue-500"></div>'
        '<div class="h-24 bg-blue-500"></div><div class="h-24 bg-blue-500"></div></section>'
        '<footer class="bg-gray-800 text-gray-100 p-6">Contact us</footer>'
    )
    blocks = renderer.render_page(html).blocks
    assert [b.tag for b in blocks] == ["nav", "header", "section", "footer"]
    hero = blocks[1]
    assert hero.heading == "Fresh bread" and hero.heading_size == 48
    assert hero.align == "center"
    assert blocks[2].columns == 3
    assert blocks[0].y == 0 and blocks[1].y == blocks[0].height
    image = renderer.render(html)
    assert close_to(pixel(image, 640, int(hero.y + hero.height / 2)), RED_500)


def test_missing_set_up_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("SWEETRL_TAILWIND", str(tmp_path / "none.js"))
    with pytest.raises(AssetMissingError, match=r"sweetrl_gym\.render\.install"):
        Renderer()
    monkeypatch.delenv("SWEETRL_TAILWIND")
    monkeypatch.setenv("SWEETRL_CHROMIUM", str(tmp_path / "chromium"))
    with pytest.raises(BrowserNotFoundError, match="SWEETRL_CHROMIUM"):
        Renderer()
    monkeypatch.delenv("SWEETRL_CHROMIUM")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BrowserNotFoundError, match="apt-get install chromium"):
        Renderer()


def test_a_prebuilt_css_build_can_replace_the_script(tmp_path):
    css = tmp_path / "tailwind.css"
    css.write_text(".bg-red-500 { background-color: rgb(239, 68, 68); } .h-32 { height: 8rem; }")
    with Renderer(tailwind=css, pages=1) as own:
        image = own.render(page('<div class="bg-red-500 h-32"></div>'))
    assert np.allclose(pixel(image, 50, 60), (239, 68, 68), atol=2)


def test_a_closed_renderer_refuses_work():
    own = Renderer(pages=1)
    own.render(page("<p>x</p>"))
    own.close()
    own.close()
    with pytest.raises(RenderError, match="closed"):
        own.render(page("<p>y</p>"))


def test_animations_and_the_caret_are_frozen_so_a_page_renders_the_same_every_time(renderer):
    styles = (
        "<style>@keyframes pulse { from { background: rgb(255, 0, 0); } "
        "to { background: rgb(0, 0, 255); } }"
        ".endless { animation: pulse 0.7s linear infinite; height: 200px; background: #0f0; }"
        ".finite { animation: pulse 60s linear 1 forwards; height: 200px; }</style>"
    )
    body = (
        '<div class="endless"></div><div class="finite"></div>'
        '<input autofocus class="border p-4" value="text">'
    )
    html = page(body, head=styles)
    shots = [np.asarray(renderer.render_many([f"{html}<!-- {i} -->"])[0].image) for i in range(3)]
    assert all(np.array_equal(shots[0], shot) for shot in shots[1:])
    image = Image.fromarray(shots[0])
    assert pixel(image, 640, 100) == (0, 255, 0)  # an endless animation: stopped, own style
    assert pixel(image, 640, 300) == (0, 0, 255)  # a finite one (60 s long): at its end


def test_shared_memory_stays_off_the_disk_where_dev_shm_has_room(monkeypatch, tmp_path):
    # Screenshots pass through Chromium's shared memory; on the disk (Playwright's default)
    # a near-full disk fails every one of them.
    from sweetrl_gym.render import browser

    assert browser._shared_memory_on_disk(str(tmp_path / "missing"))
    free = {"bytes": 64 * 1024**2}
    monkeypatch.setattr(
        browser.shutil, "disk_usage", lambda path: type("Usage", (), {"free": free["bytes"]})
    )
    assert browser._shared_memory_on_disk("/dev/shm")  # Docker's default 64 MB
    free["bytes"] = 8 * 1024**3
    assert not browser._shared_memory_on_disk("/dev/shm")
