"""Render math to MathML at build time (Sphinx's HTML math renderer ``mathml``): no script, no network.

latex2mathml (``convert_to_element``) knows the environments real tutorials use (``array``, ``align``,
``split``, matrices, ``cases``), several of which docutils' own converter refuses. Its tree is then made safe
and portable: only MathML Core elements and attributes are kept, and ElementTree serializes it, escaping text
(``\\text{<script>}`` stays text); an unknown LaTeX command (the converter would print ``\\foo`` as a variable)
or unbalanced braces raise ``MathError``, so a typo fails the build at the formula. MathML Core ignores the
table attributes that draw rules and align columns, so they become CSS (:func:`_draw_table_rules`). A function
name is followed by U+2061 FUNCTION APPLICATION and spaced as TeX spaces ``\\mathop`` (:func:`_apply_functions`).
The site serves its own OpenType MATH font, which browsers need to stretch brackets (``mathfont``).
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET

from docutils import nodes
from docutils.utils.math import MathError
from latex2mathml.converter import convert_to_element
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

#: MathML Core's elements (https://www.w3.org/TR/mathml-core/); anything else is dropped.
ELEMENTS = {
    "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "mtext", "ms", "mspace", "mfrac", "msqrt",
    "mroot", "mstyle", "merror", "mpadded", "mphantom", "msub", "msup", "msubsup", "munder", "mover",
    "munderover", "mmultiscripts", "mprescripts", "none", "mtable", "mtr", "mtd", "menclose",
}  # fmt: skip
#: Attributes kept as they are; the table attributes below are turned into CSS first.
ATTRIBUTES = {
    "display", "mathvariant", "stretchy", "fence", "form", "separator", "largeop", "movablelimits", "symmetric",
    "accent", "accentunder", "lspace", "rspace", "minsize", "maxsize", "width", "height", "depth", "voffset",
    "scriptlevel", "displaystyle", "linethickness", "columnspan", "rowspan", "notation",
}  # fmt: skip
# Never kept from any source, prose or output: ``style`` (\style{position:fixed;...} would overlay the
# page and load a background from anywhere), ``href`` (a link to anywhere) and ``class`` (the site's own
# looks). The course's table rules and alignment are set as styles after cleaning (_draw_table_rules).
TABLE_ATTRIBUTES = ("columnalign", "rowlines", "columnlines", "frame", "rowspacing", "columnspacing", "rowalign")
RULE = "1px solid currentcolor"
_UNKNOWN_COMMAND = re.compile(r"^\\([A-Za-z]+)")
# A backslash before a line break is LaTeX's control space; the converter would print the backslash.
_CONTROL_SPACE = re.compile(r"(?<!\\)\\\n")
_TABLE_ENVIRONMENTS = re.compile(
    r"\\begin\{(array|matrix\*?|pmatrix\*?|bmatrix\*?|Bmatrix\*?|vmatrix\*?|Vmatrix\*?|smallmatrix|align\*?|"
    r"cases|split)\}"
)
_ENVIRONMENT = re.compile(r"\\begin\{([^}]*)\}")
_ARGUMENT = re.compile(r"\s*\{")
#: The \hline rules (and the space around them) that open a row.
_HLINES = re.compile(r"\s*((?:\\hline\s*)*)")
#: Every environment the converter draws as rows (after the aliases above).
_KNOWN_ENVIRONMENTS = {
    "array", "matrix", "matrix*", "pmatrix", "pmatrix*", "bmatrix", "bmatrix*", "Bmatrix", "Bmatrix*", "vmatrix",
    "vmatrix*", "Vmatrix", "Vmatrix*", "smallmatrix", "align*", "cases", "split", "substack",
}  # fmt: skip
# amsmath environments the converter lacks (it would join their rows on one line, or number them),
# rewritten to ones it knows that draw the same; Sphinx numbers equations itself.
_ALIASES = [
    (re.compile(r"\\(begin|end)\{(aligned|alignat\*?|align)\}(\{\d+\})?"), r"\\\1{align*}"),
    (re.compile(r"\\begin\{(gathered|gather\*?|multline\*?)\}"), r"\\begin{array}{c}"),
    (re.compile(r"\\end\{(gathered|gather\*?|multline\*?)\}"), r"\\end{array}"),
    (re.compile(r"\\(begin|end)\{equation\*?\}"), ""),
    # eqnarray: three columns, right, centre and left aligned (as LaTeX sets it).
    (re.compile(r"\\begin\{eqnarray\*?\}"), r"\\begin{array}{rcl}"),
    (re.compile(r"\\end\{eqnarray\*?\}"), r"\\end{array}"),
    # The one function name of LaTeX's own that the converter lacks ('\arg\min_\eta f' in optax's L-BFGS page).
    (re.compile(r"\\arg(?![A-Za-z])"), r"\\operatorname{arg}"),
]


def to_mathml(latex: str, *, block: bool) -> str:
    """Safe MathML for ``latex``; MathError for malformed input or an unknown command."""
    prepared, hlines = _prepare(latex)
    try:
        tree = convert_to_element(prepared, display="block" if block else "inline")
    except Exception as error:  # the converter signals malformed input with assorted types
        raise MathError(f"{type(error).__name__}: {error}") from error
    _clean(tree)
    _apply_functions(tree)
    _draw_table_rules(tree, hlines)
    tree.attrib.pop("xmlns", None)  # HTML puts <math> in the MathML namespace by itself
    return ET.tostring(tree, encoding="unicode", short_empty_elements=True)


def _prepare(latex: str) -> tuple[str, list[tuple[set[int], bool] | None]]:
    """The LaTeX to convert, and for each table environment in order: its \\hline rules, if an array."""
    depth = 0
    for character in re.sub(r"\\[{}]", "", latex):
        depth += {"{": 1, "}": -1}.get(character, 0)
        if depth < 0:
            break
    if depth != 0:
        raise MathError("unbalanced braces: every '{' needs its '}'")
    text = _CONTROL_SPACE.sub(r"\\ ", latex)
    for pattern, replacement in _ALIASES:
        text = pattern.sub(replacement, text)
    for environment in _ENVIRONMENT.findall(text):
        if environment not in _KNOWN_ENVIRONMENTS:
            raise MathError(f'Environment "{environment}" not supported!')
    hlines: list[tuple[set[int], bool] | None] = []
    pieces, position = [], 0
    for match in _TABLE_ENVIRONMENTS.finditer(text):
        if match[1] != "array":
            hlines.append(None)
            continue
        end = text.find(r"\end{array}", match.end())
        if end < 0:
            raise MathError(r"\begin{array} is never ended")
        body_start = _skip_argument(text, match.end())
        above, below, body = _take_hlines(text[body_start:end])
        hlines.append((above, below))
        pieces += [text[position:body_start], body]
        position = end
    return "".join(pieces) + text[position:], hlines


def _skip_argument(text: str, start: int) -> int:
    """The index after the {column spec} that follows \\begin{array}."""
    if opening := _ARGUMENT.match(text, start):
        depth = 0
        for index in range(opening.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                return index + 1
    return start


def _take_hlines(body: str) -> tuple[set[int], bool, str]:
    """Rows (0-based) with a rule above them, whether the last row has one below, and the body without them."""
    rows = re.split(r"(?<!\\)\\\\", body)
    above: set[int] = set()
    kept = []
    for index, row in enumerate(rows):
        rules = _HLINES.match(row)
        if rules[1]:
            above.add(index)
        kept.append(row[rules.end() :])
    below = False
    if len(kept) > 1 and not kept[-1].strip():  # a final '\\ \hline': a rule under the last row
        below = (len(rows) - 1) in above
        above.discard(len(rows) - 1)
        kept.pop()
    return above, below, "\\\\".join(kept)


def _clean(element: ET.Element) -> None:
    """MathML Core only, text unescaped once (the converter stores entities), unknown commands refused."""
    element.tag = element.tag.split("}")[-1]
    for name in list(element.attrib):
        if name not in ATTRIBUTES and name not in TABLE_ATTRIBUTES and name != "xmlns":
            del element.attrib[name]
    if element.text:
        element.text = html.unescape(element.text)
        command = _UNKNOWN_COMMAND.match(element.text.strip())
        if command and element.tag in ("mi", "mo", "mn"):
            raise MathError(f'Unknown LaTeX command "\\{command[1]}".')
    if element.tail:
        element.tail = html.unescape(element.tail)
    for child in list(element):
        if child.tag.split("}")[-1] in ELEMENTS:
            _clean(child)
        else:
            element.remove(child)  # never emitted by the converter; dropped, not trusted


#: U+2061 FUNCTION APPLICATION: invisible, it tells a reader that the name before it applies to what follows.
FUNCTION_APPLICATION = "\u2061"
#: TeX's thin space, which it puts between a function name (\mathop) and an ordinary symbol on either side.
THIN_SPACE = "0.1667em"
#: Elements whose children are a row (MathML's inferred mrow): spacing and U+2061 can go between them.
_ROWS = {"math", "mrow", "mtd", "msqrt", "mstyle", "mpadded", "mphantom", "menclose", "merror"}
#: Elements with a base and scripts: ``\tanh^2`` is a function name with a script, applied as one.
_SCRIPTED = {"msub", "msup", "msubsup", "munder", "mover", "munderover"}
_OPENING = set("([{\u27e8\u2308\u230a")
_CLOSING = set(")]}\u27e9\u2309\u230b")


def _is_function_name(element: ET.Element) -> bool:
    """``\\sin`` (an <mi> of several letters) or ``\\operatorname{diag}``, ``\\max`` (an <mo> of letters).

    ``\\bmod`` is a binary operator, not a function, and keeps its operator spacing.
    """
    text = (element.text or "").strip()
    return element.tag in ("mi", "mo") and len(text) > 1 and text.isalpha() and text != "mod" and not len(element)


def _starts_with_opening(element: ET.Element) -> bool:
    while element.tag in _ROWS and len(element):
        element = element[0]
    return element.tag == "mo" and (element.text or "").strip() in _OPENING


def _is_operator(element: ET.Element) -> bool:
    """An <mo> that spaces itself (``+``, ``=``, ``,``) or opens a group: no thin space beside a function."""
    return element.tag == "mo" and (element.text or "").strip() not in _CLOSING


def _apply_functions(tree: ET.Element) -> None:
    """Mark each function name's application with U+2061 and space it as TeX spaces ``\\mathop``."""
    for element in list(tree.iter()):
        if element.tag == "mo" and _is_function_name(element):
            # An operator name the browser's dictionary does not know gets wide spaces on both sides;
            # as an identifier it is set upright like \sin, and spaced below.
            element.tag = "mi"
            element.attrib.clear()
    for row in [element for element in tree.iter() if element.tag in _ROWS]:
        children = list(row)
        names = [child[0] if child.tag in _SCRIPTED and len(child) else child for child in children]
        for index, child in enumerate(children):
            if not _is_function_name(names[index]):
                continue
            following = children[index + 1] if index + 1 < len(children) else None
            position = list(row).index(child)
            # Applied to what follows, unless nothing does or an operator does (``\tanh`` alone, ``\log +``).
            if following is not None and (_starts_with_opening(following) or not _is_operator(following)):
                space = "0" if _starts_with_opening(following) else THIN_SPACE
                apply = ET.Element("mo", {"lspace": "0", "rspace": space})
                apply.text = FUNCTION_APPLICATION
                row.insert(position + 1, apply)
            previous = children[index - 1] if index > 0 else None
            # After another function name ('\arg\min'), its application's space is the one TeX puts there.
            if previous is not None and not _is_operator(previous) and not _is_function_name(names[index - 1]):
                row.insert(position, ET.Element("mspace", {"width": THIN_SPACE}))


