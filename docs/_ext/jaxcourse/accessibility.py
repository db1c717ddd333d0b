"""Small markup fixes that axe-core asks for, applied to each page's HTML before it is written.

- Sphinx writes toctree captions as ``role="heading"`` without the
  ``aria-level`` that role requires; they appear in the page and in furo's
  sidebar.
- Code blocks and outputs can scroll sideways, so keyboard users must be able
  to focus them (``tabindex="0"``).

Sphinx offers no hook for either attribute, so the fix edits the rendered HTML
that ``html-page-context`` documents (``body``, ``toc``) and, in one function,
the sidebar that furo renders into its own context key.
"""

from __future__ import annotations

import re

from sphinx.application import Sphinx

_CAPTION = re.compile(r'(<p class="caption" role="heading")(?![^>]*aria-level)')
_PRE = re.compile(r"<pre(?![^>]*tabindex)")
DOCUMENTED_KEYS = ("body", "toc")


def furo_sidebar_key(context: dict) -> str | None:
    """The context key holding furo's rendered sidebar navigation, if this theme has it.

    Private to furo, checked against furo 2025.12.19: its html-page-context handler
    (priority 500) renders the navigation tree into ``furo_navigation_tree``.
    tests/test_site.py checks the sidebar's captions, so a change here fails loudly.
    """
    key = "furo_navigation_tree"
    return key if isinstance(context.get(key), str) else None


def on_html_page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    keys = [key for key in DOCUMENTED_KEYS if isinstance(context.get(key), str)]
    sidebar = furo_sidebar_key(context)
    for key in [*keys, *([sidebar] if sidebar else [])]:
        context[key] = _CAPTION.sub(r'\1 aria-level="2"', context[key])
    if isinstance(context.get("body"), str):
        context["body"] = _PRE.sub('<pre tabindex="0"', context["body"])
