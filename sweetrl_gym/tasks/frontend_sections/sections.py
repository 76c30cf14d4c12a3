"""One renderer per section kind: each draws its own surface, layout, sizes and copy.

Every renderer takes a :class:`PageContext` (the seeded ``rng`` is its only source of
randomness) and returns one semantic element (``<nav>``, ``<header>``, ``<section>`` or
``<footer>``) whose ``id`` is the section kind.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from sweetrl_gym.tasks.frontend_sections.html import Node, el
from sweetrl_gym.tasks.frontend_sections.palette import Surface, Theme
from sweetrl_gym.tasks.frontend_sections.vocab import PEOPLE, Business

__all__ = ["RENDERERS", "SECTION_KINDS", "SECTION_LABELS", "PageContext"]

SECTION_KINDS = (
    "navigation",
    "hero",
    "features",
    "pricing",
    "testimonials",
    "stats",
    "cta",
    "gallery",
    "faq",
    "contact",
    "footer",
)
SECTION_LABELS = {
    "navigation": "navigation bar",
    "hero": "hero banner",
    "features": "features grid",
    "pricing": "pricing plans",
    "testimonials": "testimonials",
    "stats": "statistics row",
    "cta": "call-to-action banner",
    "gallery": "gallery",
    "faq": "FAQ",
    "contact": "contact form",
    "footer": "footer",
}


@dataclass(frozen=True)
class PageContext:
    """What every section of one page shares.

    Attributes:
        rng: The page's random source (the only one).
        theme: Page-wide style.
        business: The kind of business and its copy.
        name: The business name.
        year: Copyright year.
        email: Contact address.
        phone: Contact number.
        address: Street address.

    """

    rng: random.Random
    theme: Theme
    business: Business
    name: str
    year: int
    email: str
    phone: str
    address: str


_ALIGN_JUSTIFY = {
    "text-left": "justify-start",
    "text-center": "justify-center",
    "text-right": "justify-end",
}
_PADDING = ("py-12", "py-16", "py-16", "py-20", "py-24")


def _wrap(
    tag: str,
    kind: str,
    ctx: PageContext,
    s: Surface,
    *children: Node | None,
    pad: str | None = None,
) -> Node:
    """Build the section element: surface and padding outside, a centred content column inside."""
    pad = pad or ctx.rng.choice(_PADDING)
    column = el("div", f"{ctx.theme.width} mx-auto", *children)
    return el(tag, f"{s.classes} {pad} px-6", column, id=kind)


def _title(
    ctx: PageContext, s: Surface, text: str, align: str, intro: str | None = None
) -> list[Node | None]:
    size = ctx.rng.choice(("text-2xl", "text-3xl", "text-3xl", "text-4xl"))
    heading = el("h2", f"{size} {ctx.theme.weight} {align} mb-4", text)
    if intro is None or ctx.rng.random() < 0.4:
        return [heading]
    return [heading, el("p", f"{s.muted} {align} mb-10", intro)]


def _box(ctx: PageContext, card: Surface, extra: str = "") -> str:
    """Classes of a card on its own surface."""
    shadow = f" {ctx.theme.shadow}" if ctx.theme.shadow else ""
    return f"{card.classes} {ctx.theme.radius}{shadow} {extra}".rstrip()


def _block_colour(ctx: PageContext, on: Surface) -> str:
    hue = ctx.rng.choice((ctx.theme.primary, ctx.theme.primary, ctx.theme.accent, "gray"))
    shades = (200, 300, 400) if on.dark else (200, 300, 400, 500, 600, 700)
    return f"bg-{hue}-{ctx.rng.choice(shades)}"


def navigation(ctx: PageContext) -> Node:
    """Render a bar with the brand and 3-5 links (brand left or centred, optional button)."""
    rng, theme = ctx.rng, ctx.theme
    s = theme.section(rng, dark_chance=0.45)
    brand = el("a", f"text-{rng.choice(('xl', '2xl'))} {theme.weight}", ctx.name, href="#")
    labels = ctx.business.links[: rng.randint(3, len(ctx.business.links))]
    colour = rng.choice((s.text, s.muted))
    size = rng.choice(("text-sm", "text-base"))
    links = el(
        "div",
        f"flex gap-{rng.choice((4, 6, 8))}",
        *(el("a", f"{colour} {size} font-medium", label, href="#") for label in labels),
    )
    layout = rng.choice(("split", "split", "centered", "button"))
    pad = rng.choice(("py-3", "py-4", "py-5", "py-6"))
    if layout == "centered":
        row = el("div", f"{theme.width} mx-auto flex flex-col items-center gap-3", brand, links)
    elif layout == "button":
        action = el("a", theme.button(rng, s), rng.choice(ctx.business.actions), href="#")
        row = el(
            "div",
            f"{theme.width} mx-auto flex items-center justify-between",
            brand,
            el("div", "flex items-center gap-8", links, action),
        )
    else:
        row = el("div", f"{theme.width} mx-auto flex items-center justify-between", brand, links)
    return el("nav", f"{s.classes} {pad} px-8", row, id="navigation")


def hero(ctx: PageContext) -> Node:
    """Render the big heading: one column (left/centre/right) or text beside a coloured block."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.55)
    align = rng.choice(("text-left", "text-center", "text-center", "text-right"))
    size = rng.choice(("text-4xl", "text-5xl", "text-5xl", "text-6xl"))
    actions = rng.sample(biz.actions, rng.choice((1, 2)))
    buttons = [
        el("a", theme.button(rng, s, solid=i == 0), label, href="#")
        for i, label in enumerate(actions)
    ]
    text = [
        el("h1", f"{size} {theme.weight} mb-6", rng.choice(biz.taglines)),
        el("p", f"text-{rng.choice(('lg', 'xl'))} {s.muted} mb-8", rng.choice(biz.subtitles)),
        el("div", f"flex gap-4 {_ALIGN_JUSTIFY[align]}", *buttons),
    ]
    pad = rng.choice(("py-16", "py-20", "py-24", "py-32"))
    if rng.random() < 0.35:
        block = el("div", f"h-64 {theme.radius} {_block_colour(ctx, s)}")
        column = el("div", align, *text)
        pair = (column, block) if rng.random() < 0.6 else (block, column)
        return _wrap(
            "header",
            "hero",
            ctx,
            s,
            el("div", "grid grid-cols-2 gap-12 items-center", *pair),
            pad=pad,
        )
    width = "max-w-3xl mx-auto" if align == "text-center" else ""
    return _wrap("header", "hero", ctx, s, el("div", f"{width} {align}".strip(), *text), pad=pad)


