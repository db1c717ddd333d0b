"""What changed in this build's recordings (``recordings.json``) since an earlier site: the change report.

Per page: stamp changes, each cell output that changed as a unified diff located by line, changed figures, and
pages added or removed. Values a cell declares as varying (``:varies: <regex>``; the older ``varies`` tag masks
every number) compare as ``<varies>``, and a cell that differs only in them is counted, not diffed.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import hashlib
import itertools
import json
import re
from collections.abc import Collection
from pathlib import Path

RECORDINGS = "recordings.json"
#: The cell option holding a regular expression (or a list of them) for the values that vary.
VARIES_KEY = "varies"
#: The older tag: the whole cell varies; all of its numbers are masked.
VARIES_TAG = "varies"
NUMBER_PATTERN = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
MASK = "<varies>"
STAMP_FIELDS = ("jax", "jaxlib", "python", "backend", "device_kind", "device_count", "x64")
FORMAT = 2


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def varying_patterns(metadata: dict, tags: list[str]) -> list[str]:
    """The regular expressions of the values a cell declares as varying (its ``varies`` option)."""
    declared = metadata.get(VARIES_KEY)
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [str(pattern) for pattern in declared]
    return [NUMBER_PATTERN] if VARIES_TAG in tags else []


def pattern_problem(patterns: list[str], shown: str) -> str | None:
    """Why a cell's varies patterns are wrong for what it showed, or None."""
    for pattern in patterns:
        try:
            compiled = re.compile(pattern)
        except re.error as error:
            return f"the varies pattern {pattern!r} is not a regular expression: {error}"
        if not compiled.search(shown):
            return (
                f"the varies pattern {pattern!r} matches nothing this cell showed: "
                "every value it masks must be in the output, or the change report would diff the timing"
            )
    return None


def mask(text: str, patterns: list[str]) -> str:
    """``text`` with every match of the patterns replaced by <varies>."""
    for pattern in patterns:
        try:
            text = re.sub(pattern, MASK, text)
        except re.error:
            continue  # reported by the build at the cell's line
    return text


def page_recording(stamp: dict | None, cells: list[dict], figures: dict[str, str], source: str) -> dict:
    """One page's entry of recordings.json. ``cells``: {line, code, tags, varies, shown} per author's cell."""
    return {
        "source": source,
        "stamp": {field: (stamp or {}).get(field) for field in (*STAMP_FIELDS, "started")},
        "cells": cells,
        "figures": figures,
    }


def write_recordings(path: Path, pages: dict[str, dict]) -> None:
    path.write_text(json.dumps({"format": FORMAT, "pages": pages}, indent=1, sort_keys=True), encoding="utf-8")


def load_recordings(location: str | Path) -> dict[str, dict] | None:
    """The pages of an earlier site's recordings.json (a site folder or the file), or None if absent.

    Format 1 (before notebook pages outside lessons/ were recorded) held lessons only, without varies patterns;
    its cells tagged varies mask their numbers, as they did then.
    """
    path = Path(location)
    if path.is_dir():
        path = path / RECORDINGS
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") not in (1, FORMAT):
        return None
    return data["lessons"] if data["format"] == 1 else data["pages"]


@dataclasses.dataclass
class OutputChange:
    line: int | None  # the cell's line in this build's page (None: the cell is gone)
    old_line: int | None
    diff: str  # unified diff of what the cell showed, varying values masked


@dataclasses.dataclass
class PageChanges:
    page: str  # the lesson id, or the docname of another page
    source: str
    status: str  # "added", "removed", "changed" or "unchanged"
    stamp: dict[str, list] = dataclasses.field(default_factory=dict)  # field -> [old, new]
    outputs: list[OutputChange] = dataclasses.field(default_factory=list)
    figures: list[str] = dataclasses.field(default_factory=list)
    varying: int = 0  # outputs that changed only in their varying values: expected, counted only

    @property
    def lines(self) -> list[str]:
        return [str(change.line) if change.line else f"{change.old_line} (removed)" for change in self.outputs]


@dataclasses.dataclass
class ChangeReport:
    compared_with: str | None  # where the earlier recordings came from; None for a first build
    pages: list[PageChanges]

    @property
    def changed(self) -> list[PageChanges]:
        return [page for page in self.pages if page.status != "unchanged"]

    def to_json(self) -> dict:
        return {
            "compared_with": self.compared_with,
            "pages": {page.page: dataclasses.asdict(page) for page in self.pages},
            "summary": self.summary(),
        }

    def summary(self) -> str:
        """One line, e.g. '22 pages unchanged; transforms-01 changed 2 outputs (lines 88, 140)'.

        A stamp change that several pages share (a JAX upgrade moves them all) is stated once, with its count.
        """
        if self.compared_with is None:
            return "First build: there is no earlier site to compare its recordings with."
        shared = shared_stamp_changes(self.pages)
        parts = [f"{count} pages ran under {stamp_text(stamp)}" for stamp, count in shared.items()]
        described = {page.page: describe(page, omit=shared) for page in self.changed}
        unchanged = len(self.pages) - sum(1 for text in described.values() if text)
        what = "with unchanged outputs and figures" if shared else "unchanged"
        parts.append(f"{unchanged} page{'s' if unchanged != 1 else ''} {what}")
        parts.extend(f"{name} {text}" for name, text in described.items() if text)
        varying = sum(page.varying for page in self.pages)
        if varying:
            verb = "differ" if varying != 1 else "differs"
            parts.append(f"{varying} output{'s' if varying != 1 else ''} {verb} only in varying values, as expected")
        return "; ".join(parts)


