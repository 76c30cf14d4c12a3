"""A tiny HTML tree builder with stable, indented output (no dependencies, fast)."""

from __future__ import annotations

from html import escape

__all__ = ["Node", "el", "render_document"]

VOID_TAGS = frozenset({"meta", "input", "br", "hr", "img", "link"})
_INLINE_TAGS = frozenset({"a", "span", "strong", "em", "button", "label"})
_ONE_LINE_MAX = 110  # longer mixed content is laid out one child a line


def _text(value: str) -> str:
    # html.escape is slow-ish and our copy rarely needs it: check first (10k pages a load).
    return escape(value, quote=False) if ("&" in value or "<" in value or ">" in value) else value


class Node:
    """One element: tag, rendered attribute text, children, and its one-line form.

    ``inline`` is the element written on one line when it is a text-only inline
    element (``<a>``, ``<span>``, ...), else ``None``.
    """

    __slots__ = ("attrs", "children", "inline", "tag")

    def __init__(
        self, tag: str, attrs: str, children: tuple[Node | str, ...], inline: str | None
    ) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children = children
        self.inline = inline


def el(tag: str, cls: str = "", *children: Node | str | None, **attrs: str) -> Node:
    """Build an element; text children are escaped, ``None`` children dropped.

    Args:
        tag: Element name.
        cls: The ``class`` attribute (omitted when empty).
        *children: Elements or text.
        **attrs: Further attributes in order (``type_`` for ``type``).

    Returns:
        The element.

    """
    text = f' class="{cls}"' if cls else ""
    for key, value in attrs.items():
        text += f' {key.rstrip("_")}="{escape(value)}"'
    kids: list[Node | str] = []
    text_only = True
    for child in children:
        if child is None:
            continue
        if isinstance(child, str):
            kids.append(_text(child))
        else:
            kids.append(child)
            text_only = False
    inline = None
    if text_only and tag in _INLINE_TAGS:
        inline = f"<{tag}{text}>{''.join(kids)}</{tag}>"  # type: ignore[arg-type]
    return Node(tag, text, tuple(kids), inline)


def _render(node: Node, depth: int, out: list[str]) -> None:
    pad = "  " * depth
    if node.tag in VOID_TAGS:
        out.append(f"{pad}<{node.tag}{node.attrs}>")
        return
    parts = [child if isinstance(child, str) else child.inline for child in node.children]
    if None not in parts:
        line = f"{pad}<{node.tag}{node.attrs}>{''.join(parts)}</{node.tag}>"  # type: ignore[arg-type]
        if len(parts) <= 1 or len(line) <= _ONE_LINE_MAX + len(pad):
            out.append(line)
            return
    out.append(f"{pad}<{node.tag}{node.attrs}>")
    for child, part in zip(node.children, parts):
        if part is not None:
            out.append(f"{pad}  {part}")
        else:
            _render(child, depth + 1, out)  # type: ignore[arg-type]
    out.append(f"{pad}</{node.tag}>")


def render_document(head: list[Node], body: Node) -> str:
    """Return the full page: doctype, ``<html>``, the head elements and the body."""
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>"]
    for node in head:
        _render(node, 1, out)
    out.append("</head>")
    _render(body, 0, out)
    out.append("</html>")
    return "\n".join(out) + "\n"
