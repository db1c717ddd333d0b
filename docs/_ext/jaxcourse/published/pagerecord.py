"""One executed page's record in the build: what the execution report, execution.json and the
change report read, typed (:class:`PageRecord`), and its entry of recordings.json."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..execution import changes, record


@dataclasses.dataclass
class PageRecord:
    """An executed page (a lesson or a notebook page under docs/) as this build read it."""

    docname: str
    #: the lesson id, or the docname of another page
    page_id: str
    title: str
    #: the lesson's 'lesson:' mapping (phase, order, minutes, ...); None for a page that is not a lesson
    lesson: dict | None
    #: the run stamp taken in the kernel (None if the run never started)
    stamp: dict | None
    #: seconds the cells ran, from myst-nb's execution data
    runtime: float | None
    succeeded: bool
    #: the exception type of the failure, if the page failed
    error: str | None
    #: this run's entry of recordings.json; None for a failed run
    recording: dict | None
    source: str  # the page's file, relative to the source folder
    #: stderr the page showed instead of failing on it ('execution: {stderr: show}'): [{"line", "stderr"}]
    warnings: list[dict] = dataclasses.field(default_factory=list)
    #: lines of the cells shown but not run (myst-nb's skip-execution tag)
    not_run: list[int] = dataclasses.field(default_factory=list)

    @property
    def is_lesson(self) -> bool:
        return self.lesson is not None

    @property
    def sort_key(self) -> tuple:
        """Lessons in course order (phase, order, id), then the other pages by name."""
        if self.lesson is not None:
            return (0, self.lesson["phase"], self.lesson["order"], self.page_id)
        return (1, 0, 0, self.page_id)


def recording(
    kernel: record.KernelRecord, shown: dict[int, list[tuple[str, str]]], figures_dir: Path, source: str
) -> dict:
    """This run's entry of recordings.json: what each cell showed, by line, and each figure's hash."""
    cells = [
        {
            "line": cell.line,
            "code": changes.digest(cell.source.encode()),
            "tags": cell.tags,
            "varies": changes.varying_patterns(cell.metadata, cell.tags),
            "shown": "".join(text for _, text in shown.get(cell.index, [])),
        }
        for cell in kernel.cells
    ]
    figures = {
        name: changes.digest((figures_dir / name).read_bytes())
        for name in (kernel.verdict or {}).get("figures", [])
        if (figures_dir / name).is_file()
    }
    return changes.page_recording(kernel.stamp, cells, figures, source)