StampChange = tuple[tuple[str, str, str], ...]  # (field, old, new) for each field that moved


def stamp_change(page: PageChanges) -> StampChange:
    return tuple((field, str(old), str(new)) for field, (old, new) in page.stamp.items())


def stamp_text(change: StampChange) -> str:
    return ", ".join(f"{field} {new} (was {old})" for field, old, new in change)


def shared_stamp_changes(pages: list[PageChanges]) -> dict[StampChange, int]:
    """Stamp changes that two or more pages have in common, with how many have each."""
    counts = collections.Counter(stamp_change(page) for page in pages if page.stamp)
    return {change: count for change, count in counts.items() if count > 1}


def describe(page: PageChanges, omit: Collection[StampChange] = ()) -> str:
    """What changed in one page; empty when all that changed is a stamp change in ``omit``."""
    if page.status in ("added", "removed"):
        return page.status
    parts = []
    if page.outputs:
        plural = "s" if len(page.outputs) != 1 else ""
        parts.append(f"changed {len(page.outputs)} output{plural} (line{plural} {', '.join(page.lines)})")
    if page.figures:
        named = figure_names(page.figures)
        parts.append(f"changed figure{'s' if len(named) != 1 else ''} {', '.join(named)}")
    moved = stamp_change(page)
    if moved and moved not in omit:
        parts.append("ran under " + stamp_text(moved))
    return " and ".join(parts)


def figure_names(files: list[str]) -> list[str]:
    """Changed figure files as a reader names them: a figure and its dark twin are one figure."""
    names = []
    for name in sorted(files):
        stem = name.removesuffix(".svg")
        if stem.endswith("-dark") and f"{stem.removesuffix('-dark')}.svg" in files:
            continue
        names.append(f"{name} (light and dark)" if f"{stem}-dark.svg" in files else name)
    return names


def _diff(old: str, new: str, source: str, old_line: int | None, line: int) -> str:
    return "\n".join(
        difflib.unified_diff(
            old.splitlines(),
            new.splitlines(),
            fromfile=f"earlier site: {source}:{old_line}" if old_line else "earlier site: (no such cell)",
            tofile=f"this build: {source}:{line}" if line else "this build: (cell removed)",
            lineterm="",
        )
    )


def _compare_cells(old_cells: list[dict], new_cells: list[dict], source: str, page: PageChanges) -> None:
    """Pair cells by their code (a cell whose code changed pairs with the one it replaced), then compare
    what each showed, with the values either declares as varying masked. A cell that is new compares with
    nothing; a removed one with nothing it shows now."""
    nothing = {"shown": "", "line": None, "tags": []}
    codes = difflib.SequenceMatcher(a=[c["code"] for c in old_cells], b=[c["code"] for c in new_cells], autojunk=False)
    for _, a1, a2, b1, b2 in codes.get_opcodes():
        for old, new in itertools.zip_longest(old_cells[a1:a2], new_cells[b1:b2], fillvalue=nothing):
            if old["shown"] == new["shown"]:
                continue
            patterns = _patterns(new) + [pattern for pattern in _patterns(old) if pattern not in _patterns(new)]
            before, after = mask(old["shown"], patterns), mask(new["shown"], patterns)
            if before == after:
                page.varying += 1
                continue
            diff = _diff(before, after, source, old["line"], new["line"])
            page.outputs.append(OutputChange(new["line"], old["line"], diff))


def _patterns(cell: dict) -> list[str]:
    if "varies" in cell:
        return list(cell["varies"])
    return varying_patterns({}, cell.get("tags", []))  # format 1: the tag alone


def compare(old: dict[str, dict] | None, new: dict[str, dict], compared_with: str | None) -> ChangeReport:
    if old is None:
        return ChangeReport(
            None, [PageChanges(page_id, entry["source"], "unchanged") for page_id, entry in sorted(new.items())]
        )
    pages = []
    for page_id in sorted(set(old) | set(new)):
        if page_id not in old or page_id not in new:
            status, entry = ("added", new[page_id]) if page_id not in old else ("removed", old[page_id])
            pages.append(PageChanges(page_id, entry["source"], status))
            continue
        before, after = old[page_id], new[page_id]
        page = PageChanges(page_id, after["source"], "unchanged")
        for field in STAMP_FIELDS:
            if before["stamp"].get(field) != after["stamp"].get(field):
                page.stamp[field] = [before["stamp"].get(field), after["stamp"].get(field)]
        _compare_cells(before["cells"], after["cells"], after["source"], page)
        page.figures = sorted(
            name
            for name in set(before["figures"]) | set(after["figures"])
            if before["figures"].get(name) != after["figures"].get(name)
        )
        if page.stamp or page.outputs or page.figures:
            page.status = "changed"
        pages.append(page)
    return ChangeReport(str(compared_with), pages)
