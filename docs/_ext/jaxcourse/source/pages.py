"""An executed page (a lesson or a notebook page under docs/), and the page this process is reading now.

A :class:`Page` is made at ``source-read`` and handed, through :func:`start_reading`, to the notebook reader,
which myst-nb calls with the page's text only. Sphinx reads one document at a time in each process, parallel
builds included, so one slot per process is enough.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from nbformat import NotebookNode

from . import frontmatter, lessonsource


@dataclasses.dataclass
class Page:
    """One executed page, as the build reads it."""

    docname: str
    path: Path
    page_id: str  # the lesson id for a lesson; the docname (docs/jit-compilation) for any other page
    lesson: bool
    front: frontmatter.FrontMatter
    settings: frontmatter.ExecutionSettings
    fingerprint: str  # environment fingerprint, put in the setup cell so the execution cache key holds it
    figures_dir: Path
    recorded_in: Path | None = None  # cache the run must come from, unexecuted (an assembly of shards); None: execute
    unrecorded: bool = False  # set by the reader when ``recorded_in`` holds no run of this page
    source: lessonsource.LessonSource | None = None  # parsed once by the reader, for the downloads and the cell pairing
    #: problems the reader found, reported with the page's other problems at doctree-read
    problems: list[frontmatter.Problem] = dataclasses.field(default_factory=list)
    notebook: NotebookNode | None = None  # the reader's, executed in place by myst-nb (read if its kernel dies)
    #: the exercise checks the reader found (exercisechecks.Check), proved by the run
    checks: list = dataclasses.field(default_factory=list)
    #: what the run wrote to stderr on a page that shows it: [{"line", "stderr"}], for the execution report
    warnings: list[dict] = dataclasses.field(default_factory=list)

    @property
    def title(self) -> str:
        if self.lesson:
            return self.front.lesson["title"]
        heading = next((h for h in (self.source.headings() if self.source else []) if h.level == 1), None)
        return heading.text if heading else self.page_id


@dataclasses.dataclass
class Reading:
    """The document this process is reading: its name, and its Page if it executes."""

    docname: str
    path: Path
    page: Page | None


_now: dict[str, Reading] = {}


def start_reading(reading: Reading) -> None:
    _now["reading"] = reading


def reading() -> Reading | None:
    return _now.get("reading")


def page_being_read(docname: str) -> Page | None:
    """The Page of ``docname`` if this process is reading it now and it executes."""
    current = reading()
    return current.page if current is not None and current.docname == docname else None


def page_id(docname: str, front: frontmatter.FrontMatter, lesson: bool) -> str:
    return str(front.lesson["id"]) if lesson else docname
