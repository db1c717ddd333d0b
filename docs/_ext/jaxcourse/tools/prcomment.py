"""The change report as a pull-request comment: ``python -m jaxcourse.tools.prcomment CHANGES.json OUT.md``.

The pull-request workflow builds the site with ``--compare-to`` the published
recordings and turns the resulting ``changes.json`` into one comment, which it
posts or updates in place (found again by :data:`MARKER`). The comment lists the
pages added and removed, then each changed page: its changed figures, and each
changed output's diff at its line. GitHub refuses a comment over 65,536
characters: a longer report is cut at a whole diff, and says how many changes
it leaves out and where the full report is (``--full-report URL``: the run's
page, whose artifact holds the built site and changes.json).
"""

from __future__ import annotations

import json
import sys

from . import report_arguments

# The command line: each argument and its help, in order.
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
    ticks, run = 3, 0
    for character in text:
        run = run + 1 if character == "`" else 0
        ticks = max(ticks, run + 1)
    return "`" * ticks


def _escape(text: str) -> str:
    """Page names and summaries are from the build: keep them from becoming markdown or HTML."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def sections(report: dict) -> tuple[list[str], list[str]]:
    """The comment's head (always shown) and its changes (each a block that may be cut)."""
    pages = report["pages"]
    added = [name for name, page in pages.items() if page["status"] == "added"]
    removed = [name for name, page in pages.items() if page["status"] == "removed"]
    changed = {name: page for name, page in pages.items() if page["status"] == "changed"}
    head = [MARKER, "## What this pull request changes on the site", "", _escape(report["summary"]), ""]
    if report.get("compared_with") is None:
        head += ["There is no published site to compare with yet: every page is new.", ""]
    if added:
        head += [f"**New pages:** {', '.join(f'`{_escape(name)}`' for name in added)}", ""]
    if removed:
        head += [f"**Removed pages:** {', '.join(f'`{_escape(name)}`' for name in removed)}", ""]
    blocks: list[str] = []
    for name, page in changed.items():
        title = f"### `{_escape(name)}` ({_escape(page['source'])})"
        if page["figures"]:
            listed = ", ".join(f"`{_escape(figure)}`" for figure in page["figures"])
            blocks.append(f"{title}\n\nChanged figure files: {listed}\n")
            title = ""
        for change in page["outputs"]:
            where = f"line {change['line']}" if change["line"] else f"line {change['old_line']} (cell removed)"
            fence = _fence(change["diff"])
            block = f"Output at {where}:\n\n{fence}diff\n{change['diff']}\n{fence}\n"
            blocks.append(f"{title}\n\n{block}" if title else block)
            title = ""
        if page["stamp"] and title:
            moved = ", ".join(f"{field} {new} (was {old})" for field, (old, new) in page["stamp"].items())
            blocks.append(f"{title}\n\nRan under {_escape(moved)}\n")
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
        left = len(blocks) - kept
        where = f"[the full report]({full_report})" if full_report else "the full report (changes.json in the artifact)"
        text += (
            f"\n---\n**Cut short:** {left} more change{'s' if left != 1 else ''} would not fit in one comment; "
            f"see {where}.\n"
        )
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
