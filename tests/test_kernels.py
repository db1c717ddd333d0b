"""Each lesson runs in its own kernel: what one lesson sets up never reaches the next.

A lesson's simulated CPU devices (``lesson.cpu_devices``) are set before JAX
starts, shown in the stamp and carried into its downloads; a lesson that
enables 64-bit floats leaves the next lesson at JAX's defaults. The site is
read serially, so each default lesson is read right after a lesson that
changed something, in the same Sphinx process.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from conftest import build, make_site
from tiny import code_cell, lesson

REPORT = code_cell(
    "import json\nimport os\n\nimport jax\nimport jax.numpy as jnp\n"
    "from ipykernel.connect import get_connection_info\n\n"
    "print('transport:', json.loads(get_connection_info())['transport'])\n"
    "print('devices:', len(jax.devices()))\n"
    "print('XLA_FLAGS:', os.environ.get('XLA_FLAGS', ''))\n"
    "print('x64:', jax.config.jax_enable_x64, jnp.ones(1).dtype, jnp.arange(2).dtype)"
)
ENABLE_X64 = code_cell(
    "import jax\n\njax.config.update('jax_enable_x64', True)\nprint('dtype now:', jax.numpy.ones(1).dtype)"
)

SLOW_PRINT = """import sys
import time

sys.stdout.write('counts: ')
time.sleep(0.5)
print([1, 2])
sys.stdout.write('a line ending in spaces   ')
time.sleep(0.5)
print('went on')"""


# Read in name order: each default lesson comes right after one that changed its kernel.
LESSONS = {
    "a-four-devices": lesson("a-four-devices", REPORT, extra="  cpu_devices: 4\n"),
    "b-default-after-devices": lesson("b-default-after-devices", REPORT),
    "c-enables-x64": lesson("c-enables-x64", ENABLE_X64 + "\n" + REPORT),
    "d-default-after-x64": lesson("d-default-after-x64", REPORT),
    # One print whose pieces are written half a second apart, longer than ipykernel's 0.2 s flush timer.
    "e-slow-print": lesson("e-slow-print", REPORT + "\n" + code_cell(SLOW_PRINT)),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    srcdir = make_site(tmp_path_factory.mktemp("kernels"), lessons=LESSONS)
    result = build(srcdir)  # serial: one process reads the lessons one after another
    assert result.returncode == 0, result.output
    return result


def printed(site, lesson_id):
    text = "".join(pre.get_text() for pre in site.html(f"lessons/{lesson_id}.html").select("div.cell_output pre"))
    return dict(re.findall(r"^([\w ]+): (.*)$", text, re.M))


def stamp(site, lesson_id):
    return json.loads((site.outdir / "execution.json").read_text(encoding="utf-8"))[lesson_id]["stamp"]


def test_a_lesson_gets_the_devices_it_declares(site):
    assert printed(site, "a-four-devices")["devices"] == "4"
    assert "--xla_force_host_platform_device_count=4" in printed(site, "a-four-devices")["XLA_FLAGS"]
    assert stamp(site, "a-four-devices")["device_count"] == 4


def test_the_stamp_says_how_many_simulated_devices(site):
    text = site.html("lessons/a-four-devices.html").select_one(".run-stamp").get_text(" ", strip=True)
    assert " · 4 simulated CPU devices · JAX " in text
    default = site.html("lessons/b-default-after-devices.html").select_one(".run-stamp").get_text(" ", strip=True)
    assert "simulated" not in default


@pytest.mark.parametrize("lesson_id", ["b-default-after-devices", "d-default-after-x64"])
def test_the_next_lesson_starts_at_the_defaults(site, lesson_id):
    values = printed(site, lesson_id)
    assert values["devices"] == "1"
    assert "xla_force_host_platform_device_count" not in values["XLA_FLAGS"]
    assert values["x64"] == "False float32 int32"
    assert stamp(site, lesson_id)["x64"] is False and stamp(site, lesson_id)["device_count"] == 1


@pytest.mark.parametrize("lesson_id", sorted(LESSONS))
def test_kernels_talk_over_private_sockets_not_tcp_ports(site, lesson_id):
    """The course's kernel provisioner: no two kernels of a parallel build can race for a port."""
    assert printed(site, lesson_id)["transport"] == "ipc"


def test_x64_did_take_effect_in_its_own_lesson(site):
    assert printed(site, "c-enables-x64")["x64"] == "True float64 int64"


@pytest.mark.parametrize("kind", ["a-four-devices.ipynb", "a-four-devices-exercises.ipynb"])
def test_downloads_ask_for_the_devices_before_jax_starts(site, kind):
    notebook = nbformat.read(site.outdir / "_downloads" / "lessons" / kind, as_version=4)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    assert "--xla_force_host_platform_device_count=4" in code[0]
    assert "import jax" not in code[0] and "import jax" in "\n".join(code[1:])


def test_the_executed_notebook_gets_its_devices_outside_the_site(site, tmp_path):
    from nbclient import NotebookClient

    notebook = nbformat.read(site.outdir / "_downloads" / "lessons" / "a-four-devices.ipynb", as_version=4)
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    text = "".join(output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", []))
    assert "devices: 4" in text


def test_a_print_interrupted_by_a_pause_stays_on_one_line(site):
    """The kernel sends a cell's output when the cell ends, so no timer can split a line."""
    shown = "".join(pre.get_text() for pre in site.html("lessons/e-slow-print.html").select("div.cell_output pre"))
    assert "counts: [1, 2]\na line ending in spaces   went on\n" in shown
    transcript = json.loads((site.outdir / "recordings.json").read_text(encoding="utf-8"))
    cells = transcript["pages"]["e-slow-print"]["cells"]
    assert any(cell["shown"].startswith("counts: [1, 2]\n") for cell in cells)
