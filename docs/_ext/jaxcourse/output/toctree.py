"""A page in no table of contents fails the build at its first line, with the two ways out.

Sphinx's own warning ("document isn't included in any toctree", suppressed in conf.py) names no line and no
remedy. The same test runs at ``env-check-consistency``.
"""

from __future__ import annotations

from sphinx.application import Sphinx

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