#: Chromium lays out an mtd's content as one row and ignores text-align there; justify-items places it.
_ALIGN_MARGIN = {"left": "justify-items: start", "right": "justify-items: end"}


def _style(element: ET.Element, declaration: str) -> None:
    existing = element.get("style", "")
    element.set("style", f"{existing}; {declaration}" if existing else declaration)


def _draw_table_rules(tree: ET.Element, hlines: list[tuple[set[int], bool] | None]) -> None:
    """Column alignment, column rules and \\hline rules as CSS, which MathML Core honours."""
    tables = list(tree.iter("mtable"))
    rules = hlines if len(hlines) == len(tables) else [None] * len(tables)
    for table, rule in zip(tables, rules, strict=True):
        rows = [row for row in table if row.tag == "mtr"]
        aligns = table.get("columnalign", "").split()
        lines = table.get("columnlines", "").split()
        for row_index, row in enumerate(rows):
            for column, cell in enumerate(child for child in row if child.tag == "mtd"):
                align = cell.get("columnalign") or (aligns[min(column, len(aligns) - 1)] if aligns else None)
                if align in _ALIGN_MARGIN:  # centred is the default
                    _style(cell, _ALIGN_MARGIN[align])
                if column < len(lines) and lines[column] in ("solid", "dashed"):
                    _style(cell, f"border-right: {RULE}")
                if rule and row_index in rule[0]:
                    _style(cell, f"border-top: {RULE}")
                if rule and rule[1] and row_index == len(rows) - 1:
                    _style(cell, f"border-bottom: {RULE}")
    for element in tree.iter():  # the tables, their cells and anything else the converter gave them to
        for name in TABLE_ATTRIBUTES:
            element.attrib.pop(name, None)


def _render(self, node: nodes.Element, *, block: bool) -> str:
    latex = node.astext()
    try:
        return to_mathml(latex, block=block)
    except MathError as error:
        logger.warning(f"cannot render math {latex!r}: {error}", location=node, type="course", subtype="math")
        return f"<code>{self.encode(latex)}</code>"


def visit_math(self, node: nodes.math) -> None:
    self.body.append(_render(self, node, block=False))
    raise nodes.SkipNode


def visit_math_block(self, node: nodes.math_block) -> None:
    # The same frame Sphinx's own renderers write: an id to link to, and the number.
    self.body.append(self.starttag(node, "div", CLASS="math math-display notranslate"))
    if node.get("number"):
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({self.encode(str(number))})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(_render(self, node, block=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode
