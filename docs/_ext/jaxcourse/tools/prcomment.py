"""The change report as a pull-request comment: ``python -m jaxcourse.tools.prcomment CHANGES.json OUT.md``.

The pull-request workflow posts the comment, or updates it in place (found again by :data:`MARKER`): the pages
added and removed, then each changed page's figures and output diffs. A report longer than GitHub allows is cut
at a whole diff, saying how many changes it leaves out and where the full report is (``--full-report URL``).
"""

from __future__ import annotations

import json
import re
import sys

from . import plural, report_arguments

COMMAND_LINE = {
    "changes": "changes.json, beside the built site",
    "out": "where to write the comment's markdown",
    "--full-report": "URL of the full report (the workflow run, with its artifact)",
}

#: An HTML comment at the top: how the workflow finds its earlier comment to update.
MARKER = "<!-- jax-executed: change report -->"
#: GitHub's limit on an issue or pull-request comment body, in characters.
GITHUB_COMMENT_LIMIT = 65_536
#: Room kept for the closing note that says what was cut.
CLOSING_ROOM = 600


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``, so that a diff cannot close it."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _escape(text: str) -> str:
    """Page names and summaries are from the build: keep them from becoming markdown or HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def sections(report: dict) -> tuple[list[str], list[str]]:
    """The comment's head (always shown) and its changes (each a block that may be cut)."""
    pages = report["pages"]
    head = [MARKER, "## What this pull request changes on the site", "", _escape(report["summary"]), ""]
    if report.get("compared_with") is None:
        head += ["There is no published site to compare with yet: every page is new.", ""]
    for status, heading in (("added", "New pages"), ("removed", "Removed pages")):
        if names := [f"`{_escape(name)}`" for name, page in pages.items() if page["status"] == status]:
            head += [f"**{heading}:** {', '.join(names)}", ""]
    blocks: list[str] = []
    for name, page in pages.items():
        if page["status"] != "changed":
            continue
        own = []
        if page["figures"]:
            listed = ", ".join(f"`{_escape(figure)}`" for figure in page["figures"])
            own.append(f"Changed figure files: {listed}\n")
        for change in page["outputs"]:
            where = f"line {change['line']}" if change["line"] else f"line {change['old_line']} (cell removed)"
            fence = _fence(change["diff"])
            own.append(f"Output at {where}:\n\n{fence}diff\n{change['diff']}\n{fence}\n")
        if page["stamp"] and not own:
            moved = ", ".join(f"{field} {new} (was {old})" for field, (old, new) in page["stamp"].items())
            own.append(f"Ran under {_escape(moved)}\n")
        if own:  # the page's title heads its first block
            own[0] = f"### `{_escape(name)}` ({_escape(page['source'])})\n\n{own[0]}"
        blocks += own
    return head, blocks


def render(report: dict, full_report: str | None = None, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """The comment's markdown, at most ``limit`` characters."""
    head, blocks = sections(report)
    text = "\n".join(head)
    kept = 0
    for block in blocks:
        if len(text) + len(block) + 1 > limit - CLOSING_ROOM:
            break
        text += "\n" + block
        kept += 1
    if kept < len(blocks):
        left = plural(len(blocks) - kept, "more change")
        where = f"[the full report]({full_report})" if full_report else "the full report (changes.json in the artifact)"
        text += f"\n---\n**Cut short:** {left} would not fit in one comment; see {where}.\n"
    elif full_report:
        text += f"\n---\nThe built site and changes.json: [this run's artifact]({full_report}).\n"
    if len(text) > limit:  # a head alone longer than the limit (thousands of new pages): cut it too
        text = text[: limit - CLOSING_ROOM] + f"\n\n**Cut short**; see {full_report or 'the full report'}.\n"
    return text


def main(argv: list[str]) -> int:
    arguments = report_arguments("prcomment", __doc__, argv, COMMAND_LINE)
    report = json.loads(arguments.changes.read_text(encoding="utf-8"))
    arguments.out.write_text(render(report, arguments.full_report), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
