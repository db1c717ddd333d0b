"""Sphinx configuration: the site is this repository's docs/ and lessons/ folders."""

from pathlib import Path

project = "JAX, executed"
author = "The course authors"
copyright = "2026, the course authors"

root_doc = "docs/index"
include_patterns = ["docs/**", "lessons/**"]
# Builds, environments and git hold no pages: excluded, Sphinx does not walk their ~100,000 files. Nor does
# an underscore folder (_static, or _admonition/ of snippets that Jupyter Book pages {include}).
exclude_patterns = ["lessons/_*", "docs/_*/**", "docs/**/_*/**", "_build", ".nox", ".git", "tests", ".github"]
templates_path = ["docs/_templates"]

extensions = [
    "myst_nb",
    "sphinx_exercise",
    "sphinx_togglebutton",
    "sphinx_copybutton",
    "jaxcourse",
]

# Lessons execute at build time, on the CPU (jaxcourse pins JAX_PLATFORMS in the kernel).
nb_execution_mode = "force"  # nox -s lesson / serve pass -D nb_execution_mode=cache
nb_execution_cache_path = str(Path(__file__).parent / "_build" / ".jupyter_cache")
nb_execution_timeout = 60  # seconds per cell; a lesson may set mystnb.execution_timeout
nb_execution_raise_on_error = False  # jaxcourse reports every failed notebook, located at its line
nb_execution_in_temp = True  # kernels run in a scratch folder: a relative open() cannot write into the checkout
# Shown; jaxcourse reports each cell that wrote to stderr once, at its line, quoting it: an error on a
# lesson (so deprecations are caught), a warning in the execution report on a page from elsewhere.
nb_output_stderr = "show"
# The course kernel sends a cell's output once, when the cell ends; merging would move text around
# displays, and myst-nb's merge takes time quadratic in a line's length.
nb_merge_streams = False
# Replaced by jaxcourse's one located message each: a failed run, a page in no toctree, a code cell that
# never runs (nested, swallowed, or on a page that is not a notebook). Heading levels are as each page's
# authors wrote them, as on the JAX docs; the lesson checker holds lessons to their anatomy.
suppress_warnings = ["mystnb.exec", "mystnb.nbcell", "toc.not_included", "myst.header"]

# As the JAX docs: $...$ and $$...$$. No amsmath: its environments, opened at a line start inside a
# multi-line $...$, swallow the prose and cells after them; inside $$ they render as usual.
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

html_math_renderer = "mathml"  # from jaxcourse: equations need no script or network
# sphinx-exercise turns numfig on, which numbers equations through the table of contents: a labelled equation
# on a page outside it (a ported page is an orphan) read "()". Numbered per page instead, as the JAX docs do.
math_numfig = False

# Each lesson links to its starter notebook in Colab, on this branch, which the Pages workflow
# fills from _build/notebooks; the downloaded notebooks link to the pages at html_baseurl.
course_notebooks_on_github = "jax-executed/jax-executed@notebooks"
html_baseurl = "https://jax-executed.github.io/jax-executed/"

html_theme = "furo"
html_title = "JAX, executed"
html_static_path = []
html_favicon = "docs/_static/favicon.svg"  # a page asks for no /favicon.ico, which would be a 404
html_last_updated_fmt = None
html_copy_source = True

# The visible word beside each collapse button; course.js names each button after what it opens
# ("Show hint 1: Practice", "Hide solution: Foundation"), so the word is part of its accessible name.
togglebutton_hint = "Show"
togglebutton_hint_hide = "Hide"

# Copy buttons on code to run (cells and exercise scaffolds), never on outputs.
copybutton_selector = "div.highlight-ipython3 pre, div.highlight-python pre"
copybutton_exclude = ".linenos, .gp, .go"
