"""A build of chosen pages (``nox -s lesson``, a shard): no search index, and a short page for each page left out.

``jaxcourse.tools.publishing`` names the chosen pages to sphinx-build, which then writes only them and the pages
whose table of contents lists them (the home page, for a lesson). Every other page is still read, as its title,
headings and labels (``jaxcourse.source.pagesource``), so references to it resolve; here, once the build is done,
each page that was not written gets a short page in its place, so a link to it in the preview says where the
page is rather than failing. Sphinx's search index would hold only the written pages, so there is none.
"""

from __future__ import annotations

import html
from pathlib import Path

from sphinx.application import Sphinx

from ..privateapi import build_no_search_index

#: What a left-out page says, after its title.
LEFT_OUT = "is not part of this build of chosen pages; <code>nox -s docs</code> builds the whole site."
SEARCH_LEFT_OUT = "Search is not part of this build of chosen pages; <code>nox -s docs</code> builds the whole site."


def is_partial(app: Sphinx) -> bool:
    return bool(app.config.course_only_pages)


def leave_out_search(app: Sphinx) -> None:
    """At builder-inited: a build of chosen pages writes no search index (it would be incomplete)."""
    if is_partial(app) and app.builder.format == "html":
        build_no_search_index(app.builder)


def placeholder(title: str, message: str, home: str) -> str:
    """A page, light or dark as the reader's system is, saying ``message`` and linking ``home`` (unless "")."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{html.escape(title)}</title></head>\n"
        f"<body><main><h1>{html.escape(title)}</h1><p>{message}</p>"
        + (f'<p><a href="{html.escape(home)}">Home</a></p>' if home else "")
        + "</main></body></html>\n"
    )


def write_placeholders(app: Sphinx, exception: Exception | None) -> None:
    """At build-finished: each page that a build of chosen pages did not write gets a short page in its place."""
    if exception is not None or not is_partial(app) or app.builder.format != "html":
        return
    builder, root = app.builder, app.config.root_doc
    pages = {docname: app.env.titles[docname].astext() for docname in app.env.found_docs}
    pages["search"] = "Search"
    for docname, title in sorted(pages.items()):
        target = Path(app.outdir, builder.get_target_uri(docname))
        if target.exists():
            continue
        message = SEARCH_LEFT_OUT if docname == "search" else f"“{html.escape(title)}” {LEFT_OUT}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(placeholder(title, message, builder.get_relative_uri(docname, root)), encoding="utf-8")
