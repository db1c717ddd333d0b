"""Cross-document lesson data, kept in a Sphinx Domain so parallel reads merge."""

from __future__ import annotations

from sphinx.domains import Domain


class CourseDomain(Domain):
    """Holds, per lesson page, its front matter and this build's execution record."""

    name = "course"
    label = "JAX course"
    initial_data = {
        # docname -> {"meta": {...}, "stamp": {...} | None, "runtime": float | None,
        #             "fresh": bool, "succeeded": bool, "error": str | None}
        "lessons": {},
        # docnames of pages holding an execution report, re-read on every build
        "report_pages": [],
        # docname -> environment fingerprint the lesson was read (and executed) under
        "fingerprints": {},
    }

    @property
    def lessons(self) -> dict[str, dict]:
        return self.data["lessons"]

    @property
    def report_pages(self) -> list[str]:
        return self.data["report_pages"]

    def note_lesson(self, docname: str, record: dict) -> None:
        self.lessons[docname] = record

    def note_report_page(self, docname: str) -> None:
        if docname not in self.report_pages:
            self.report_pages.append(docname)

    @property
    def fingerprints(self) -> dict[str, str]:
        return self.data["fingerprints"]

    def clear_doc(self, docname: str) -> None:
        self.lessons.pop(docname, None)
        self.fingerprints.pop(docname, None)
        if docname in self.report_pages:
            self.report_pages.remove(docname)

    def merge_domaindata(self, docnames, otherdata: dict) -> None:
        for docname in docnames:
            if docname in otherdata["lessons"]:
                self.lessons[docname] = otherdata["lessons"][docname]
            if docname in otherdata["fingerprints"]:
                self.fingerprints[docname] = otherdata["fingerprints"][docname]
            if docname in otherdata["report_pages"]:
                self.note_report_page(docname)

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        return []
