"""Sphinx extension for the executable JAX course.

Its folders are the stages of the pipeline that turns a page file into a published page; a module
imports only from its own stage and the stages listed before it (``tests/unit/test_layout.py``):

- ``runtime``: the kernel side. The lesson API in ``runtime/__init__.py`` (``begin``,
  ``save_figure``, ``finish``), its ``charts``, the course kernel (``kernel``), its IPython
  extension (``ipython``), the kernel provisioner (``provisioner``) and colour contrast (``colours``).
- ``source``: what a page is, before anything runs. Front matter and settings (``frontmatter``,
  ``options``), block structure and cells (``lessonsource``, ``cellscan``), which pages execute
  (``pages``, ``pagesource``, ``catalogue``), myst-nb's reader with the hidden cells (``reader``,
  ``ipynbpages``), the cache's environment fingerprint, and one located message (``located``).
- ``output``: what a page shows, made safe. myst-nb's render plugin (``render``), sanitizers
  (``sanitize``, ``safesvg``), math (``mathml``, ``mathfont``), prose and link checks (``rawhtml``,
  ``apilinks``, ``inlinelines``, ``toctree``) and the last checks of written pages (``publishcheck``,
  ``accessibility``, ``pagestyles``).
- ``execution``: running a page and reading what its kernel recorded (``parser``, ``record``),
  every failure located (``failures``), what changed since the last site (``changes``), and
  pages balanced over processes (``scheduling``, ``progress``).
- ``published``: the published page (``executedpage``, ``header``, ``figures``, ``transcript``,
  ``downloads``) and the site's own pages and data (``report``, ``changepage``, ``compatpage``,
  ``searchsummaries``, ``directives``, ``domain``, ``pagerecord``, ``placeholders``, ``stamps``).
- ``tools``: command-line tools. The checker, ``newlesson``, ``port``, the site build
  (``sitebuild`` on ``publishing``), its ``shards``, ``compat``, and the workflows' reports
  (``prcomment``, ``linkreport``).

``extension`` is Sphinx's ``setup``: it wires the stages to Sphinx's events. ``privateapi`` holds
every private detail of Sphinx, myst-nb, furo and ipykernel that any stage relies on, each with
its test (``tests/unit/test_privateapi.py``).
"""

from __future__ import annotations

__version__ = "0.2.0"


def setup(app):
    """Sphinx's entry point. Imported lazily: the kernel imports this package too, and must stay fast.

    The version is added here, so that ``extension`` never imports its own package back.
    """
    from .extension import setup as setup_extension

    return {**setup_extension(app), "version": __version__}