def features(ctx: PageContext) -> Node:
    """Render a grid of 2-4 columns of offerings: plain, bordered or card style."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.2)
    cols = rng.choice((2, 3, 3, 4))
    # Two rows only for narrow grids: eight cards would push the page past ~8 KB.
    count = cols if cols == 4 or rng.random() < 0.6 else 2 * cols
    align = rng.choice(("text-left", "text-left", "text-center"))
    style = rng.choice(("plain", "bordered", "card", "card"))
    icon_shape = rng.choice(("rounded-full", theme.radius, None))
    title_size = rng.choice(("text-lg", "text-xl"))
    surface = s if style != "card" else theme.card(rng, s)
    cards = []
    for title, blurb in rng.sample(biz.offerings, count):
        icon = None
        if icon_shape is not None:
            centre = " mx-auto" if align == "text-center" else ""
            icon = el("div", f"w-12 h-12 {icon_shape} {_block_colour(ctx, surface)} mb-4{centre}")
        body = (
            icon,
            el("h3", f"{title_size} font-semibold mb-2", title),
            el("p", f"{surface.muted} text-sm", blurb),
        )
        if style == "plain":
            cards.append(el("div", align, *body))
        elif style == "bordered":
            cards.append(el("div", f"border border-gray-300 {theme.radius} p-6 {align}", *body))
        else:
            cards.append(el("div", _box(ctx, surface, f"p-6 {align}"), *body))
    heading = rng.choice(
        (
            "What we offer",
            f"Why {ctx.name}",
            "Our services",
            "What makes us different",
            "Everything you need",
        )
    )
    return _wrap(
        "section",
        "features",
        ctx,
        s,
        *_title(ctx, s, heading, align, rng.choice(biz.subtitles)),
        el("div", f"grid grid-cols-{cols} gap-{rng.choice((6, 8))} mt-8", *cards),
    )


def _prices(rng: random.Random, lo: int, hi: int, count: int) -> list[int]:
    """``count`` increasing, round-looking prices starting near ``lo``."""
    prices: list[int] = []
    value = rng.uniform(lo, lo + (hi - lo) * 0.25)
    for _ in range(count):
        if value < 20:
            price = round(value)
        elif value < 300:
            price = round(value / 5) * 5 - rng.choice((0, 1))
        else:
            price = round(value / 50) * 50
        prices.append(max(price, prices[-1] + 1) if prices else price)
        value *= rng.uniform(1.7, 3.0)
    return prices


def pricing(ctx: PageContext) -> Node:
    """Render two or three plan cards, one of them possibly highlighted."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.2)
    count = rng.choice((2, 3, 3))
    start = rng.randint(0, len(biz.plans) - count)
    names = biz.plans[start : start + count]
    prices = _prices(rng, *biz.prices, count)
    highlight = rng.choice((None, count // 2, count - 1))
    cards = []
    for i, (name, price) in enumerate(zip(names, prices)):
        card = theme.dark(rng) if i == highlight else theme.card(rng, s)
        unit = el("span", f"text-base font-normal {card.muted}", biz.unit) if biz.unit else None
        perks = rng.sample(biz.perks, rng.choice((3, 4)))
        cards.append(
            el(
                "div",
                _box(ctx, card, "p-8"),
                el("h3", "text-xl font-semibold", name),
                el("p", f"text-4xl {theme.weight} my-4", f"${price:,}", unit),
                el("ul", f"space-y-2 mb-8 text-sm {card.muted}", *(el("li", "", p) for p in perks)),
                el("a", theme.button(rng, card), rng.choice(biz.actions), href="#"),
            )
        )
    align = rng.choice(("text-left", "text-center", "text-center"))
    heading = rng.choice(
        ("Pricing", "Simple, honest pricing", "Choose your plan", "Plans for every need")
    )
    return _wrap(
        "section",
        "pricing",
        ctx,
        s,
        *_title(ctx, s, heading, align, rng.choice(biz.subtitles)),
        el("div", f"grid grid-cols-{count} gap-8 mt-8 {align}", *cards),
    )


def testimonials(ctx: PageContext) -> Node:
    """Render one to three quotes: side by side or stacked, with optional avatars."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.3)
    count = rng.choice((1, 2, 3, 3))
    boxed = rng.random() < 0.6
    avatar = rng.random() < 0.5
    card = theme.card(rng, s) if boxed else s
    quotes = []
    for quote, person in zip(rng.sample(biz.quotes, count), rng.sample(PEOPLE, count)):
        role = rng.choice(
            ("Customer", "Regular", f"Since {ctx.year - rng.randint(1, 9)}", "Verified review")
        )
        who = el(
            "div", "", el("p", "font-semibold", person), el("p", f"text-sm {card.muted}", role)
        )
        if avatar:
            who = el(
                "div",
                "flex items-center gap-3 mt-6",
                el("div", f"w-10 h-10 rounded-full {_block_colour(ctx, card)}"),
                who,
            )
        else:
            who = el("div", "mt-4", who)
        size = rng.choice(("text-base", "text-lg", "text-xl"))
        quotes.append(
            el(
                "div",
                _box(ctx, card, "p-6") if boxed else "",
                el("p", f"{size} italic", f"“{quote}”"),
                who,
            )
        )
    layout = (
        f"grid grid-cols-{count} gap-8"
        if count > 1 and rng.random() < 0.7
        else "max-w-2xl mx-auto space-y-8"
    )
    align = rng.choice(("text-left", "text-center"))
    heading = rng.choice(("What people say", "Loved by our customers", "Kind words", "Reviews"))
    return _wrap(
        "section",
        "testimonials",
        ctx,
        s,
        *_title(ctx, s, heading, align),
        el("div", f"{layout} mt-8 {align}", *quotes),
    )


_SMALL_COUNTS = tuple(
    """days years coaches speakers teachers specialists agents team stages makers awards
    countries destinations courses workshops products recipes farms dishes""".split()
)


def _stat_value(rng: random.Random, label: str) -> str:
    lowered = label.lower()
    if any(word in lowered for word in ("rate", "growth", "uptime")):
        return f"{rng.randint(85, 99)}%"
    if "rating" in lowered:
        return f"4.{rng.randint(5, 9)}"
    if any(word in lowered for word in _SMALL_COUNTS):
        return str(rng.randint(3, 40))
    return rng.choice(
        (
            str(rng.randint(12, 95)),
            f"{rng.randint(2, 90)}k+",
            f"{rng.randint(120, 980)}+",
            f"{rng.randint(2, 9)},{rng.randint(100, 999)}",
        )
    )


def stats(ctx: PageContext) -> Node:
    """Render a row of 2-4 headline numbers with labels."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.55)
    count = rng.choice((2, 3, 4, 4))
    size = rng.choice(("text-3xl", "text-4xl", "text-5xl"))
    label_style = rng.choice(("text-sm uppercase tracking-wide", "text-base", "text-sm"))
    align = rng.choice(("text-center", "text-center", "text-left"))
    items = [
        el(
            "div",
            "",
            el("p", f"{size} {theme.weight}", _stat_value(rng, label)),
            el("p", f"{label_style} {s.muted} mt-2", label),
        )
        for label in rng.sample(biz.stats, count)
    ]
    heading = (
        []
        if rng.random() < 0.5
        else _title(
            ctx, s, rng.choice(("By the numbers", "Our impact", "Why people trust us")), align
        )
    )
    return _wrap(
        "section",
        "stats",
        ctx,
        s,
        *heading,
        el("div", f"grid grid-cols-{count} gap-8 {align}", *items),
    )


def cta(ctx: PageContext) -> Node:
    """Render a banner with a heading and a button: in a row, or centred; optionally boxed."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    boxed = rng.random() < 0.35
    s = theme.light(rng) if boxed else theme.section(rng, dark_chance=0.65)
    inner_surface = theme.dark(rng) if boxed else s
    heading = el(
        "h2",
        f"text-{rng.choice(('2xl', '3xl', '4xl'))} {theme.weight}",
        rng.choice(
            (
                "Ready to get started?",
                "Come and see us",
                "Join us today",
                "Let's work together",
                "Don't miss out",
                "Start today",
            )
        ),
    )
    sub = el("p", f"{inner_surface.muted} mt-2", rng.choice(biz.subtitles))
    button = el("a", theme.button(rng, inner_surface), rng.choice(biz.actions), href="#")
    if rng.random() < 0.5:
        content = el(
            "div", "flex items-center justify-between gap-8", el("div", "", heading, sub), button
        )
    else:
        content = el("div", "text-center", heading, sub, el("div", "mt-8", button))
    if boxed:
        content = el("div", _box(ctx, inner_surface, "p-10"), content)
    return _wrap("section", "cta", ctx, s, content)


def gallery(ctx: PageContext) -> Node:
    """Render a grid of coloured tiles (no images: the renderer is offline), maybe captioned."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.25)
    cols = rng.choice((2, 3, 3, 4))
    count = cols * rng.choice((1, 2))
    height = rng.choice(("h-24", "h-32", "h-40", "h-48"))
    captioned = count <= len(biz.gallery) and rng.random() < 0.5
    captions = rng.sample(biz.gallery, count) if captioned else None
    tiles = []
    for i in range(count):
        colour = _block_colour(ctx, s)
        if captions:
            shade = int(colour.rsplit("-", 1)[1])
            text = "text-white" if shade >= 500 else "text-gray-900"
            tiles.append(
                el(
                    "div",
                    f"{height} {theme.radius} {colour} flex items-end p-4",
                    el("span", f"{text} font-semibold", captions[i]),
                )
            )
        else:
            tiles.append(el("div", f"{height} {theme.radius} {colour}"))
    align = rng.choice(("text-left", "text-center"))
    heading = rng.choice(("Gallery", "Our work", "A look inside", "Recent projects"))
    return _wrap(
        "section",
        "gallery",
        ctx,
        s,
        *_title(ctx, s, heading, align),
        el("div", f"grid grid-cols-{cols} gap-{rng.choice((2, 4, 6))} mt-8", *tiles),
    )


def faq(ctx: PageContext) -> Node:
    """Render three or four questions: a ruled list, two columns or cards."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.15)
    items = rng.sample(biz.faqs, rng.randint(3, len(biz.faqs)))
    layout = rng.choice(("list", "grid", "cards"))
    card = theme.card(rng, s) if layout == "cards" else s
    entries = []
    for question, answer in items:
        body = (el("h3", "text-lg font-semibold", question), el("p", f"{card.muted} mt-2", answer))
        if layout == "list":
            entries.append(el("div", "py-6 border-b border-gray-300", *body))
        elif layout == "cards":
            entries.append(el("div", _box(ctx, card, "p-6"), *body))
        else:
            entries.append(el("div", "", *body))
    container = {
        "list": "max-w-3xl mx-auto",
        "grid": "grid grid-cols-2 gap-8 mt-8",
        "cards": "max-w-3xl mx-auto space-y-4 mt-8",
    }[layout]
    align = rng.choice(("text-left", "text-center"))
    heading = rng.choice(("Frequently asked questions", "Questions?", "Good to know", "FAQ"))
    return _wrap(
        "section", "faq", ctx, s, *_title(ctx, s, heading, align), el("div", container, *entries)
    )


def contact(ctx: PageContext) -> Node:
    """Render a form (name, email, message, button), alone or beside the contact details."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.25)
    field = f"w-full border border-gray-300 {theme.radius} px-4 py-2 bg-white text-gray-900"
    form = el(
        "form",
        "space-y-4",
        el("input", field, type_="text", placeholder="Your name"),
        el("input", field, type_="email", placeholder="Email address"),
        el("textarea", field, rows="4", placeholder="Your message"),
        el(
            "button",
            theme.button(rng, s),
            rng.choice(("Send", "Send message", "Submit")),
            type_="button",
        ),
    )
    heading = rng.choice(("Get in touch", "Contact us", "Say hello", "Visit or write to us"))
    align = rng.choice(("text-left", "text-center"))
    if rng.random() < 0.5:
        details = el(
            "div",
            f"space-y-3 {s.muted}",
            el("p", "", ctx.address),
            el("p", "", ctx.phone),
            el("p", "", ctx.email),
        )
        body = el("div", "grid grid-cols-2 gap-12 mt-8", details, form)
    else:
        body = el("div", "max-w-xl mx-auto mt-8", form)
    return _wrap(
        "section",
        "contact",
        ctx,
        s,
        *_title(ctx, s, heading, align, rng.choice(biz.subtitles)),
        body,
    )


def footer(ctx: PageContext) -> Node:
    """Render copyright and links: one row, centred, or link columns above a rule."""
    rng, theme, biz = ctx.rng, ctx.theme, ctx.business
    s = theme.section(rng, dark_chance=0.7)
    notice = el("p", f"text-sm {s.muted}", f"© {ctx.year} {ctx.name}. All rights reserved.")
    links = [el("a", f"text-sm {s.muted}", label, href="#") for label in biz.links[:4]]
    layout = rng.choice(("row", "centered", "columns"))
    pad = rng.choice(("py-6", "py-8", "py-10", "py-12"))
    if layout == "row":
        body: Node = el(
            "div", "flex items-center justify-between", notice, el("div", "flex gap-6", *links)
        )
    elif layout == "centered":
        body = el(
            "div",
            "text-center space-y-4",
            el("p", f"text-lg {theme.weight}", ctx.name),
            el("div", "flex justify-center gap-6", *links),
            notice,
        )
    else:
        columns = [
            el(
                "div",
                "",
                el("p", f"text-lg {theme.weight} mb-2", ctx.name),
                el("p", f"text-sm {s.muted}", rng.choice(biz.taglines)),
            ),
            el(
                "div",
                "space-y-2",
                el("p", "font-semibold", "Explore"),
                *(el("p", "", link) for link in links),
            ),
            el(
                "div",
                f"space-y-2 text-sm {s.muted}",
                el("p", f"font-semibold {s.text}", "Contact"),
                el("p", "", ctx.email),
                el("p", "", ctx.phone),
            ),
        ]
        body = el(
            "div",
            "",
            el("div", "grid grid-cols-3 gap-8 mb-8", *columns),
            el("div", "border-t border-gray-300 pt-6", notice),
        )
    return _wrap("footer", "footer", ctx, s, body, pad=pad)


RENDERERS: dict[str, Callable[[PageContext], Node]] = {
    "navigation": navigation,
    "hero": hero,
    "features": features,
    "pricing": pricing,
    "testimonials": testimonials,
    "stats": stats,
    "cta": cta,
    "gallery": gallery,
    "faq": faq,
    "contact": contact,
    "footer": footer,
}
