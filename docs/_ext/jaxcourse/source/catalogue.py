"""The lessons of a source tree, in course order: the one list every part of the project uses.

A lesson is ``<root>/lessons/<id>.md``, unless its name starts with ``_`` (the template).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from pathlib import Path

from . import frontmatter

LESSONS_DIR = "lessons"
#: Where a page pastes a value another page glued: a role's ``other.ipynb::key``, or a ``{glue}`` directive's
#: ``:doc: other.ipynb`` option (myst-nb's cross-document glue).
_PASTED_FROM = re.compile(r"\{glue(?::[a-z]+)?\}`(?P<role>[^`:]+)::|^\s*:doc:\s*(?P<option>\S+)\s*$", re.M)


@dataclasses.dataclass(frozen=True)
class Lesson:
    path: Path
    meta: dict  # the validated 'lesson:' mapping

    @property
    def id(self) -> str:
        return self.path.stem

    @property
    def sort_key(self) -> tuple:
        return (self.meta["phase"], self.meta["order"], self.id)


def lesson_files(root: Path, lessons_dir: str = LESSONS_DIR) -> list[Path]:
    """Every lesson file, valid or not, by name."""
    return sorted(path for path in Path(root, lessons_dir).glob("*.md") if not path.name.startswith("_"))


def lessons(root: Path, lessons_dir: str = LESSONS_DIR) -> list[Lesson]:
    """The valid lessons in course order; an invalid one is left out (its own build reports it)."""
    found = []
    for path in lesson_files(root, lessons_dir):
        front, problems = frontmatter.read_lesson(path)
        if front is not None and not problems:
            found.append(Lesson(path, dict(front.lesson)))
    return sorted(found, key=lambda lesson: lesson.sort_key)


def page_docname(root: Path, name: str, lessons_dir: str = LESSONS_DIR) -> str:
    """The docname of a page named by lesson id (transforms-04) or by its file (docs/pytrees.md, docs/x.ipynb).

    ValueError, naming the choices, for a name that is neither.
    """
    path = Path(root, name)
    if name.endswith((".md", ".ipynb")) and path.is_file() and not Path(name).stem.startswith("_"):
        return path.resolve().relative_to(Path(root).resolve()).with_suffix("").as_posix()
    return lesson_path(root, name, lessons_dir).relative_to(root).with_suffix("").as_posix()


def page_file(root: Path, docname: str) -> Path:
    """The source file of a page: ``<root>/<docname>.md``, or ``.ipynb``; ValueError if there is neither."""
    for suffix in (".md", ".ipynb"):
        path = Path(root, docname + suffix)
        if path.is_file():
            return path
    raise ValueError(f"no page {docname!r}: neither {docname}.md nor {docname}.ipynb in {root}")


def lesson_path(root: Path, name: str, lessons_dir: str = LESSONS_DIR) -> Path:
    """The file of a lesson named by id, ``lessons/ID.md`` or a path; ValueError naming the choices."""
    stem = Path(name).name.removesuffix(".md")
    path = Path(root, lessons_dir, f"{stem}.md")
    if path.is_file() and not stem.startswith("_"):
        return path
    choices = ", ".join(candidate.stem for candidate in lesson_files(root, lessons_dir))
    raise ValueError(
        f"no lesson {stem!r} in {lessons_dir}/ (a notebook page elsewhere is named by its file, "
        f"e.g. docs/page.md or docs/page.ipynb); the lessons are: {choices}"
    )


def pasted_from(root: Path, docname: str) -> list[str]:
    """The other pages whose glued values the page pastes, which a build of it alone must run too."""
    path = page_file(root, docname)
    if path.suffix == ".ipynb":
        import nbformat  # only a notebook needs it, and the catalogue is imported where only PyYAML is

        text = "\n".join(
            cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"
        )
    else:
        text = path.read_text(encoding="utf-8")
    found = []
    for match in _PASTED_FROM.finditer(text):
        other = posixpath.normpath(posixpath.join(posixpath.dirname(docname), match["role"] or match["option"]))
        other = other.removesuffix(".md").removesuffix(".ipynb")
        if other != docname and other not in found and _is_page(root, other):
            found.append(other)  # one that is not a page is the build's to report, at the role
    return found


def _is_page(root: Path, docname: str) -> bool:
    try:
        return bool(page_file(root, docname))
    except ValueError:
        return False
