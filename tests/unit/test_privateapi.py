"""Each private detail the engine relies on (jaxcourse.privateapi), checked against the pinned libraries.

``nox -s upstream`` runs these against the newest Sphinx, myst-nb, myst-parser and furo: when one of
them moves a detail, the test named after it fails, before an upgrade of the pins does.
"""

from __future__ import annotations

import inspect
import pickle
import subprocess
import sys
import types

import nbformat
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser as RstParser
from docutils.utils import new_document
from jaxcourse import privateapi


def test_the_executed_notebook_is_myst_nbs_notebook_client_notebook():
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.execute.base import NotebookClientBase
    from myst_nb.core.render import MditRenderMixin

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    client = NotebookClientBase(notebook, None, NbParserConfig(), logger=None)

    class Renderer(MditRenderMixin):
        """What myst-nb's Sphinx renderer is made of: the mixin, and markdown-it's options."""

        def __init__(self, options: dict):
            self.md_options = options

    assert privateapi.executed_notebook(Renderer({"nb_client": client})) is notebook


def test_execution_data_is_what_myst_nb_recorded_for_the_page():
    from myst_nb.sphinx_ import NbMetadataCollector

    env = types.SimpleNamespace()
    assert privateapi.execution_data(env, "lessons/a") == {}
    result = {"mtime": 1.0, "runtime": 2.5, "method": "cache", "succeeded": True, "error": None, "traceback": None}
    NbMetadataCollector.set_exec_data(env, "lessons/a", result)
    assert privateapi.execution_data(env, "lessons/a")["runtime"] == 2.5


def test_a_stopped_parse_leaves_a_document_that_pickles():
    import myst_nb.docutils_

    # myst-nb's own parse stores the renderer there and takes it off only at the end.
    source = inspect.getsource(myst_nb.docutils_)
    assert 'document.attributes["nb_renderer"] = nb_renderer' in source
    document = new_document("page.md", get_default_settings(RstParser))
    document.attributes["nb_renderer"] = lambda: None  # unpicklable, as myst-nb's renderer is
    privateapi.forget_the_stopped_parse(document)
    pickle.dumps(document.attributes)


def test_myst_nbs_parser_is_myst_parsers_with_the_same_parse_signature():
    from myst_nb.sphinx_ import Parser
    from myst_parser.parsers.sphinx_ import MystParser

    assert issubclass(Parser, MystParser)
    assert list(inspect.signature(MystParser.parse).parameters) == ["self", "inputstring", "document"]


def test_sphinx_reads_contiguous_chunks_made_by_make_chunks():
    from sphinx.builders import Builder

    assert "make_chunks(docnames, nproc)" in inspect.getsource(Builder._read_parallel)
    docnames = [f"page{index:02}" for index in range(23)]
    chunks = privateapi.sphinx_read_chunks(docnames, 2)
    assert [name for chunk in chunks for name in chunk] == docnames
    assert len(chunks) > 2  # more chunks than processes: later chunks start as processes free up


def test_an_html_builder_without_search_writes_no_index_and_no_search_page():
    from sphinx.builders.html import StandaloneHTMLBuilder

    assert StandaloneHTMLBuilder.search is True
    assert "if self.search:" in inspect.getsource(StandaloneHTMLBuilder.prepare_writing)
    assert "if name == 'search' and self.search:" in inspect.getsource(StandaloneHTMLBuilder)
    builder = types.SimpleNamespace(search=True)
    privateapi.build_no_search_index(builder)
    assert builder.search is False


def test_sphinxs_unlocated_unknown_domain_warning_is_dropped_and_others_are_kept():
    import logging

    import sphinx.util.docutils

    assert "logger.warning(__('unknown directive name: %s'), directive_name)" in inspect.getsource(sphinx.util.docutils)
    assert sphinx.util.docutils.logger.logger.name == "sphinx.sphinx.util.docutils"
    privateapi.drop_unlocated_unknown_domain_warning()
    privateapi.drop_unlocated_unknown_domain_warning()  # a second application adds no second filter
    (dropping,) = logging.getLogger("sphinx.sphinx.util.docutils").filters
    record = logging.LogRecord(
        "sphinx.sphinx.util.docutils", logging.WARNING, "", 0, "unknown directive name: %s", ("prf:x",), None
    )
    assert not dropping(record)
    record.msg = "another warning: %s"
    assert dropping(record)


def test_furo_renders_its_sidebar_into_the_named_context_key():
    import furo

    assert f'context["{privateapi.FURO_SIDEBAR_KEY}"] =' in inspect.getsource(furo)
    assert privateapi.furo_sidebar_key({privateapi.FURO_SIDEBAR_KEY: "<nav></nav>"}) == privateapi.FURO_SIDEBAR_KEY
    assert privateapi.furo_sidebar_key({"body": "<p></p>"}) is None


def test_ipykernels_streams_flush_after_a_delay_that_can_be_changed():
    from ipykernel.iostream import OutStream

    assert isinstance(OutStream.flush_interval, float)
    stream = types.SimpleNamespace(flush_interval=OutStream.flush_interval)
    assert privateapi.delay_timed_flushes(stream, 3600.0) and stream.flush_interval == 3600.0
    assert not privateapi.delay_timed_flushes(types.SimpleNamespace(), 3600.0)  # a plain IPython's stream


def test_os_exit_runs_what_was_asked_first_and_keeps_its_status():
    code = (
        "import os, jaxcourse.privateapi as p\n"
        "p.run_before_os_exit(lambda: print('before', flush=True))\n"
        "os._exit(7)\n"
        "print('never')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (7, "before\n")


def test_the_kernel_side_loads_no_sphinx():
    """The kernel imports this module through its IPython extension; Sphinx would slow every lesson's start."""
    code = (
        "import sys, jaxcourse.privateapi, jaxcourse.runtime.ipython\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'sphinx', 'myst_nb', 'docutils', 'furo'}))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_the_executed_notebook_file_is_where_myst_nb_writes_and_nb_download_reads_it(tmp_path):
    import myst_nb.sphinx_
    from myst_nb.core.config import NbParserConfig
    from myst_nb.ext.download import NbDownloadRole

    # myst-nb's parser writes the notebook under its output folder, by docname; its role reads it from there.
    assert 'ipynb_path = path[:-1] + [path[-1] + ".ipynb"]' in inspect.getsource(myst_nb.sphinx_.Parser.parse)
    assert "self.env.mystnb_config.output_folder" in inspect.getsource(NbDownloadRole.run)
    env = types.SimpleNamespace(mystnb_config=NbParserConfig(output_folder=str(tmp_path)))
    assert privateapi.executed_notebook_file(env, "docs/ported/guide") == tmp_path / "docs/ported/guide.ipynb"
