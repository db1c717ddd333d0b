"""Small markup fixes that axe-core asks for, applied to each page before writing.

- Sphinx writes toctree captions as ``role="heading"`` without the
  ``aria-level`` that role requires; furo puts them in the sidebar.
- Code blocks and outputs can scroll sideways, so keyboard users must be able
  to focus them (``tabindex="0"``).
"""

from __future__ import annotations

import re

from sphinx.application import Sphinx

_CAPTION = re.compile(r'(<p class="caption" role="heading")(?![^>]*aria-level)')
_PRE = re.compile(r"<pre(?![^>]*tabindex)")


def on_html_page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    for key in ("body", "toc", "furo_navigation_tree"):
        if isinstance(context.get(key), str):
            context[key] = _CAPTION.sub(r'\1 aria-level="2"', context[key])
    if isinstance(context.get("body"), str):
        context["body"] = _PRE.sub('<pre tabindex="0"', context["body"])
