"""Small markup fixes that axe-core asks for, applied to each page's HTML before it is written.

Toctree captions get the ``aria-level`` that their ``role="heading"`` requires (in the page and in furo's
sidebar). Code blocks and outputs can scroll sideways, so keyboard users must be able to focus them
(``tabindex="0"``); so can the scrolling wrappers of display equations and tables, as a ``group`` named
"Equation" or by the table's caption. Sphinx offers no hook for either attribute, so the fix edits the HTML
that ``html-page-context`` documents (``body``, ``toc``) and, in one function, furo's sidebar.
"""

from __future__ import annotations

import html
import re

from sphinx.application import Sphinx

from ..privateapi import furo_sidebar_key

_CAPTION = re.compile(r'(<p class="caption" role="heading")(?![^>]*aria-level)')
_PRE = re.compile(r"<pre(?![^>]*tabindex)")
_WRAPPER = re.compile(r'<div class="(?P<kind>math|table)-wrapper(?P<rest>[^"]*)"(?![^>]*tabindex)')
_TABLE_CAPTION = re.compile(r"\s*<table[^>]*>\s*<caption[^>]*>(?P<caption>.*?)</caption>", re.S)
_TAG = re.compile(r"<[^>]+>")
DOCUMENTED_KEYS = ("body", "toc")


def on_html_page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    for key in (*DOCUMENTED_KEYS, furo_sidebar_key(context)):
        if key and isinstance(context.get(key), str):
            context[key] = _CAPTION.sub(r'\1 aria-level="2"', context[key])
    if isinstance(context.get("body"), str):
        context["body"] = label_scrolling_wrappers(_PRE.sub('<pre tabindex="0"', context["body"]))


def label_scrolling_wrappers(body: str) -> str:
    """Equations and tables that may scroll sideways: focusable, and named by what they hold."""

    def focusable(match: re.Match) -> str:
        name = "Equation"
        if match["kind"] == "table":
            caption = _TABLE_CAPTION.match(body, match.end() + 1)
            text = html.unescape(" ".join(_TAG.sub(" ", caption["caption"]).split())) if caption else ""
            name = html.escape(text.rstrip("¶#").strip() or "Table", quote=True)
        return f'{match[0]} tabindex="0" role="group" aria-label="{name}"'

    return _WRAPPER.sub(focusable, body)
