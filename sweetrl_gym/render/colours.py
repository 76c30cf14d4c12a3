"""CSS colours as RGB, their perceptual distance, and plain-word names for them.

Chromium reports computed colours as ``rgb()``/``rgba()`` or, for Tailwind 4's palette,
``oklch()``; the simulated human compares and names them in words a person would use
("dark blue", "light gray").
"""

from __future__ import annotations

import colorsys
import math
import re

__all__ = ["colour_distance", "colour_name", "parse_css_colour"]

RGB = tuple[int, int, int]

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?%?"
_FUNCTION = re.compile(rf"^(rgba?|oklch|oklab)\(\s*({_NUMBER})[\s,]+({_NUMBER})[\s,]+({_NUMBER})")
_HEX = re.compile(r"^#([0-9a-f]{3,8})$")
# Hue ranges (degrees of HSV hue) and their everyday names.
_HUES = (
    (15, "red"),
    (40, "orange"),
    (65, "yellow"),
    (160, "green"),
    (190, "teal"),
    (215, "sky blue"),
    (245, "blue"),
    (265, "indigo"),
    (295, "purple"),
    (340, "pink"),
    (361, "red"),
)


def _channel(value: str, scale: float = 255.0) -> float:
    return float(value[:-1]) / 100.0 * scale if value.endswith("%") else float(value)


def _linear_to_srgb(x: float) -> int:
    x = min(max(x, 0.0), 1.0)
    y = 12.92 * x if x <= 0.0031308 else 1.055 * x ** (1 / 2.4) - 0.055
    return round(y * 255)


def _oklab_to_rgb(lightness: float, a: float, b: float) -> RGB:
    l_ = (lightness + 0.3963377774 * a + 0.2158037573 * b) ** 3
    m_ = (lightness - 0.1055613458 * a - 0.0638541728 * b) ** 3
    s_ = (lightness - 0.0894841775 * a - 1.2914855480 * b) ** 3
    return (
        _linear_to_srgb(4.0767416621 * l_ - 3.3077115913 * m_ + 0.2309699292 * s_),
        _linear_to_srgb(-1.2684380046 * l_ + 2.6097574011 * m_ - 0.3413193965 * s_),
        _linear_to_srgb(-0.0041960863 * l_ - 0.7034186147 * m_ + 1.7076147010 * s_),
    )


def parse_css_colour(text: str) -> RGB | None:
    """Return the RGB of a CSS colour (``rgb``, ``rgba``, ``oklch``, ``oklab``, hex).

    Transparency is ignored. Returns ``None`` for anything else (never raises).
    """
    text = str(text).strip().lower()
    hex_match = _HEX.match(text)
    if hex_match:
        digits = hex_match.group(1)
        if len(digits) in (3, 4):
            digits = "".join(c * 2 for c in digits[:3])
        if len(digits) not in (6, 8):
            return None
        return (int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16))
    match = _FUNCTION.match(text)
    if not match:
        return None
    kind, x, y, z = match.groups()
    try:
        if kind.startswith("rgb"):
            return tuple(min(255, max(0, round(_channel(v)))) for v in (x, y, z))  # type: ignore[return-value]
        lightness = _channel(x, 1.0)
        if kind == "oklab":
            return _oklab_to_rgb(lightness, _channel(y, 0.4), _channel(z, 0.4))
        chroma, hue = _channel(y, 0.4), math.radians(float(z.rstrip("%")))
        return _oklab_to_rgb(lightness, chroma * math.cos(hue), chroma * math.sin(hue))
    except (ValueError, OverflowError):
        return None


def _to_lab(rgb: RGB) -> tuple[float, float, float]:
    def linear(c: float) -> float:
        c /= 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def colour_distance(first: RGB, second: RGB) -> float:
    """Return the CIE76 ΔE between two colours (about 2: barely visible; 50+: different)."""
    return math.dist(_to_lab(first), _to_lab(second))


def colour_name(rgb: RGB) -> str:
    """Name a colour as a person would: ``"white"``, ``"dark gray"``, ``"light blue"``, ..."""
    h, _, _ = colorsys.rgb_to_hsv(*(c / 255.0 for c in rgb))
    lightness, a, b = _to_lab(rgb)
    # Low chroma reads as gray; Tailwind's dark grays are bluish, so dark ones get more room.
    if math.hypot(a, b) < (16 if lightness < 50 else 10):
        if lightness > 98:
            return "white"
        if lightness < 12:
            return "black"
        shade = (
            "very light "
            if lightness > 90
            else "light "
            if lightness > 75
            else "dark "
            if lightness < 40
            else ""
        )
        return f"{shade}gray"
    hue = next(name for limit, name in _HUES if h * 360 < limit)
    if lightness > 85:
        return f"very light {hue}"
    if lightness > 70:
        return f"light {hue}"
    if lightness < 30:
        return f"very dark {hue}"
    if lightness < 45:
        return f"dark {hue}"
    return hue
