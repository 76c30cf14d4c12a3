"""What a rendered page is made of: its top-level blocks, read from the live DOM.

The renderer runs :data:`LAYOUT_SCRIPT` in the page after it loads; each top-level block
(navigation, hero, a grid of cards, a footer, ...) comes back with its box, its effective
background colour, text colour and alignment, how many columns its content forms, its
heading and text. The offline simulated human compares two pages through these.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["LAYOUT_SCRIPT", "Block", "blocks_from_json"]

# Runs in the page; must never throw (a hostile page may have replaced globals, so it
# only uses what it captures at the start and guards every step).
LAYOUT_SCRIPT = r"""
() => {
  const MAX_BLOCKS = 40;
  const cs = (el) => window.getComputedStyle(el);
  const transparent = (c) => !c || c === 'transparent' || /rgba\(.*,\s*0\)$/.test(c);
  const gradientColour = (img) => {
    const m = img && img.match(/rgba?\([^)]*\)|oklch\([^)]*\)|#[0-9a-f]{3,8}/i);
    return m ? m[0] : null;
  };
  const background = (el) => {
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const s = cs(e);
      if (!transparent(s.backgroundColor)) return s.backgroundColor;
      const g = gradientColour(s.backgroundImage);
      if (g) return g;
    }
    return 'rgb(255, 255, 255)';
  };
  const visible = (el) => {
    const s = cs(el);
    if (s.display === 'none' || s.visibility === 'hidden' || Number(s.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width >= 4 && r.height >= 4;
  };
  const SKIP = new Set(['SCRIPT', 'STYLE', 'LINK', 'META', 'NOSCRIPT', 'TEMPLATE', 'BR']);
  const kids = (el) => Array.from(el.children).filter((c) => !SKIP.has(c.tagName) && visible(c));
  // Descend through wrappers (a lone <div> or <main> holding the real sections).
  const topBlocks = () => {
    let root = document.body;
    if (!root) return [];
    for (let depth = 0; depth < 6; depth++) {
      const k = kids(root);
      const sectionTags = ['NAV', 'HEADER', 'FOOTER', 'SECTION'];
      const wrapper = k.length === 1 && !sectionTags.includes(k[0].tagName)
        && kids(k[0]).length >= 2;
      const main = k.find((c) => c.tagName === 'MAIN');
      if (wrapper) { root = k[0]; continue; }
      if (main && k.length <= 3) {
        const out = [];
        for (const c of k) { if (c === main) out.push(...kids(main)); else out.push(c); }
        return out;
      }
      return k;
    }
    return kids(root);
  };
  const columns = (el) => {
    let best = 1;
    const visit = (node, depth) => {
      if (depth > 5) return;
      const k = kids(node);
      if (k.length >= 2) {
        const rows = new Map();
        for (const c of k) {
          const r = c.getBoundingClientRect();
          if (r.width < 24 || r.height < 16) continue;
          const key = Math.round(r.top / 8);
          rows.set(key, (rows.get(key) || 0) + 1);
        }
        for (const n of rows.values()) if (n > best) best = n;
      }
      for (const c of k) visit(c, depth + 1);
    };
    visit(el, 0);
    return best;
  };
  // The block's own text: the first visible text drawn on the block's background
  // (not on a card inside it), else the first visible text at all.
  const firstText = (el) => {
    const own = background(el);
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let first = null;
    let seen = 0;
    for (let n = walker.nextNode(); n && seen < 200; n = walker.nextNode(), seen++) {
      const parent = n.parentElement;
      if (!n.textContent.trim() || !parent || !visible(parent)) continue;
      if (background(parent) === own) return parent;
      if (!first) first = parent;
    }
    return first;
  };
  const text = (el, n) => (el.innerText || '').replace(/\s+/g, ' ').trim().slice(0, n);
  const out = [];
  for (const el of topBlocks().slice(0, MAX_BLOCKS)) {
    const r = el.getBoundingClientRect();
    const heading = el.querySelector('h1, h2, h3, h4, h5, h6');
    const t = firstText(el);
    const s = cs(el);
    out.push({
      tag: el.tagName.toLowerCase(),
      id: (el.id || '').slice(0, 40),
      classes: (typeof el.className === 'string' ? el.className : '').slice(0, 300),
      x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height,
      background: background(el),
      color: t ? cs(t).color : s.color,
      align: t ? cs(t).textAlign : s.textAlign,
      columns: columns(el),
      heading: heading ? text(heading, 120) : '',
      heading_size: heading ? parseFloat(cs(heading).fontSize) || 0 : 0,
      text: text(el, 400),
      links: el.querySelectorAll('a').length,
      buttons: el.querySelectorAll('button, input[type=submit], a[class*="rounded"]').length,
      inputs: el.querySelectorAll('input, textarea, select').length,
      images: el.querySelectorAll('img, svg, picture').length,
    });
  }
  return out;
}
"""


@dataclass(frozen=True)
class Block:
    """One top-level block of a rendered page (CSS pixels, page coordinates).

    Attributes:
        tag: Element name (``nav``, ``section``, ``div``, ...).
        id: The element's id (may be empty).
        classes: Its class attribute (may be empty).
        x, y, width, height: Its box on the page.
        background: Effective background colour as CSS reports it (``rgb(...)`` or
            ``oklch(...)``), inherited from ancestors when transparent.
        color: Colour of its first visible text.
        align: ``text-align`` of its first visible text.
        columns: Most children laid side by side in one row anywhere inside it.
        heading: Text of its first heading (``""`` if none).
        heading_size: Font size of that heading in px (0 if none).
        text: Its visible text, whitespace collapsed, cut to 400 characters.
        links, buttons, inputs, images: Counts of such elements inside.

    """

    tag: str
    id: str
    classes: str
    x: float
    y: float
    width: float
    height: float
    background: str
    color: str
    align: str
    columns: int
    heading: str
    heading_size: float
    text: str
    links: int = 0
    buttons: int = 0
    inputs: int = 0
    images: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        return asdict(self)


def blocks_from_json(data: Any) -> tuple[Block, ...]:
    """Build blocks from :data:`LAYOUT_SCRIPT`'s result, dropping malformed entries.

    The result comes from an untrusted page (it may have patched DOM functions), so
    every field is type-checked.
    """
    if not isinstance(data, list):
        return ()
    blocks = []
    for item in data[:40]:
        if not isinstance(item, dict):
            continue
        try:
            blocks.append(
                Block(
                    tag=str(item.get("tag", ""))[:20],
                    id=str(item.get("id", ""))[:40],
                    classes=str(item.get("classes", ""))[:300],
                    x=float(item.get("x", 0.0)),
                    y=float(item.get("y", 0.0)),
                    width=float(item.get("width", 0.0)),
                    height=float(item.get("height", 0.0)),
                    background=str(item.get("background", ""))[:80],
                    color=str(item.get("color", ""))[:80],
                    align=str(item.get("align", ""))[:20],
                    columns=max(1, min(int(item.get("columns", 1)), 50)),
                    heading=str(item.get("heading", ""))[:120],
                    heading_size=float(item.get("heading_size", 0.0)),
                    text=str(item.get("text", ""))[:400],
                    links=int(item.get("links", 0)),
                    buttons=int(item.get("buttons", 0)),
                    inputs=int(item.get("inputs", 0)),
                    images=int(item.get("images", 0)),
                )
            )
        except (TypeError, ValueError, OverflowError):
            continue
    return tuple(blocks)
