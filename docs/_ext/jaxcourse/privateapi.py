"""Every private detail of another library that the engine relies on, in one place.

Each function stands in for a public API that the library does not offer; its docstring says what
it reaches into, the version it was checked against, and the public API to move to when there is one.
``tests/unit/test_privateapi.py`` checks each against the pinned libraries, and the weekly upstream
check (``nox -s upstream``) runs it against the newest Sphinx, myst-nb, myst-parser and furo, so a
change upstream fails one named test here rather than a build somewhere else.

The libraries are imported inside the functions: the kernel imports this module too, and a kernel
never loads Sphinx. Nothing here imports the rest of the engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# --- myst-nb (1.4.0) and myst-parser (5.2.0) ----------------------------------------------------------


def executed_notebook(renderer: Any) -> Any:
    """The notebook myst-nb is rendering, with its outputs (just executed, or read from the cache).

    A render plugin (``NbElementRenderer``, myst-nb's documented ``nb_render_plugin`` hook) is handed
    one output at a time; the whole notebook is only on myst-nb's notebook client, which myst-nb keeps
    in its markdown-it options and exposes as ``renderer.nb_client`` (``MditRenderMixin``).
    Public instead: none; the plugin API's ``render_nb_finalise`` gets the metadata, not the cells.
    """
    return renderer.nb_client.notebook


def execution_data(env: Any, docname: str) -> dict:
    """myst-nb's execution result for a page (``succeeded``, ``runtime``, ``method``...), or {}.

    Read with ``NbMetadataCollector.get_exec_data``, an undocumented class method of myst-nb's Sphinx
    environment collector. Public instead: none (the execution table directive reads the same data).
    """
    from myst_nb.sphinx_ import NbMetadataCollector

    return NbMetadataCollector.get_exec_data(env, docname) or {}


def executed_notebook_file(env: Any, docname: str) -> Path:
    """Where myst-nb writes a page's executed notebook, the file its ``{nb-download}`` role offers readers.

    myst-nb's parser writes ``<output_folder>/<docname>.ipynb``, with ``output_folder`` on the config object it
    keeps on the Sphinx environment (``env.mystnb_config``, set at config-inited to ``<outdir>/../jupyter_execute``).
    Public instead: none; ``nb_output_folder`` is not a Sphinx setting.
    """
    *folders, name = docname.split("/")
    return Path(env.mystnb_config.output_folder, *folders, f"{name}.ipynb")


def forget_the_stopped_parse(document: Any) -> None:
    """Take myst-nb's renderer off a document whose parse stopped early (a kernel died).

    myst-nb stores it as ``document["nb_renderer"]`` while parsing and removes it only when parsing
    ends normally; left behind, it cannot be pickled, and Sphinx's parallel read fails.
    """
    document.attributes.pop("nb_renderer", None)


def parse_plain_myst(parser: Any, text: str, document: Any) -> None:
    """Parse ``text`` as plain MyST into ``document`` with myst-nb's parser: no notebook, no kernel.

    myst-nb's Sphinx parser subclasses myst-parser's; calling the base class's ``parse`` on it is
    the one way to reuse its configuration for a stand-in page. Public instead: none.
    """
    from myst_parser.parsers.sphinx_ import MystParser

    MystParser.parse(parser, text, document)


# --- Sphinx (9.0.4) ----------------------------------------------------------------------------------


def sphinx_read_chunks(docnames: list[str], nproc: int) -> list[list[str]]:
    """The groups of documents Sphinx reads in one process each, for this order of ``docnames``.

    Private behaviour (``Builder._read_parallel``): the list is cut into contiguous chunks by
    ``sphinx.util.parallel.make_chunks`` and each chunk is read by a fresh process, ``nproc`` of them
    at a time. Public instead: the ``env-before-read-docs`` event sets the order, not the chunks.
    """
    from sphinx.util.parallel import make_chunks

    return make_chunks(list(docnames), nproc)


def build_no_search_index(builder: Any) -> None:
    """Make Sphinx's HTML builder write no search index and no search page, for this build only.

    ``StandaloneHTMLBuilder.search`` is the class attribute its subclasses for help formats set to
    False. Public instead: none; with ``sphinx-build ... FILENAMES`` Sphinx keeps the index and warns
    that it will be incomplete, which ``-W`` makes an error.
    """
    builder.search = False


def drop_unlocated_unknown_domain_warning() -> None:
    """Keep Sphinx from saying, with no place, that a directive of a domain it lacks is unknown
    ('{prf:algorithm}', sphinx-proof's): myst-parser says the same at the directive's line.

    Private detail: the warning is logged untyped, as 'unknown directive name: %s', through the logger of
    ``sphinx.util.docutils`` (``sphinx.util.logging`` prefixes "sphinx."), so a filter on that logger drops
    it. Public instead: none; ``suppress_warnings`` reaches only typed warnings.
    """
    import logging

    # One filter function: logging adds a filter once, however many Sphinx applications a process sets up.
    logging.getLogger("sphinx.sphinx.util.docutils").addFilter(_not_an_unknown_domain_warning)


def _not_an_unknown_domain_warning(record: Any) -> bool:
    return not str(record.msg).startswith("unknown directive name:")


# --- furo (2025.12.19) -------------------------------------------------------------------------------

#: The page-context key furo's html-page-context handler (priority 500) renders the sidebar into.
FURO_SIDEBAR_KEY = "furo_navigation_tree"


def furo_sidebar_key(context: dict) -> str | None:
    """The context key holding furo's rendered sidebar navigation, if this theme has it.

    Public instead: none; furo's templates read this key, and the documented ``body`` and ``toc``
    do not hold the sidebar.
    """
    return FURO_SIDEBAR_KEY if isinstance(context.get(FURO_SIDEBAR_KEY), str) else None


# --- ipykernel (7.4.0), in the kernel ------------------------------------------------------------------

#: ipykernel's stream attribute: seconds between the first write and the message that sends it.
_FLUSH_INTERVAL = "flush_interval"


def delay_timed_flushes(stream: Any, seconds: float) -> bool:
    """Make ipykernel send a stream's buffered text only on ``flush()`` or after ``seconds``.

    ``OutStream.flush_interval`` (0.2 s) is a class attribute, not a configurable trait. False when
    ``stream`` is not ipykernel's (a plain IPython). Public instead: none.
    """
    if not hasattr(stream, _FLUSH_INTERVAL):
        return False
    setattr(stream, _FLUSH_INTERVAL, seconds)
    return True


# --- Python's os, in the kernel --------------------------------------------------------------------------


def run_before_os_exit(before: Any) -> None:
    """Call ``before()`` when the process ends by ``os._exit``, then exit with its status.

    ``os._exit`` runs no exit handler, so a kernel that a library ends with it would leave no trace; the
    function is replaced in the running process. Public instead: ``atexit``, which ``os._exit`` skips.
    """
    import os

    exit_now = os._exit

    def exit_after(status: int) -> None:
        before()
        exit_now(status)

    os._exit = exit_after
