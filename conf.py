"""Sphinx configuration: the site is this repository's docs/ and lessons/ folders."""

import os
import sys
from pathlib import Path

# The course extension lives beside the site's own pages.
sys.path.insert(0, str(Path(__file__).parent / "docs" / "_ext"))

project = "JAX transformations, executed"
author = "The course authors"
copyright = "2026, the course authors"

root_doc = "docs/index"
# `nox -s lesson -- ID` sets COURSE_LESSON to build the site's own pages and that lesson only.
include_patterns = [
    "docs/**",
    f"lessons/{os.environ['COURSE_LESSON']}.md" if os.environ.get("COURSE_LESSON") else "lessons/**",
]
exclude_patterns = ["lessons/_*", "docs/_*/**"]
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
nb_execution_raise_on_error = False  # jaxcourse reports failures with the lesson's line
nb_output_stderr = "warn"  # anything a lesson writes to stderr fails a -W build
nb_merge_streams = True
suppress_warnings = ["mystnb.exec"]  # replaced by jaxcourse's one located message

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

html_math_renderer = "mathml"  # from jaxcourse: equations need no script or network

html_theme = "furo"
html_title = "JAX transformations, executed"
html_static_path = []
html_last_updated_fmt = None
html_copy_source = True

# Copy buttons on code to run (cells and exercise scaffolds), never on outputs.
copybutton_selector = "div.highlight-ipython3 pre, div.highlight-python pre"
copybutton_exclude = ".linenos, .gp, .go"
