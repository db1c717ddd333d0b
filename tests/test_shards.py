"""Execution spread over machines: two shards, then the site assembled from both, equals a one-machine build.

One tiny site (two lessons, one drawing a figure and printing a time, and a notebook
page with simulated devices) is built three ways, as `nox -s docs`, `nox -s execute`
and `nox -s docs -- --from` run them: whole on one machine; as shard 1/2 and 2/2 into
folders; and assembled from those folders, compared with the one-machine site.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from bs4 import BeautifulSoup
from conftest import make_site
from jaxcourse.tools import shards
from tiny import code_cell, lesson, notebook_page

FIGURE = (
    "```{code-cell} ipython3\n:tags: [remove-cell]\n\nfrom jaxcourse.runtime import save_figure\n\n"
    "save_figure({'kind': 'bar', 'labels': ['a', 'b'], 'ylabel': 'count', "
    "'series': [{'label': 's', 'y': [2.0, 3.0]}]}, title='Two bars')\n```\n\n"
    "```{figure} ../figures/drawn.svg\n:alt: Two bars, of heights 2 and 3.\n\nTwo bars.\n```\n"
)
TIMED = "```{code-cell} ipython3\n:varies: '(?<=seconds: ).*'\n\nimport time\n\nprint('seconds:', time.time())\n```\n"
LESSONS = {
    "drawn": lesson("drawn", code_cell("total = sum(range(5))\nprint('total:', total)") + "\n" + FIGURE + "\n" + TIMED),
    "counted": lesson("counted", code_cell("import jax.numpy as jnp\n\nprint(jnp.arange(4) * 2)"), title="Counted"),
}
DEVICES_PAGE = notebook_page(
    "A page with devices", code_cell("import jax\n\nprint('devices:', len(jax.devices()))")
).replace("orphan: true\n", "orphan: true\nexecution:\n  cpu_devices: 3\n")
#: The executed pages, by id, as execution.json names them.
PAGE_IDS = {"drawn", "counted", "docs/devices"}


def run(srcdir, *command):
    result = subprocess.run([sys.executable, "-m", *command], cwd=srcdir, capture_output=True, text=True, timeout=900)
    return result.returncode, result.stdout + result.stderr


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    srcdir = make_site(root, lessons=LESSONS)
    (srcdir / "docs" / "devices.md").write_text(DEVICES_PAGE, encoding="utf-8")
    one = run(
        srcdir, "jaxcourse.tools.sitebuild", str(root / "one"), "--progress", "-j", "2", "-D", "nb_execution_mode=force"
    )
    assert one[0] == 0, one[1]
    outputs = {"one": one}
    for index in (1, 2):
        outputs[f"shard{index}"] = run(
            srcdir, "jaxcourse.tools.shards", "execute", "--shard", f"{index}/2", "--into", str(root / f"shard{index}"),
            "--last-site", str(root / "one"), "-j", "2",
        )  # fmt: skip
        assert outputs[f"shard{index}"][0] == 0, outputs[f"shard{index}"][1]
    shutil_figure = srcdir / "figures" / "drawn.svg"
    one_figure = shutil_figure.read_bytes()
    shutil_figure.unlink()  # the assembly must bring the figure from its shard's folder
    outputs["assembled"] = run(
        srcdir, "jaxcourse.tools.sitebuild", str(root / "assembled"),
        "--from", str(root / "shard1"), str(root / "shard2"),
        "--compare-to", str(root / "one"), "--progress", "-j", "2",
    )  # fmt: skip
    assert outputs["assembled"][0] == 0, outputs["assembled"][1]
    # In a folder of its own, so that its report does not replace the assembly's beside `root`.
    outputs["missing"] = run(
        srcdir, "jaxcourse.tools.sitebuild", str(root / "missing" / "html"), "--from", str(root / "shard1")
    )
    return {"root": root, "srcdir": srcdir, "outputs": outputs, "figure": one_figure}


def shard_record(builds, index):
    return json.loads((builds["root"] / f"shard{index}" / "shard.json").read_text(encoding="utf-8"))


def execution(builds, site):
    return json.loads((builds["root"] / site / "execution.json").read_text(encoding="utf-8"))


def test_the_shards_split_the_pages_without_overlap(builds):
    first, second = shard_record(builds, 1)["pages"], shard_record(builds, 2)["pages"]
    assert first and second
    assert not set(first) & set(second)
    assert {page.removeprefix("lessons/") for page in first + second} == PAGE_IDS


def test_each_shard_executes_only_its_own_pages(builds):
    for index in (1, 2):
        record = shard_record(builds, index)
        ran = {run.split("@")[0] for run in record["fresh_runs"]}
        assert ran == {page.removeprefix("lessons/") for page in record["pages"]}


def test_the_assembled_site_has_the_same_pages_and_verdicts(builds):
    one, assembled = execution(builds, "one"), execution(builds, "assembled")
    assert set(one) == set(assembled) == PAGE_IDS
    for page_id in PAGE_IDS:
        assert assembled[page_id]["succeeded"] is one[page_id]["succeeded"] is True
        assert assembled[page_id]["stamp"]["jax"] == one[page_id]["stamp"]["jax"]


def test_the_shards_runs_count_as_fresh_with_their_own_run_times(builds):
    assembled = execution(builds, "assembled")
    runs = {run for index in (1, 2) for run in shard_record(builds, index)["fresh_runs"]}
    for page_id, row in assembled.items():
        assert row["fresh"] is True
        assert f"{page_id}@{row['started']}" in runs  # the shard's run, not a new one
        assert row["runtime_seconds"] and row["runtime_seconds"] > 0


def test_the_assembled_pages_say_this_build_executed_them(builds):
    for page in ("lessons/drawn.html", "lessons/counted.html", "docs/devices.html"):
        html = BeautifulSoup((builds["root"] / "assembled" / page).read_text(encoding="utf-8"), "html.parser")
        stamp = html.select_one(".run-stamp")
        assert "fresh" in stamp["class"]
        assert stamp.get_text().startswith("Executed by this build")
    devices = (builds["root"] / "assembled" / "docs" / "devices.html").read_text(encoding="utf-8")
    assert "devices: 3" in devices and "3 simulated CPU devices" in devices


def test_the_assembly_reports_no_change_from_the_one_machine_build_but_the_varying_time(builds):
    report = json.loads((builds["root"] / "changes.json").read_text(encoding="utf-8"))
    changed = {page_id: page for page_id, page in report["pages"].items() if page["outputs"] or page["figures"]}
    assert changed == {}, report["summary"]
    assert "unchanged" in report["summary"]


def test_the_figure_comes_from_its_shard_byte_for_byte(builds):
    assert (builds["srcdir"] / "figures" / "drawn.svg").read_bytes() == builds["figure"]


def deterministic_text(builds, site, page):
    html = BeautifulSoup((builds["root"] / site / page).read_text(encoding="utf-8"), "html.parser")
    for stamp in html.select(".run-stamp"):
        stamp.decompose()
    return html.select_one("article").get_text()


def test_a_deterministic_page_reads_the_same_either_way(builds):
    for page in ("lessons/counted.html", "docs/devices.html"):
        assert deterministic_text(builds, "one", page) == deterministic_text(builds, "assembled", page)


def test_a_page_with_no_recording_fails_with_one_message_naming_it(builds):
    status, output = builds["outputs"]["missing"]
    missing = shard_record(builds, 2)["pages"]
    assert status != 0
    located = re.findall(r"^(\S+\.md):(\d+): ERROR: (.*)$", output, re.M)
    assert sorted(path.rsplit("/", 2)[-2] + "/" + path.rsplit("/", 1)[-1][:-3] for path, _, _ in located) == sorted(
        missing
    )
    assert all("no recording of this page" in message for _, _, message in located)
    assert not (builds["root"] / "missing" / "html").exists()  # nothing published


@pytest.mark.parametrize("site", ["one", "assembled"])
def test_the_console_shows_every_executed_page_and_its_time_before_the_summary(builds, site):
    output = builds["outputs"][site][1]
    lines = re.findall(r"^\[\s*(\d+)/(\d+)\] (\S+): (fresh|reused), (\d+\.\d) s$", output, re.M)
    assert sorted(page for _, _, page, _, _ in lines) == sorted(PAGE_IDS)
    assert sorted(int(k) for k, _, _, _, _ in lines) == list(range(1, len(PAGE_IDS) + 1))
    assert {int(n) for _, n, _, _, _ in lines} == {len(PAGE_IDS)}
    if "Change report:" in output:
        last = max(output.index(f"] {page}: ") for page in PAGE_IDS)
        assert last < output.index("Change report:")


def test_the_plan_balances_recorded_run_times():
    costs = {"a": 10.0, "b": 9.0, "c": 2.0, "d": 1.0}
    assert shards.plan(costs, 2) == [["a", "d"], ["b", "c"]]
    assert shards.plan(costs, 1) == [["a", "b", "c", "d"]]
    assert shards.plan(costs, 5)[4] == []


def test_a_page_runs_in_the_shard_of_the_pages_it_pastes_glued_values_from(tmp_path):
    """Alone in a shard, a page pasting {glue}`other.md::key` would have nothing to paste, and fail."""
    (tmp_path / "docs").mkdir()
    for name, text in {"a": "{glue:text}`c.md::x:d`", "b": "", "c": "", "d": "```{glue} y\n:doc: b.md\n```"}.items():
        (tmp_path / "docs" / f"{name}.md").write_text(text, encoding="utf-8")
    pages = [f"docs/{name}" for name in "abcd"]
    together = shards.run_together(tmp_path, pages)
    assert together == [("docs/a", "docs/c"), ("docs/b", "docs/d")]
    costs = {"docs/a": 10.0, "docs/b": 9.0, "docs/c": 2.0, "docs/d": 1.0}
    assert shards.plan(costs, 2) == [["docs/a", "docs/d"], ["docs/b", "docs/c"]]  # apart, had they not pasted
    assert shards.plan(costs, 2, together) == [["docs/a", "docs/c"], ["docs/b", "docs/d"]]


def test_a_page_without_a_recorded_run_is_estimated_from_its_minutes(tmp_path):
    (tmp_path / "lessons").mkdir()
    for name, minutes in (("known", 20), ("new", 40)):
        text = lesson(name, "").replace("minutes: 5", f"minutes: {minutes}")
        (tmp_path / "lessons" / f"{name}.md").write_text(text, encoding="utf-8")
    (tmp_path / "execution.json").write_text(
        json.dumps({"known": {"docname": "lessons/known", "runtime_seconds": 8.0}}), encoding="utf-8"
    )
    costs = shards.page_costs(tmp_path, ["lessons/known", "lessons/new"], tmp_path / "execution.json")
    assert costs == {"lessons/known": 8.0, "lessons/new": 16.0}  # 8 s for 20 minutes: 0.4 s a minute


@pytest.mark.parametrize("text", ["2", "0/2", "3/2", "a/b"])
def test_a_malformed_shard_is_refused(text):
    with pytest.raises(shards.ShardError):
        shards.parse_shard(text)


PROBE = """
from pathlib import Path


