"""Make what a cell displayed safe to publish: its HTML, its markdown and the inline styles of both.

A page's outputs are untrusted data. ``text/html`` passes through nh3 (bindings to the Rust sanitizer
ammonia) with an allow-list: the markup libraries really emit stays (``rich``'s styled ``<pre>``, pandas'
tables, inline colours), and scripts, event handlers, iframes, forms, style sheets and every URL that leaves
the site go. ``text/markdown`` is rendered as CommonMark with raw HTML off, then sanitized the same way, so
it cannot reach MyST's directives. Inline styles are read as CSS declarations from the attribute's decoded
value (ammonia hands it over decoded), never from serialized text: each property must be on
:data:`STYLE_PROPERTIES` and each value is checked token by token, so nothing can load a URL, move the
element out of its place or grow it past a bounded size. Classes are kept only from :data:`CLASSES`, so an
output cannot dress itself as a site warning. SVG is ``safesvg``'s. Nothing here imports Sphinx.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import nh3
from markdown_it import MarkdownIt

from ..runtime.colours import contrast_ratio, text_colour_on

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
#: The only classes an output keeps: pandas' table class, which the site does not style.
CLASSES = frozenset({"dataframe"})
#: A length's unit -> the largest magnitude a property may take in it (bounded, never negative).
_MAX_LENGTH = {"px": 32.0, "pt": 24.0, "em": 2.0, "rem": 2.0, "ex": 4.0, "ch": 4.0, "%": 200.0, "": 3.0}
_MAX_WIDTH = {"px": 1200.0, "pt": 900.0, "em": 80.0, "rem": 80.0, "ch": 160.0, "%": 100.0}
_MAX_RULE = {"px": 4.0, "pt": 3.0, "em": 0.25, "rem": 0.25}
_RULE_STYLES = {"solid", "dashed", "dotted", "none"}
#: What rich, pandas and hand-written tables set inline, each with the kind of value it may take:
#: nothing that can load a URL, position the element, or reach outside the output's box.
STYLE_PROPERTIES: dict[str, str] = {
    "color": "colour",
    "background-color": "colour",
    "text-decoration-color": "colour",
    "font-weight": "keywords-or-number",
    "font-style": "keywords",
    "font-family": "font-family",
    "font-size": "length",
    "line-height": "length",
    "text-decoration": "keywords",
    "text-decoration-line": "keywords",
    "text-align": "keywords",
    "vertical-align": "keywords",
    "white-space": "keywords",
    "overflow-x": "keywords",
    "padding": "length",
    "margin": "length",
    "border": "rule",
    "border-collapse": "keywords",
    "width": "width",
}
_KEYWORD = re.compile(r"^-?[a-z][a-z-]*$")
_LENGTH = re.compile(r"^(?P<number>[0-9]*\.?[0-9]+)(?P<unit>px|pt|em|rem|ex|ch|%)?$")
_HEX_COLOUR = re.compile(r"^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$")
_COLOUR_FUNCTION = re.compile(r"^(?:rgb|rgba|hsl|hsla)\([0-9.,%\s/deg]*\)$")
_FONT_NAME = re.compile(r"""^(?:"[\w .-]*"|'[\w .-]*'|[\w .-]+)$""")
_CONTROL_AND_SPACE = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:")
_DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,", re.IGNORECASE)
_URL_ATTRIBUTES = {"href", "src"}
MIN_CONTRAST = 4.5


def stays_on_site(tag: str, value: str) -> bool:
    """Whether a link or image address can only lead into this site (or is an inline image)."""
    # Browsers ignore tabs and newlines in URLs and read a backslash as a slash.
    address = _CONTROL_AND_SPACE.sub("", value).replace("\\", "/")
    if address.startswith("//"):
        return False  # another host, on this page's scheme
    if _SCHEME.match(address.lower()):
        return tag == "img" and bool(_DATA_IMAGE.match(address))
    return True


# --- CSS declarations ------------------------------------------------------------------------------------------


def declarations(style: str) -> list[tuple[str, str]]:
    """``(property, value)`` pairs of an inline style, split at semicolons outside quotes and brackets."""
    parts, current, quote, depth = [], [], "", 0
    for character in style:
        if quote:
            quote = "" if character == quote else quote
        elif character in "\"'":
            quote = character
        elif character == "(":
            depth += 1
        elif character == ")":
            depth = max(depth - 1, 0)
        elif character == ";" and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(character)
    parts.append("".join(current))
    split = [part.partition(":") for part in parts]
    return [
        (name.strip().lower(), value.strip())
        for name, colon, value in split
        if colon and name.strip() and value.strip()
    ]


def _length_ok(token: str, limits: dict[str, float]) -> bool:
    match = _LENGTH.match(token)
    if not match:
        return False
    unit = match["unit"] or ""
    number = float(match["number"])
    return number == 0 or (unit in limits and number <= limits[unit])


def _is_keyword(token: str) -> bool:
    return bool(_KEYWORD.match(token)) and not token.startswith("-")


def _value_ok(kind: str, value: str) -> bool:
    lowered = value.lower()
    # Escapes, comments, functions that compute or fetch, and anything that could end the attribute.
    if any(mark in lowered for mark in ("\\", "/*", "url(", "expression", "var(", "calc(", "attr(", "<", "@")):
        return False
    tokens = lowered.replace(",", " , ").split()
    if kind == "colour":
        return len(tokens) == 1 and bool(
            _HEX_COLOUR.match(tokens[0]) or _COLOUR_FUNCTION.match(lowered) or _KEYWORD.match(tokens[0])
        )
    if kind == "font-family":
        return all(_FONT_NAME.match(name.strip()) for name in value.split(","))
    if kind in ("keywords", "keywords-or-number"):
        return all(_is_keyword(token) or (kind == "keywords-or-number" and token.isdigit()) for token in tokens)
    if kind == "rule":
        return all(
            _length_ok(token, _MAX_RULE) or _HEX_COLOUR.match(token) or token in _RULE_STYLES for token in tokens
        )
    if kind in ("length", "width"):  # or a keyword: normal, auto, small, larger...
        limits = _MAX_LENGTH if kind == "length" else _MAX_WIDTH
        return all(_length_ok(token, limits) or _is_keyword(token) for token in tokens)
    return False


def safe_style(style: str) -> str:
    """The declarations of ``style`` whose property is allowed and whose value is bounded; text made readable."""
    kept = [
        (name, value)
        for name, value in declarations(style)
        if name in STYLE_PROPERTIES and _value_ok(STYLE_PROPERTIES[name], value)
    ]
    return ";".join(f"{name}:{value}" for name, value in readable_style(kept))


def _full_hex(colour: str) -> str:
    return colour if len(colour) == 7 else "#" + "".join(c * 2 for c in colour[1:])


def readable_style(kept: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Declarations whose text colour reads on their background colour (WCAG AA, 4.5:1), else black or white.

    Libraries choose their own colours: ``jax.debug.visualize_array_sharding`` writes white text on pale
    blocks, which readers cannot read and axe-core flags. The text colour is the only thing changed.
    """
    values = dict(kept)
    text, background = values.get("color", "").lower(), values.get("background-color", "").lower()
    six_or_three = re.compile(r"^#(?:[0-9a-f]{6}|[0-9a-f]{3})$")
    if not (six_or_three.match(text) and six_or_three.match(background)):
        return kept
    if contrast_ratio(_full_hex(text), _full_hex(background)) >= MIN_CONTRAST:
        return kept
    better = text_colour_on(_full_hex(background))
    return [(name, better if name in ("color", "text-decoration-color") else value) for name, value in kept]


# --- HTML ------------------------------------------------------------------------------------------------------


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """ammonia's callback, with the attribute's decoded value: None drops the attribute."""
    if attribute in _URL_ATTRIBUTES and not stays_on_site(tag, value):
        return None
    if attribute == "style":
        return safe_style(value) or None
    if attribute == "class":
        return " ".join(name for name in value.split() if name in CLASSES) or None
    return value


def html(markup: str) -> str:
    """``markup`` with only the allowed tags, attributes, styles, classes and on-site addresses left."""
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


class _ImageFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            attributes = dict(attrs)
            self.found.append(((attributes.get("src") or "").strip(), (attributes.get("alt") or "").strip()))


def images(markup: str) -> list[tuple[str, str]]:
    """Each ``<img>`` in sanitized ``markup``: its address, an inline ``data:`` image or one beside the page, and
    its alt text. A page refuses one without alt text, as it refuses image outputs, and one at an address: an
    output's address is read from the page's URL, where the site publishes no file of the cell's."""
    finder = _ImageFinder()
    finder.feed(markup)
    finder.close()
    return finder.found


_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown(text: str) -> str:
    """CommonMark (with tables) rendered to HTML, raw HTML shown as text, then sanitized."""
    return html(_MARKDOWN.render(text))
