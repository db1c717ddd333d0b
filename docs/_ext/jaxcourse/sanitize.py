"""Make what a cell displayed safe to publish: its HTML and its markdown.

A page's outputs are untrusted data. A ``text/html`` output passes through nh3
(Python bindings to the Rust sanitizer ammonia) with an allow-list: the
markup libraries really emit stays (``rich``'s styled ``<pre>``, pandas'
tables, headings, lists, inline styles for colour and layout), and scripts,
event handlers, iframes, forms, style sheets and every URL that leaves the
site go. A ``text/markdown`` output is rendered as CommonMark with raw HTML
turned off, then sanitized the same way: it cannot reach MyST's directives.

Nothing here imports Sphinx, so the unit tests exercise it directly.
"""

from __future__ import annotations

import re

import nh3
from markdown_it import MarkdownIt

#: ammonia's default tags, less image maps (whose areas are links).
TAGS = frozenset(nh3.ALLOWED_TAGS) - {"area", "map"}
#: Per tag; "*" for every tag. Inline styles keep only the properties in STYLE_PROPERTIES.
ATTRIBUTES = {
    "*": {"class", "title", "style", "lang", "dir"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "table": {"border"},  # pandas writes border="1"
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align", "scope"},
    "ol": {"start"},
}
#: What rich, pandas and hand-written tables set inline; nothing that can load a URL or move the element.
STYLE_PROPERTIES = frozenset(
    {
        "color",
        "background-color",
        "font-weight",
        "font-style",
        "font-family",
        "font-size",
        "text-decoration",
        "text-decoration-color",
        "text-decoration-line",
        "text-align",
        "vertical-align",
        "white-space",
        "line-height",
        "overflow-x",
        "padding",
        "margin",
        "border",
        "border-collapse",
        "width",
    }
)
_CONTROL_AND_SPACE = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:")
_DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,", re.IGNORECASE)
_URL_ATTRIBUTES = {"href", "src"}


def stays_on_site(tag: str, value: str) -> bool:
    """Whether a link or image address can only lead into this site (or is an inline image)."""
    # Browsers ignore tabs and newlines in URLs and read a backslash as a slash.
    address = _CONTROL_AND_SPACE.sub("", value).replace("\\", "/")
    if address.startswith("//"):
        return False  # another host, on this page's scheme
    if _SCHEME.match(address.lower()):
        return tag == "img" and bool(_DATA_IMAGE.match(address))
    return True


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    if attribute in _URL_ATTRIBUTES and not stays_on_site(tag, value):
        return None
    if attribute == "style" and ("url(" in value.lower() or "expression(" in value.lower()):
        return None
    return value


_STYLE = re.compile(r'style="([^"]*)"')
_HEX = re.compile(r"^#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})$")
MIN_CONTRAST = 4.5


def _full_hex(colour: str) -> str:
    return colour if len(colour) == 7 else "#" + "".join(c * 2 for c in colour[1:])


def readable_style(style: str) -> str:
    """An inline style whose text colour reads on its background colour (WCAG AA, 4.5:1), else black or white.

    Libraries choose their own colours: ``jax.debug.visualize_array_sharding`` writes white text on pale
    blocks, which readers cannot read and axe-core flags. The text colour is the only thing changed.
    """
    from .runtime import contrast_ratio, text_colour_on

    declarations = [part.split(":", 1) for part in style.split(";") if ":" in part]
    values = {name.strip().lower(): value.strip() for name, value in declarations}
    text, background = values.get("color", ""), values.get("background-color", "")
    if not (_HEX.match(text) and _HEX.match(background)):
        return style
    text, background = _full_hex(text), _full_hex(background)
    if contrast_ratio(text, background) >= MIN_CONTRAST:
        return style
    better = text_colour_on(background)
    replaced = {"color": better, "text-decoration-color": better}
    return ";".join(
        f"{name.strip()}:{replaced.get(name.strip().lower(), value.strip())}" for name, value in declarations
    )


def html(markup: str) -> str:
    """``markup`` with only the allowed tags, attributes, styles and on-site addresses left, its text readable."""
    return _STYLE.sub(lambda match: f'style="{readable_style(match[1])}"', _clean(markup))


def _clean(markup: str) -> str:
    return nh3.clean(
        markup,
        tags=set(TAGS),
        clean_content_tags={"script", "style", "template", "textarea", "title", "noscript"},
        attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
        attribute_filter=_keep_attribute,
        strip_comments=True,
        link_rel="noopener noreferrer",
        url_schemes={"data"},
        filter_style_properties=set(STYLE_PROPERTIES),
    )


_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown(text: str) -> str:
    """CommonMark (with tables) rendered to HTML, raw HTML shown as text, then sanitized."""
    return html(_MARKDOWN.render(text))
