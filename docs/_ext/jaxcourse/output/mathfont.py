"""The site's own math font: STIX Two Math, subset to what the site's formulas use.

Browsers set MathML with the OpenType MATH table of the font they draw it in (stretched brackets, the
spacing of fractions, scripts and radicals), and few readers have such a font, so the site serves one: STIX
Two Math (SIL Open Font License 1.1), which the pinned ``ziamath`` ships. The characters of each page's
formulas are collected at ``doctree-read`` (so incremental builds keep every page's); at the end of the
build ``fontTools`` keeps only their glyphs and MATH variants, written as WOFF2 into ``_static``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import os
from pathlib import Path

from docutils import nodes
from docutils.utils.math import MathError
from sphinx.application import Sphinx

from .mathml import to_mathml

FONT_FILE = "jaxcourse-math.woff2"
#: Always in the font, so that a small edit seldom changes it: ASCII and the usual operators and fences.
BASE = "U+0020-007E,U+00A0,U+00B1,U+00B7,U+00D7,U+00F7,U+2016,U+2026,U+2032,U+2212,U+2264-2265,U+27E8-27E9"
#: Where MathML draws a one-letter identifier (<mi>x</mi> is set in mathematical italic), per mathvariant:
#: (first capital Latin, first small Latin, first capital Greek, first small Greek) in the Unicode math block.
_VARIANT_STARTS = {
    "italic": (0x1D434, 0x1D44E, 0x1D6E2, 0x1D6FC),
    "bold": (0x1D400, 0x1D41A, 0x1D6A8, 0x1D6C2),
    "bold-italic": (0x1D468, 0x1D482, 0x1D71C, 0x1D736),
}
_EXCEPTIONS = {("italic", "h"): 0x210E}  # italic small h has lived in Letterlike Symbols since before the block


def font_source() -> Path:
    """The font file ziamath ships, found without importing ziamath (whose import has side effects)."""
    (folder,) = importlib.util.find_spec("ziamath").submodule_search_locations
    return Path(folder, "fonts", "STIXTwoMath-Regular.ttf")


def styled(character: str, variant: str) -> str:
    """``character`` as MathML draws it in ``variant`` ('italic', 'bold', 'bold-italic'), if it has such a form."""
    starts = _VARIANT_STARTS.get(variant)
    if starts is None:
        return character
    if (variant, character) in _EXCEPTIONS:
        return chr(_EXCEPTIONS[(variant, character)])
    code = ord(character)
    for first, start in zip((0x41, 0x61, 0x391, 0x3B1), starts, strict=True):
        if first <= code < first + (26 if first < 0x100 else 25):
            return chr(start + code - first)
    return character


def characters(mathml: str) -> set[str]:
    """The characters a MathML string draws, one-letter identifiers in the math italic they are shown in."""
    import xml.etree.ElementTree as ET

    found: set[str] = set()
    for element in ET.fromstring(mathml).iter():
        text = element.text or ""
        found.update(text)
        if element.tag.endswith("mi") and len(text) == 1:
            found.add(styled(text, element.get("mathvariant", "italic")))
    return found


def collect_characters(app: Sphinx, doctree: nodes.document) -> None:
    """Note the characters of this page's formulas (doctree-read); a formula in error is reported when written."""
    found: set[str] = set()
    for node in doctree.findall(lambda node: isinstance(node, (nodes.math, nodes.math_block))):
        try:
            found |= characters(to_mathml(node.astext(), block=isinstance(node, nodes.math_block)))
        except MathError:
            continue
    domain = app.env.get_domain("course")
    if found:
        domain.math_characters[app.env.docname] = "".join(sorted(found))
    else:
        domain.math_characters.pop(app.env.docname, None)


def subset(characters: str) -> bytes:
    """STIX Two Math with the glyphs of ``characters`` and :data:`BASE` only, as WOFF2; deterministic."""
    from fontTools import subset as fonttools_subset
    from fontTools.ttLib import TTFont

    logging.getLogger("fontTools").setLevel(logging.WARNING)  # its subsetter logs every table it prunes

    options = fonttools_subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # the math script features (ssty) and the MATH table's variants
    font = TTFont(font_source(), recalcTimestamp=False)
    subsetter = fonttools_subset.Subsetter(options)
    subsetter.populate(text=characters, unicodes=fonttools_subset.parse_unicodes(BASE))
    subsetter.subset(font)
    buffer = io.BytesIO()
    font.flavor = "woff2"
    font.save(buffer)
    return buffer.getvalue()


def cached_subset(characters: str, cache: Path) -> bytes:
    """:func:`subset`, kept in ``cache`` by what determines it: a one-page build then skips fontTools' second."""
    from fontTools import version as fonttools_version

    source = font_source()
    key = hashlib.sha256(
        f"{characters}|{BASE}|{source.name}|{source.stat().st_size}|{fonttools_version}".encode()
    ).hexdigest()
    path = cache / f"{key[:32]}.woff2"
    if path.is_file():
        return path.read_bytes()
    data = subset(characters)
    cache.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")  # parallel builds: write, then rename
    temporary.write_bytes(data)
    temporary.replace(path)
    return data


def write_font(app: Sphinx, exception: Exception | None) -> None:
    """The subset font, into the site's _static folder (build-finished)."""
    if exception is not None or app.builder.format != "html":
        return
    used = "".join(sorted(set("".join(app.env.get_domain("course").math_characters.values()))))
    target = Path(app.outdir, "_static", FONT_FILE)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = cached_subset(used, Path(app.srcdir, "_build", ".mathfont"))
    if not target.exists() or target.read_bytes() != data:
        target.write_bytes(data)
