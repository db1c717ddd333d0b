"""Sphinx extension for the executable JAX course.

Each component lives in its own module:

- ``options``: the ``course_*`` settings, declared once and checked early;
- ``frontmatter``: lesson metadata, shared with the lesson checker;
- ``lessonsource``: a lesson's blocks and their lines, from myst-parser's tokens;
- ``inject``: hidden setup/verdict cells added at ``source-read``, lines kept;
- ``kernel``, ``provisioner``, ``ipython``, ``runtime``: the kernel side (the
  course kernel spec, kernels on private sockets, the failing-line record, the
  run stamp, the verdict, ``save_figure``);
- ``render``: the myst-nb render plugin (short errors, hidden kernel records);
- ``record`` and ``lessonpage``: turn the executed notebook into the page;
- ``inlinelines``: references and math inside a paragraph report their own line;
- ``mathml``: equations rendered at build time, no MathJax;
- ``accessibility``: markup fixes axe-core asks for;
- ``downloads``: executed notebook, MyST source and starter notebook per lesson;
- ``checker``: the lesson checker (``python -m jaxcourse.checker``);
- ``newlesson``: a new lesson from the template (``nox -s new``);
- ``changes``, ``changepage``: what changed since the earlier site (the change report);
- ``catalogue``: the lessons of a source tree, in course order;
- ``sitebuild``: the sphinx-build command, and publishing a site only on success;
- ``directives``, ``report``, ``domain``, ``nodes``: site pages and their data;
- ``extension``: Sphinx's ``setup``, wiring the events to these modules.
"""

from __future__ import annotations

__version__ = "0.2.0"


def setup(app):
    """Sphinx's entry point. Imported lazily: the kernel imports this package too, and must stay fast."""
    from .extension import setup as setup_extension

    return setup_extension(app)
