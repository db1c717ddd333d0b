"""The extension's settings, each declared once, checked as soon as conf.py is read."""

from __future__ import annotations

import ast
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ConfigError

from .frontmatter import did_you_mean

PREFIX = "course_"

#: name -> (default, what a change rebuilds, type, help)
OPTIONS: dict[str, tuple[object, str, type, str]] = {
    "course_lessons_dir": (
        "lessons",
        "env",
        str,
        "Folder, relative to the source dir, holding one <id>.md per lesson.",
    ),
    "course_figures_dir": ("figures", "env", str, "Folder, relative to the source dir, where lessons write <id>.svg."),
    "course_runtime_hints": (
        "_build/html/execution.json",
        "env",
        str,
        "A previous build's execution.json; its run times balance executed pages over parallel processes.",
    ),
    "course_only_pages": (
        [],
        "env",
        list,
        "Docnames (lessons/transforms-04, docs/jit-compilation) to execute, alone: every other executed page "
        "keeps only its title, headings and labels, so that links to it resolve, and every page that is not "
        "written gets a short page in its place (nox -s lesson, nox -s execute; see jaxcourse.published.partialbuild).",
    ),
    "course_require_recorded": (
        False,
        "env",
        bool,
        "Execute nothing: take every executed page's run from the execution cache (nb_execution_cache_path), "
        "and fail a page that has none there (nox -s docs -- --from DIR).",
    ),
    "course_fresh_runs": (
        [],
        "env",
        list,
        "Runs that this build's shards made ('<page id>@<start time>', from nox -s execute): their pages "
        "count as executed by this build. nox -s docs -- --from DIR sets it.",
    ),
    "course_jax_api_url": (
        "https://docs.jax.dev/en/jax-v{version}/",
        "env",
        str,
        "Where {func}, {class}, {mod} and the other Python roles on a jax name link: the JAX API documentation of "
        "the JAX this build runs ({version}); module pages at <url><name>.html, the rest at "
        "<url>_autosummary/<name>.html. Resolved without network.",
    ),
    "course_progress": (
        False,
        "",
        bool,
        "Print one line per executed page as it finishes: k of n, its id, fresh or reused, its run time.",
    ),
    "course_compatibility": (
        "_build/compat.json",
        "env",
        str,
        "The verdicts of nox -s compat, relative to the source dir. When the file exists, the site gets "
        "the page docs/compatibility.md and each lesson's header lists the JAX versions it passed under.",
    ),
    "course_compare_to": (
        "",
        "env",
        str,
        "An earlier site folder (or its recordings.json) to compare this build's recordings with; "
        "nox -s docs sets it to the site being replaced. Empty: no comparison.",
    ),
    "course_notebooks_dir": (
        "_build/notebooks",
        "env",
        str,
        "Folder, relative to the source dir, where each lesson's starter notebook is also written "
        "(lessons/<id>.ipynb), for the Pages workflow to publish to the branch Colab opens. Empty: not written.",
    ),
    "course_notebooks_on_github": (
        "",
        "env",
        str,
        "'OWNER/REPO@BRANCH': the GitHub branch holding the published starter notebooks; each lesson "
        "links to its notebook there in Colab. Empty: no Colab links.",
    ),
    "course_environment_files": (
        ["requirements.txt"],
        "env",
        list,
        "Files whose content, with the installed packages, keys the execution cache.",
    ),
}


def register(app: Sphinx) -> None:
    for name, (default, rebuild, kind, description) in OPTIONS.items():
        app.add_config_value(name, default, rebuild, types=[kind], description=description)


def names_set_in(conf_py: Path) -> set[str]:
    """The names conf.py assigns at its top level (read from its source, not from Sphinx's internals)."""
    if not conf_py.is_file():
        return set()
    names = set()
    for statement in ast.parse(conf_py.read_text(encoding="utf-8")).body:
        targets = statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
        names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def check(app: Sphinx, config) -> None:
    """Fail early on a misspelt course_* setting or a lessons folder that is not there."""
    for name in sorted(names_set_in(Path(app.confdir, "conf.py"))):
        if name.startswith(PREFIX) and name not in OPTIONS:
            raise ConfigError(f"unknown setting {name!r} in conf.py{did_you_mean(name, OPTIONS)}")
    lessons = Path(app.srcdir, config.course_lessons_dir)
    if not lessons.is_dir():
        folders = [path.name for path in Path(app.srcdir).iterdir() if path.is_dir()]
        raise ConfigError(
            f"course_lessons_dir {config.course_lessons_dir!r} is not a folder of {app.srcdir}"
            f"{did_you_mean(config.course_lessons_dir, folders)}"
        )
