"""A page in no table of contents fails the build at its first line, with the two ways out; an orphan's exercises
still say what they are.

Sphinx's own warning ("document isn't included in any toctree", suppressed in conf.py) names no line and no
remedy. The same test runs at ``env-check-consistency``. Sphinx numbers figures, and so sphinx-exercise's
exercises, through the table of contents: on an orphan page (every ported page) an exercise had no number and
so an empty title bar.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx_exercise.nodes import exercise_enumerable_node

from ..source.located import report


def pages_outside_every_toctree(app: Sphinx, env) -> None:
    included = set().union(*env.included.values()) if env.included else set()
    for docname in sorted(env.all_docs):
        if docname in env.files_to_rebuild or docname == app.config.root_doc or docname in included:
            continue
        if "orphan" in env.metadata.get(docname, {}):
            continue
        report(
            docname,
            1,
            "this page is in no table of contents, so no reader can reach it from the site: list it in a toctree "
            "(docs/index.md holds the site's), or, if links from other pages are its only way in, put "
            "'orphan: true' in its front matter",
            subtype="toctree",
        )


def name_unnumbered_exercises(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """At doctree-resolved: an exercise Sphinx gave no number is titled 'Exercise', as an unnumbered one is."""
    numbers = app.env.toc_fignumbers.get(docname, {}).get("exercise", {})
    for node in doctree.findall(exercise_enumerable_node):
        title = node.next_node(nodes.title)
        if title is not None and not any(ident in numbers for ident in node["ids"]):
            # numfig_format's 'Exercise %s' without its number; a subtitle follows as ' (Evaluate it)'.
            title.insert(
                0, nodes.Text((app.config.numfig_format.get("exercise") or "Exercise %s").replace("%s", "").strip())
            )
