"""Search that ranks the lesson about a word first, with snippets of its prose, from one small file.

Sphinx's search page downloads every matching page to cut a snippet around the first match (a search for
``jit`` fetched 24 pages, 3.3 MB, and quoted the run stamp), and weighs a word in any heading as much as one in
the title. Here each page's prose (its objectives, "What you will be able to do", and the paragraphs that
follow, without header, stamp, code, outputs or anything collapsed) is kept in the course domain while pages
are read, and written at the end to ``_static/course-search.js`` with the script that shows it, which only
the search page loads. Sphinx's summary download is turned off (``html_show_search_summary``), and its scorer
hook (``html_search_scorer``) adds weight to a page whose title, then whose objectives, hold a query's word.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

#: The two scripts, kept out of static/ so that neither is published on its own.
SCRIPTS = Path(__file__).parent / "search_scripts"
SCORER = SCRIPTS / "search-scorer.js"
SNIPPETS = SCRIPTS / "search-snippets.js"
#: The file the search page loads, under the site's _static/.
DATA_FILE = "course-search.js"
#: The section whose list states a lesson's objectives.
OBJECTIVES = "What you will be able to do"
#: Characters of prose kept per page: enough for a snippet around a word of the opening sections.
PROSE_LIMIT = 1200
#: Parts of a page whose text is not prose a snippet should quote.
_SKIPPED_CLASSES = {"lesson-header", "recorded-run", "cell", "dropdown", "start-here", "toctree-wrapper"}
_SKIPPED_NODES = (nodes.literal_block, nodes.table, nodes.figure, nodes.math_block, nodes.comment)
_LATEX_COMMAND = re.compile(r"\\([A-Za-z]+)")


def configure(app: Sphinx, config) -> None:
    """Sphinx's scorer hook gets the course's scorer; Sphinx's page-downloading summaries are off."""
    if not config.html_search_scorer:
        config.html_search_scorer = str(SCORER)
    config.html_show_search_summary = False


def _skipped(node: nodes.Node) -> bool:
    return any(
        isinstance(each, _SKIPPED_NODES)
        or (isinstance(each, nodes.Element) and _SKIPPED_CLASSES & set(each.get("classes", [])))
        for each in (node, *_ancestors(node))
    )


def _text(paragraph: nodes.Element) -> str:
    """A paragraph as plain text; a formula's LaTeX without its commands' backslashes or braces."""
    parts = []
    for node in paragraph.findall(nodes.Text):
        math = next((ancestor for ancestor in _ancestors(node) if isinstance(ancestor, nodes.math)), None)
        if math is None:
            parts.append(str(node))
        elif node is next(iter(math.findall(nodes.Text)), None):
            parts.append(_LATEX_COMMAND.sub(r"\1", math.astext()).replace("{", "").replace("}", ""))
    return " ".join("".join(parts).split())


def _ancestors(node: nodes.Node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def page_prose(doctree: nodes.document) -> dict[str, str]:
    """``{"objectives": ..., "prose": ...}``: what a search snippet may quote from this page."""
    objectives, where = "", None
    for section in doctree.findall(nodes.section):
        title = section.next_node(nodes.title)
        if title is not None and title.astext().strip() == OBJECTIVES:
            items = [_text(item) for item in section.findall(nodes.list_item)]
            objectives = " ".join(item if item.endswith(".") else item + "." for item in items if item)
            where = section
            break
    prose = []
    length = 0
    for paragraph in doctree.findall(nodes.paragraph):
        if length >= PROSE_LIMIT or _skipped(paragraph) or (where is not None and where in _ancestors(paragraph)):
            continue
        text = _text(paragraph)
        if text:
            prose.append(text)
            length += len(text) + 1
    text = " ".join(prose)
    if len(text) > PROSE_LIMIT:
        text = text[:PROSE_LIMIT].rsplit(" ", 1)[0]
    return {"objectives": objectives, "prose": text}


def collect(app: Sphinx, doctree: nodes.document) -> None:
    """At doctree-read, after the header is in place: keep this page's prose in the course domain."""
    app.env.get_domain("course").search_prose[app.env.docname] = page_prose(doctree)


def add_to_search_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if pagename == "search" and app.builder.search:
        app.add_js_file(DATA_FILE)


def write_data(app: Sphinx, exception) -> None:
    """``_static/course-search.js``: every page's prose, then the script that puts it under each result."""
    if exception is not None or app.builder.format != "html" or not getattr(app.builder, "search", False):
        return
    prose = app.env.get_domain("course").search_prose
    pages = {docname: prose[docname] for docname in sorted(prose) if docname in app.env.all_docs}
    data = json.dumps(pages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    target = Path(app.outdir, "_static", DATA_FILE)
    target.parent.mkdir(parents=True, exist_ok=True)
    script = SNIPPETS.read_text(encoding="utf-8")
    target.write_text(f"window.COURSE_SEARCH = {data};\n{script}", encoding="utf-8")
