import pytest

from sweetrl_gym.render.colours import colour_distance, colour_name, parse_css_colour
from sweetrl_gym.render.page_source import (
    ASSET_ORIGIN,
    TAILWIND_FUNCTION,
    has_tailwind_cdn,
    with_local_tailwind,
)


@pytest.mark.parametrize(
    "tag",
    [
        '<script src="https://cdn.tailwindcss.com"></script>',
        "<script src='https://cdn.tailwindcss.com?plugins=forms'></script>",
        '<SCRIPT SRC="https://unpkg.com/@tailwindcss/browser@4"></SCRIPT>',
        '<link href="https://cdn.jsdelivr.net/npm/tailwindcss@2.2.19/dist/tailwind.min.css" rel="stylesheet">',
    ],
)
def test_every_tailwind_cdn_tag_is_swapped_for_the_local_build(tag):
    html = f"<html><head>{tag}{tag}</head><body></body></html>"
    assert has_tailwind_cdn(html)
    swapped = with_local_tailwind(html, "tailwind.js")
    assert swapped.count(f"<script>{TAILWIND_FUNCTION}()</script>") == 1
    assert swapped.count("<script") == 1
    assert "cdn" not in swapped.lower() and "unpkg" not in swapped
    as_css = with_local_tailwind(html, "tailwind.css")
    assert as_css.count(f'<link rel="stylesheet" href="{ASSET_ORIGIN}/tailwind.css">') == 1


def test_other_scripts_and_pages_without_tailwind_are_untouched():
    html = '<html><head><script src="https://example.com/app.js"></script></head></html>'
    assert not has_tailwind_cdn(html)
    assert with_local_tailwind(html, "tailwind.js") == html


@pytest.mark.parametrize(
    ("css", "rgb"),
    [
        ("rgb(255, 0, 0)", (255, 0, 0)),
        ("rgba(0, 0, 255, 0.5)", (0, 0, 255)),
        ("#0f0", (0, 255, 0)),
        ("#1e3a8aff", (30, 58, 138)),
        ("oklch(0.637 0.237 25.331)", (251, 44, 54)),  # Tailwind 4 red-500
        ("oklch(62.3% 0.214 259.815)", (43, 127, 255)),  # Tailwind 4 blue-500
    ],
)
def test_css_colours_parse_to_rgb(css, rgb):
    parsed = parse_css_colour(css)
    assert parsed is not None and max(abs(a - b) for a, b in zip(parsed, rgb)) <= 1


@pytest.mark.parametrize("css", ["", "red", "rgb(", "oklch(a b c)", "#12", None, "url(x)"])
def test_unknown_colours_are_none_not_errors(css):
    assert parse_css_colour(css) is None


def test_colours_get_everyday_names_and_distances():
    assert colour_name((255, 255, 255)) == "white"
    assert colour_name((0, 0, 0)) == "black"
    assert colour_name((31, 41, 55)) == "dark gray"  # Tailwind's bluish gray-800
    assert colour_name((251, 44, 54)) == "red"
    assert colour_name((30, 58, 138)) == "very dark blue"
    assert colour_name((220, 252, 231)).endswith("green")
    assert colour_distance((10, 20, 30), (10, 20, 30)) == 0
    assert colour_distance((255, 0, 0), (0, 0, 255)) > 100
    assert colour_distance((250, 250, 250), (255, 255, 255)) < 3
