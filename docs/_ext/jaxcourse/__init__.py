"""Sphinx extension for the executable JAX course.

Each component lives in its own module:

- ``options``: the ``course_*`` settings, declared once and checked early;
- ``frontmatter``: page metadata and execution settings, shared with the lesson checker;
- ``lessonsource``: a page's blocks and their lines, from myst-parser's tokens;
- ``pages``, ``pagesource``: which pages execute, and the page being read (``source-read``);
- ``reader``: myst-nb's reader for ``.md`` pages, plus the hidden setup/verdict cells and cell lines;
- ``parser``: myst-nb's parser, with a dead kernel reported at its page and line;
- ``fingerprint``: the environment that keys the execution cache;
- ``kernel``, ``provisioner``, ``ipython``, ``runtime``: the kernel side (the
  course kernel spec, kernels on private sockets, the failing-line record and
  crash trail, the run stamp, the verdict, ``save_figure``);
- ``render``, ``sanitize``: the myst-nb render plugin (short errors, safe
  outputs, output limits, hidden kernel records, what each cell showed);
- ``record``: what the kernel recorded, read from the executed notebook;
- ``executedpage``: turns an executed page into the published page, with
  ``failures``, ``figures``, ``header``, ``transcript`` and ``pagerecord``;
- ``stamps``: the run stamp's wording and time;
- ``inlinelines``: references and math inside a paragraph report their own line;
- ``mathml``: equations rendered at build time, no MathJax;
- ``accessibility``: markup fixes axe-core asks for;
- ``downloads``: executed notebook, MyST source and starter notebook per lesson;
- ``checker``: the lesson checker (``python -m jaxcourse.checker``);
- ``newlesson``: a new lesson from the template (``nox -s new``);
- ``port``: pages written for another site brought into docs/ (``nox -s port``);
- ``changes``, ``changepage``: what changed since the earlier site (the change report);
- ``catalogue``: the lessons of a source tree, in course order;
- ``publishing``: the sphinx-build command, and publishing a site only on success;
- ``sitebuild``: the site build's command line (``nox -s docs``);
- ``scheduling``: executed pages balanced over parallel reading processes;
- ``progress``: a console line per executed page as it finishes;
- ``shards``: execution spread over machines, and the site assembled from their recordings;
- ``compat``, ``compatpage``: the course built under other JAX versions, and the verdicts on the site;
- ``prcomment``, ``linkreport``: the pull-request comment and the link check's issue, for the workflows;
- ``directives``, ``report``, ``domain``, ``nodes``: site pages and their data;
- ``extension``: Sphinx's ``setup``, wiring the events to these modules.
"""

from __future__ import annotations

__version__ = "0.2.0"


def setup(app):
    """Sphinx's entry point. Imported lazily: the kernel imports this package too, and must stay fast."""
    from .extension import setup as setup_extension

    return setup_extension(app)
