"""Cross-document data, kept in a Sphinx Domain so parallel reads merge."""

from __future__ import annotations

from sphinx.domains import Domain

from .pagerecord import PageRecord

#: The data kept per page, by docname.
_PER_PAGE = ("pages", "fingerprints", "math_characters", "search_prose")


class CourseDomain(Domain):
    """Holds each executed page's record of this build, and what the site pages need to re-read."""

    name = "course"
    label = "JAX course"
    initial_data = {
        # docname -> PageRecord, for every executed page (lessons and notebook pages in docs/)
        "pages": {},
        # docnames of pages holding an execution or change report, re-read on every build
        "report_pages": [],
        # docname -> environment fingerprint the page was read (and executed) under
        "fingerprints": {},
        # docname -> the characters its formulas draw, for the site's math font
        "math_characters": {},
        # docname -> {"objectives": ..., "prose": ...}, what search results quote (jaxcourse.published.searchsummaries)
        "search_prose": {},
    }

    @property
    def pages(self) -> dict[str, PageRecord]:
        return self.data["pages"]

    @property
    def lessons(self) -> dict[str, PageRecord]:
        return {docname: page for docname, page in self.pages.items() if page.is_lesson}

    @property
    def report_pages(self) -> list[str]:
        return self.data["report_pages"]

    @property
    def fingerprints(self) -> dict[str, str]:
        return self.data["fingerprints"]

    @property
    def math_characters(self) -> dict[str, str]:
        return self.data["math_characters"]

    @property
    def search_prose(self) -> dict[str, dict[str, str]]:
        return self.data["search_prose"]

    def note_page(self, record: PageRecord) -> None:
        self.pages[record.docname] = record

    def note_report_page(self, docname: str) -> None:
        if docname not in self.report_pages:
            self.report_pages.append(docname)

    def clear_doc(self, docname: str) -> None:
        for key in _PER_PAGE:
            self.data[key].pop(docname, None)
        if docname in self.report_pages:
            self.report_pages.remove(docname)

    def merge_domaindata(self, docnames, otherdata: dict) -> None:
        for docname in docnames:
            for key in _PER_PAGE:
                if docname in otherdata[key]:
                    self.data[key][docname] = otherdata[key][docname]
            if docname in otherdata["report_pages"]:
                self.note_report_page(docname)

    def resolve_any_xref(self, env, fromdocname, builder, target, node, contnode):
        return []
