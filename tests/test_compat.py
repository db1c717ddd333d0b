"""`nox -s compat`: verdicts per JAX version, and how the site shows them.

A tiny site is built as the compat session builds each version: first a good
build (the "current site"), then, with one output changed and one lesson broken,
a build compared with it, from which `python -m jaxcourse.tools.compat record` writes
the verdicts. A third build with those verdicts present shows the page and the
lessons' headers; the first, without them, has no such page.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import ROOT, make_site
from jaxcourse.tools import compat
from tiny import code_cell, lesson, line_of, notebook_page

STABLE = lesson("stable", code_cell("print('value:', 1)"), title="Stable lesson")
STABLE_CHANGED = lesson("stable", code_cell("print('value:', 2)"), title="Stable lesson")
BROKEN = lesson("broken", code_cell("x = 1\nassert x == 2, 'x is one'"), title="Broken lesson")
FINE = lesson("broken", code_cell("x = 1\nassert x == 1"), title="Broken lesson")
PAGE = notebook_page("A notebook page", code_cell("print('page')"))


def run(srcdir: Path, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *command], cwd=srcdir, capture_output=True, text=True, timeout=900
    )  # fmt: skip


def html(site: Path, page: str) -> BeautifulSoup:
    return BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("compat")
    srcdir = make_site(root, lessons={"stable": STABLE, "broken": FINE})
    (srcdir / "docs" / "page.md").write_text(PAGE, encoding="utf-8")
    current = run(srcdir, "jaxcourse.tools.sitebuild", str(root / "html"), "-D", "nb_execution_mode=force")
    assert current.returncode == 0, current.stdout + current.stderr
    # What the compat session does for one version: build everything again, compared with the current site.
    (srcdir / "lessons" / "stable.md").write_text(STABLE_CHANGED, encoding="utf-8")
    (srcdir / "lessons" / "broken.md").write_text(BROKEN, encoding="utf-8")
    other = root / "compat" / "0.10.1" / "html"
    other.parent.mkdir(parents=True)
    tried = run(srcdir, "jaxcourse.tools.sitebuild", str(other), "--compare-to", str(root / "html"))
    assert tried.returncode != 0
    verdicts = srcdir / "_build" / "compat.json"
    recorded = run(srcdir, "jaxcourse.tools.compat", "record", "0.10.1", str(other), str(verdicts))
    assert recorded.returncode == 0, recorded.stderr
    # Another version, passing everywhere, as a second matrix job would add it.
    merged = json.loads(verdicts.read_text(encoding="utf-8"))
    merged["0.10.0"] = {page: {"status": "pass", "changed_outputs": 0} for page in merged["0.10.1"]}
    (root / "part.json").write_text(json.dumps({"0.10.0": merged["0.10.0"]}), encoding="utf-8")
    assert run(srcdir, "jaxcourse.tools.compat", "merge", str(verdicts), str(root / "part.json")).returncode == 0
    shown = run(srcdir, "jaxcourse.tools.sitebuild", str(root / "shown"), "-D", "nb_execution_mode=cache")
    assert shown.returncode != 0  # the broken lesson still fails here; the site is left in shown.new
    return {
        "root": root,
        "srcdir": srcdir,
        "verdicts": json.loads(verdicts.read_text(encoding="utf-8")),
        "printed": recorded.stdout,
        "shown": root / "shown.new",
    }


def test_every_executed_page_gets_a_verdict(builds):
    assert set(builds["verdicts"]["0.10.1"]) == {"stable", "broken", "docs/page"}


def test_a_failure_names_its_file_and_line(builds):
    broken = builds["verdicts"]["0.10.1"]["broken"]
    assert broken["status"] == "fail"
    assert broken["where"] == f"lessons/broken.md:{line_of(BROKEN, 'assert x == 2')}"
    assert "x is one" in broken["message"]
    assert f"FAIL broken: {broken['where']}" in builds["printed"]


def test_changed_outputs_are_counted_against_the_current_site(builds):
    assert builds["verdicts"]["0.10.1"]["stable"] == {"status": "pass", "changed_outputs": 1}
    assert builds["verdicts"]["0.10.1"]["docs/page"] == {"status": "pass", "changed_outputs": 0}


def test_versions_are_kept_in_numeric_order(builds, tmp_path):
    assert list(builds["verdicts"]) == ["0.10.0", "0.10.1"]
    out = tmp_path / "compat.json"
    for version in ("0.10.10", "0.9.2", "0.10.2"):
        compat.merge(out, {version: {}})
    assert list(json.loads(out.read_text(encoding="utf-8"))) == ["0.9.2", "0.10.2", "0.10.10"]


def test_without_verdicts_there_is_no_compatibility_page(builds):
    assert not (builds["root"] / "html" / "docs" / "compatibility.html").exists()
    assert not html(builds["root"] / "html", "lessons/stable.html").select(".compat-versions")


def test_the_page_shows_lessons_by_versions(builds):
    page = html(builds["shown"], "docs/compatibility.html")
    assert page.select_one("h1").get_text().startswith("Which JAX versions this course runs on")
    table = page.select_one("table.compat-matrix")
    header = [cell.get_text(strip=True) for cell in table.select("thead th")]
    assert header == ["Page", "JAX 0.10.0", "JAX 0.10.1"]
    rows = {row.select("td")[0].get_text(strip=True): [c.get_text(" ", strip=True) for c in row.select("td")[1:]]
            for row in table.select("tbody tr")}  # fmt: skip
    assert set(rows) == {"Stable lesson", "Broken lesson", "docs/page"}
    assert rows["Stable lesson"] == ["pass", "pass (1 output differs)"]
    where = builds["verdicts"]["0.10.1"]["broken"]["where"]
    assert rows["Broken lesson"][0] == "pass"
    assert rows["Broken lesson"][1].startswith(f"fail at {where}")
    message = builds["verdicts"]["0.10.1"]["broken"]["message"]
    assert message in [code.get_text() for code in table.select("code")]  # verbatim: no smart quotes
    assert table.select_one("a[href]")["href"].endswith(".html")


def test_each_lesson_header_lists_the_versions_it_passed_under(builds):
    stable = html(builds["shown"], "lessons/stable.html").select_one(".compat-versions")
    assert stable.get_text(" ", strip=True).startswith("Checked by nox -s compat: passes on JAX 0.10.0, 0.10.1")
    assert stable.select_one("a")["href"].endswith("docs/compatibility.html")
    page = html(builds["shown"], "docs/page.html").select_one(".compat-versions")
    assert "passes on JAX 0.10.0, 0.10.1" in page.get_text()


def test_the_site_carries_its_verdicts_for_the_next_build(builds):
    assert json.loads((builds["shown"] / "compat.json").read_text(encoding="utf-8")) == builds["verdicts"]
    assert not (builds["root"] / "html" / "compat.json").exists()


def test_the_versions_command_needs_nothing_but_python():
    """The workflow's first job runs it on a bare Python, before any package is installed."""
    bare = subprocess.run(
        [
            sys.executable, "-I", "-S", "-c",
            "import sys; sys.path.insert(0, 'docs/_ext'); import jaxcourse.tools.compat",
        ],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert bare.returncode == 0, bare.stderr


def test_the_execution_report_links_to_the_verdicts(builds):
    report = html(builds["shown"], "docs/execution-report.html")
    assert any(link["href"].endswith("compatibility.html") for link in report.select("article a[href]"))


def test_pinning_moves_jax_and_jaxlib_only(tmp_path):
    text = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    pinned = compat.pinned_requirements(text, "0.10.1", ROOT)
    before, after = text.splitlines(), pinned.splitlines()
    changed = [(old, new) for old, new in zip(before, after, strict=True) if old != new]
    assert sorted(new for _, new in changed) == sorted(
        ["jax==0.10.1", "jaxlib==0.10.1", f"-e {(ROOT / 'docs' / '_ext').resolve()}"]
    )


def test_pinning_refuses_a_file_without_both_pins():
    with pytest.raises(compat.CompatError, match="jaxlib"):
        compat.pinned_requirements("jax==0.10.2\nnumpy==2.0\n", "0.10.1", ROOT)


def test_the_workflow_tries_the_newest_releases_and_the_pinned_one():
    releases = ["0.9.0", "0.10.0", "0.10.1rc1", "0.10.1", "0.10.2", "0.10.10.dev1"]
    assert compat.newest_releases(releases, 2) == ["0.10.1", "0.10.2"]
    assert compat.newest_releases(releases, 2, pinned="0.9.0") == ["0.9.0", "0.10.1", "0.10.2"]


def test_the_compat_session_never_touches_the_pins_or_the_site():
    """Static: the session writes its pins under .nox and builds under _build/compat, from a copy of the sources."""
    source = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    body = source[source.index("def compat(") : source.index("@nox.session", source.index("def compat("))]
    assert re.search(r'ROOT / "\.nox" / f"compat-\{version\}" / "requirements\.txt"', body)
    assert 'BUILD / "compat" / version' in body and '"copy"' in body
    assert "REQUIREMENTS" not in body