def setup(app):
    def before_reading(app, env, docnames):
        cache = Path(app.config.nb_execution_cache_path)
        Path(app.srcdir, "cache-seen.txt").write_text(f"{cache.is_dir()} {(cache / 'global.db').is_file()}")

    # Sphinx emits this in the main process, after builder-inited and before it forks the readers.
    app.connect("env-before-read-docs", before_reading, priority=1)
    return {"parallel_read_safe": True}
"""


def test_the_execution_cache_exists_before_the_readers_fork(tmp_path):
    """jupyter-cache makes its folder with check-then-mkdir: parallel readers on an empty cache raced.

    Two notebook pages, one per reader process, each open the empty cache; three times over, each time a
    new cache, the build succeeds and the cache was there before the readers forked.
    """
    from conftest import build

    pages = {name: lesson(name, code_cell(f"print({index})")) for index, name in enumerate(["first", "second"])}
    srcdir = make_site(tmp_path, lessons=pages)
    (srcdir / "cacheprobe.py").write_text(PROBE, encoding="utf-8")
    with open(srcdir / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\nimport sys\nsys.path.insert(0, str(Path(__file__).parent))\nextensions.append('cacheprobe')\n")
    for attempt in range(3):
        cache = tmp_path / f"empty-cache-{attempt}"
        options = ["-E", "-j", "2", "-D", "nb_execution_mode=cache", "-D", f"nb_execution_cache_path={cache}"]
        result = build(srcdir, *options)
        assert result.returncode == 0, result.output
        assert (srcdir / "cache-seen.txt").read_text() == "True True"
        assert len(list(cache.rglob("*.ipynb"))) == 2  # both readers stored their page in it
