"""Render math to MathML at build time, so equations need no script and no network.

Registered as Sphinx's HTML math renderer ``mathml``; browsers draw MathML
Core natively, and the page carries no MathJax request to a CDN. The converter
is docutils' own ``tex2mathml``: it escapes text (``\\text{<b>}`` stays text)
and refuses a command it does not know, which fails the build at the formula.
"""

from __future__ import annotations

import re

from docutils import nodes
from docutils.utils.math import MathError
from docutils.utils.math.latex2mathml import tex2mathml
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

# Standard LaTeX the converter lacks, rewritten to commands it knows that draw the same.
_ALIASES = {
    "dots": r"\ldots",
    "iff": r"\Longleftrightarrow",
    # Delimiter sizes: MathML stretches delimiters itself.
    "big": "",
    "Big": "",
    "bigg": "",
    "Bigg": "",
}
_ALIAS = re.compile(r"\\(" + "|".join(sorted(_ALIASES, key=len, reverse=True)) + r")(?![A-Za-z])")


def to_mathml(latex: str, *, block: bool) -> str:
    """MathML for ``latex``; raises MathError for malformed input or an unknown command."""
    try:
        return tex2mathml(_ALIAS.sub(lambda match: _ALIASES[match[1]], latex), as_block=block)
    except MathError:
        raise
    except Exception as error:  # the converter signals some malformed input with other types
        raise MathError(f"{type(error).__name__}: {error}") from error


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
