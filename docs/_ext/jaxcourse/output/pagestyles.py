"""What a page loads and how heavy its markup is.

myst-nb adds ``mystnb.<hash>.css`` (43 KB, most of it 256-colour ANSI classes) to every page, with no setting
to leave it out under Sphinx; the course's course.css styles the cells instead. The ``css_files`` list that
``html-page-context`` hands to the template is documented, the file name of an entry is not: that knowledge is
confined to :func:`stylesheet_name`, checked against Sphinx 9.0.4 by tests/test_units.py.
"""

from __future__ import annotations

import posixpath
import re

from sphinx.application import Sphinx

LEFT_OUT_PREFIXES = ("mystnb.",)
#: Pygments token classes that the site's two Pygments styles draw exactly as plain code text (names and
#: punctuation in the code's own colour, and whitespace): a span around them changes nothing on screen, and
#: they are most of a lesson's markup. tests/test_site.py checks this against the built pygments.css.
PLAIN_TOKEN_CLASSES = ("n", "p", "w")
#: Operators too are drawn in the code's own colour, giving up the light style's dark green for them: the
#: longest lessons would otherwise weigh more than the site's budget of 350 KB a page.
PLAIN_BY_CHOICE = ("o",)
_PLAIN_SPAN = re.compile(r'<span class="(?:' + "|".join(PLAIN_TOKEN_CLASSES + PLAIN_BY_CHOICE) + r')">([^<]*)</span>')
#: docutils wraps each word of an inline literal in its own span (course.css keeps words unhyphenated instead),
#: and Pygments opens each block with an empty one.
_WORD_SPAN = re.compile(r'<span class="pre">([^<]*)</span>')
_EMPTY_SPAN = "<span></span>"


def stylesheet_name(stylesheet) -> str:
    """The file name of an entry of the template's ``css_files`` (Sphinx 9: an object with ``filename``)."""
    return posixpath.basename(str(getattr(stylesheet, "filename", stylesheet)).split("?")[0])


def leave_out_mystnb_css(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if isinstance(context.get("css_files"), list):
        context["css_files"] = [
            stylesheet
            for stylesheet in context["css_files"]
            if not stylesheet_name(stylesheet).startswith(LEFT_OUT_PREFIXES)
        ]


def slim_code_markup(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Unwrap the spans of plain code tokens in the page body (html-page-context's documented ``body``)."""
    if isinstance(context.get("body"), str):
        body = _PLAIN_SPAN.sub(r"\1", context["body"])
        context["body"] = _WORD_SPAN.sub(r"\1", body).replace(_EMPTY_SPAN, "")
