"""The built course site, checked in a real browser (headless Chromium through Playwright).

The whole site (conftest's `course_site`) is served from a local http.server, and every
lesson page plus the home page is loaded to check that it answers 200, logs no errors,
fetches nothing from another origin, shows its images and run stamp, and passes axe-core
without serious or critical violations. The transforms-04 page is also used to check the
interactive parts the site depends on: solution toggles, copy buttons and search.

Readers on every device: axe-core runs again on the home page and every lesson at 390 px (a
phone) and 1280 px, in the light and the dark theme; a keyboard walk checks that every control
shows its focus; charts, the home page's start and search are measured as a reader meets them.

Without Chromium or Playwright these tests skip, unless CI is set ("true" or "1"), where
a missing browser is a failure rather than a silent skip.
"""

from __future__ import annotations

import dataclasses
import functools
import http.server
import itertools
import os
import re
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from conftest import LESSON_FILES, ROOT

try:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect, sync_playwright
except ImportError as error:  # checked (skip or fail) by the `browser` fixture
    sync_playwright = None
    PLAYWRIGHT_IMPORT_ERROR = error
    PlaywrightError = Exception
else:
    PLAYWRIGHT_IMPORT_ERROR = None

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]

# The pages the site builds from the repository's lessons (their list is checked against
# the built lessons/*.html by test_every_built_lesson_is_checked), plus the home page.
LESSON_PAGES = [f"lessons/{path.stem}.html" for path in LESSON_FILES]
HOME_PAGE = "docs/index.html"
DOC_PAGES = sorted(f"docs/{path.stem}.html" for path in (ROOT / "docs").glob("*.md"))
PAGES = [*LESSON_PAGES, *DOC_PAGES, "404.html", "search.html"]
#: A phone and a laptop, as the site's browser review used them; a test without its own size gets the laptop.
VIEWPORTS = {"390": {"width": 390, "height": 844}, "1280": {"width": 1280, "height": 800}}
SCHEMES = ["light", "dark"]

LESSON = "transforms-04"
LESSON_PAGE = f"lessons/{LESSON}.html"
SEARCH_TERM = "block_until_ready"
BLOCKING_IMPACTS = {"serious", "critical"}
TIMEOUT_MS = 15_000


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Skip for a missing browser tool, except on CI, where it must be there."""
    if in_ci():
        pytest.fail(f"{reason} (CI is set, so this fails instead of skipping)", pytrace=False)
    pytest.skip(reason)


def find_chromium() -> str | None:
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


# ---------------------------------------------------------------------------- fixtures


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A browser that drops a connection early (favicon, a closed page) is no failure.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture(scope="module")
def server(course_site):
    """The built site over HTTP on a free local port: yields its base URL ending in '/'."""
    handler = functools.partial(QuietHandler, directory=str(course_site.outdir))
    httpd = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, name="course-site-server", daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    try:
        yield f"http://{host}:{port}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    if sync_playwright is None:
        unavailable(f"Playwright is not installed: {PLAYWRIGHT_IMPORT_ERROR}")
    executable = find_chromium()
    if executable is None:
        unavailable("Chromium not found at /usr/bin/chromium or as `chromium` on PATH")
    playwright = sync_playwright().start()
    try:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    except Exception:
        playwright.stop()
        raise
    try:
        yield chromium
    finally:
        chromium.close()
        playwright.stop()


@pytest.fixture
def context(browser, server):
    """A fresh browser context per test, so no state leaks between pages."""
    ctx = browser.new_context(base_url=server, viewport=VIEWPORTS["1280"], color_scheme="light")
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        ctx.close()


@dataclasses.dataclass
class Visit:
    """One page load, with everything the page requested or reported while loading."""

    page: object
    response: object
    origin: str
    requests: list[str] = dataclasses.field(default_factory=list)
    console_errors: list[str] = dataclasses.field(default_factory=list)
    page_errors: list[str] = dataclasses.field(default_factory=list)

    def outside_requests(self) -> list[str]:
        return [url for url in self.requests if not is_local(url, self.origin)]


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def is_local(url: str, origin: str) -> bool:
    return urlsplit(url).scheme in {"data", "blob"} or origin_of(url) == origin


def visit(context, server: str, path: str) -> Visit:
    """Open `path` of the served site in a new page, recording requests and errors."""
    page = context.new_page()
    record = Visit(page=page, response=None, origin=origin_of(server))
    page.on("request", lambda request: record.requests.append(request.url))
    page.on(
        "console",
        lambda message: (
            record.console_errors.append(f"{message.text} (at {message.location})") if message.type == "error" else None
        ),
    )
    page.on("pageerror", lambda error: record.page_errors.append(str(error)))
    record.response = page.goto(server + path, wait_until="load")
    return record


# ------------------------------------------------------------------ every page of the site


def test_every_built_lesson_is_checked(course_site):
    built = sorted(
        path.relative_to(course_site.outdir).as_posix() for path in course_site.outdir.glob("lessons/*.html")
    )
    assert built, "the site built no lesson pages"
    assert built == sorted(LESSON_PAGES), "the built lessons/*.html differ from the repository's lessons/*.md"
    assert (course_site.outdir / HOME_PAGE).is_file()


def test_root_redirects_to_home(context, server):
    page = context.new_page()
    requested = []
    page.on("request", lambda request: requested.append(urlsplit(request.url).path))
    page.goto(server + "index.html")
    page.wait_for_url(server + HOME_PAGE)
    page.wait_for_load_state("networkidle")
    assert "/favicon.ico" not in requested, requested  # every page links the site's icon, the redirect too


@dataclasses.dataclass
class PageCheck:
    """Everything checked on one page, from a single load."""

    path: str
    status: int | None
    problems: list[str]


def check_page(context, server: str, path: str) -> PageCheck:
    """Load `path` once and collect every problem a reader could meet on it."""
    from axe_playwright_python.sync_playwright import Axe

    record = visit(context, server, path)
    page = record.page
    problems = []
    status = record.response.status if record.response is not None else None
    if status != 200:
        problems.append(f"HTTP {status}")
    page.wait_for_load_state("networkidle")  # late requests (fonts, deferred scripts) too
    problems += [f"console error: {text}" for text in record.console_errors]
    problems += [f"page error: {text}" for text in record.page_errors]
    if not record.requests:
        problems.append("no requests recorded at all")
    problems += [f"requested an outside URL: {url}" for url in record.outside_requests()]
    broken = page.evaluate(
        """async () => {
            const images = Array.from(document.images);
            // Lazy images below the fold load only when asked for; ask, then wait for each.
            images.forEach((img) => { img.loading = "eager"; });
            await Promise.all(images.map((img) => img.decode().catch(() => null)));
            return images
                .filter((img) => !(img.complete && img.naturalWidth > 0 && img.naturalHeight > 0))
                .map((img) => `${img.currentSrc || img.getAttribute("src")} `
                    + `(${img.naturalWidth}x${img.naturalHeight}, complete=${img.complete})`);
        }"""
    )
    problems += [f"image did not load: {image}" for image in broken]
    if path.startswith("lessons/"):
        stamp = page.locator(".lesson-header .run-stamp")
        if stamp.count() != 1 or not stamp.is_visible() or not stamp.inner_text().strip():
            problems.append("no visible run stamp under the title")
        # The transcript holds the answers to the experiments and exercises below it.
        transcript = page.locator(".recorded-transcript")
        if transcript.count() != 1:
            problems.append(f"{transcript.count()} transcripts instead of 1")
        elif transcript.is_visible():
            problems.append("the recorded transcript is visible on load, above the exercises it answers")
        summary = page.locator(".recorded-run .admonition-title")
        if summary.count() != 1 or not summary.is_visible():
            problems.append("the transcript's one-line summary is not visible")
    results = Axe().run(page)
    violations = [v for v in results.response["violations"] if v.get("impact") in BLOCKING_IMPACTS]
    problems += [f"axe-core: {format_violation(violation)}" for violation in violations]
    page.close()
    return PageCheck(path, status, problems)


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_cleanly_offline_and_accessibly(context, server, path):
    """HTTP 200, no console or page error, nothing from another origin, every image, the stamp,
    a collapsed transcript, and no serious or critical axe-core violation: one load per page."""
    result = check_page(context, server, path)
    assert not result.problems, f"{path}:\n" + "\n".join(result.problems)


def format_violation(violation: dict, targets: int = 3) -> str:
    selectors = [", ".join(map(str, node.get("target", []))) for node in violation.get("nodes", [])]
    shown = "; ".join(selectors[:targets]) + (
        f"; ... {len(selectors) - targets} more" if len(selectors) > targets else ""
    )
    return f"{violation['id']} [{violation.get('impact')}] {violation.get('help')} ({len(selectors)} node(s): {shown})"


def test_the_transcript_opens_from_its_summary(context, server):
    page = visit(context, server, LESSON_PAGE).page
    box = page.locator(".recorded-run")
    transcript = box.locator(".recorded-transcript")
    expect(transcript).to_be_hidden()
    box.locator("button.toggle-button").click()
    expect(transcript).to_be_visible()
    expect(transcript).to_contain_text(f"PASS: {LESSON}")


# --------------------------------------------------------------- interactive parts (transforms-04)


def solution_parts(page, index: int):
    """The index-th reference solution, its toggle button and its first hidden part."""
    solutions = page.locator("div.solution.dropdown")
    expect(solutions.first).to_be_attached()
    solution = solutions.nth(index)
    button = solution.locator("button.toggle-button")
    expect(button).to_have_count(1)  # added by sphinx-togglebutton's script
    content = solution.locator(":scope > :not(.admonition-title)").first
    return solution, button, content


def test_solution_is_hidden_then_opens_on_click(context, server):
    page = visit(context, server, LESSON_PAGE).page
    solution, button, content = solution_parts(page, 0)
    expect(content).to_be_hidden()
    expect(button).to_have_attribute("aria-expanded", "false")
    button.click()
    expect(content).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(solution).not_to_have_class("toggle-hidden")
    button.click()
    expect(content).to_be_hidden()


@pytest.mark.parametrize("key", ["Enter", "Space"])
def test_solution_opens_with_keyboard(context, server, key):
    page = visit(context, server, LESSON_PAGE).page
    _, button, content = solution_parts(page, 0)
    expect(content).to_be_hidden()
    button.focus()
    expect(button).to_be_focused()
    page.keyboard.press(key)
    expect(content).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "true")


def test_copy_button_copies_exactly_the_cell_code(browser, server):
    ctx = browser.new_context(base_url=server, viewport=VIEWPORTS["1280"], color_scheme="light")
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin_of(server))
        page = visit(ctx, server, LESSON_PAGE).page
        cell = page.locator("div.cell_input").filter(has=page.locator("button.copybtn")).first
        pre = cell.locator("pre").first
        expected = pre.evaluate("(pre) => pre.textContent")
        expected = expected.removesuffix("\n")  # the one the button drops
        assert expected.strip(), "the first input cell has no code"
        page.evaluate("() => navigator.clipboard.writeText('')")  # no earlier content can pass
        cell.hover()  # as a reader would: sphinx-copybutton fades the button in on hover
        cell.locator("button.copybtn").first.click()
        expect(cell.locator("button.copybtn").first).to_have_attribute("data-tooltip", "Copied!")
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert copied == expected
        assert not copied.lstrip().startswith((">>>", "In [")), "prompts were copied"
    finally:
        ctx.close()


def test_outputs_have_no_copy_button(context, server):
    page = visit(context, server, LESSON_PAGE).page
    expect(page.locator("div.cell_input button.copybtn").first).to_be_attached()
    outputs = page.locator("div.cell_output")
    assert outputs.count() > 0, f"{LESSON_PAGE} has no cell outputs to check"
    expect(page.locator("div.cell_output button.copybtn")).to_have_count(0)


def test_search_finds_the_lesson(context, server):
    record = visit(context, server, f"search.html?q={SEARCH_TERM}")
    page = record.page
    results = page.locator("ul.search li")
    expect(results.first).to_be_visible()
    # Results are appended one by one; Sphinx writes this summary once the last is shown.
    expect(page.locator("#search-results p.search-summary")).to_contain_text("Search finished")
    targets = page.locator("ul.search li a").evaluate_all("(links) => links.map((a) => a.href)")
    paths = [urlsplit(url).path for url in targets]
    assert "/" + LESSON_PAGE in paths, f"search for {SEARCH_TERM!r} did not find {LESSON_PAGE}: {targets}"
    assert not record.page_errors, record.page_errors
    assert not record.outside_requests(), record.outside_requests()


# ----------------------------------------------------------------------------- page weight


@dataclasses.dataclass
class PageWeight:
    path: str
    requests: int
    bytes: int
    by_type: dict[str, tuple[int, int]]  # resource type -> (requests, bytes)
    by_url: dict[str, int] = dataclasses.field(default_factory=dict)  # path on the site -> bytes

    def __str__(self) -> str:
        parts = ", ".join(f"{kind} {count} / {size:,} B" for kind, (count, size) in sorted(self.by_type.items()))
        return f"{self.path}: {self.requests} requests, {self.bytes:,} bytes ({self.bytes / 1024:.1f} KiB); {parts}"


def measure_page_weight(context, server: str, path: str = LESSON_PAGE) -> PageWeight:
    """Every request a fresh page makes until the network is idle, and its bodies' sizes."""
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.goto(server + path, wait_until="load")
    # A reader scrolls past every image: the lazy ones (the figure in the reader's theme) load then.
    for image in page.locator("img").all():
        if image.is_visible():
            image.scroll_into_view_if_needed()
    page.wait_for_load_state("networkidle")
    total = 0
    by_type: dict[str, tuple[int, int]] = {}
    by_url: dict[str, int] = {}
    for request in requests:
        size = 0
        response = request.response()
        if response is not None and not (300 <= response.status < 400):
            try:
                size = len(response.body())
            except PlaywrightError:  # e.g. a body the browser did not keep
                size = 0
        total += size
        count, kind_size = by_type.get(request.resource_type, (0, 0))
        by_type[request.resource_type] = (count + 1, kind_size + size)
        by_url[urlsplit(request.url).path.lstrip("/")] = size
    page.close()
    return PageWeight(path=path, requests=len(requests), bytes=total, by_type=by_type, by_url=by_url)


#: A lesson page's budget: everything it loads, the site's math font counted once (a reader's browser
#: fetches it with the first page that has a formula and keeps it), so it is budgeted on its own.
PAGE_BUDGET_BYTES = 350 * 1024
MATH_FONT = "_static/jaxcourse-math.woff2"
MATH_FONT_BUDGET_BYTES = 100 * 1024


@pytest.mark.parametrize("path", LESSON_PAGES)
def test_a_lesson_page_weighs_at_most_its_budget(context, server, path):
    weight = measure_page_weight(context, server, path)
    print(f"\nPage weight of {weight}")
    without_font = weight.bytes - weight.by_url.get(MATH_FONT, 0)
    assert 0 < without_font <= PAGE_BUDGET_BYTES, str(weight)
    assert weight.by_url.get(MATH_FONT, 0) <= MATH_FONT_BUDGET_BYTES


# ------------------------------------------------------------------------------ dark mode


def shown_figures(page) -> list[str]:
    """The file names of the figure images a reader sees in the page's current theme."""
    return page.locator("figure img").evaluate_all(
        "(images) => images.filter((img) => img.offsetParent !== null)"
        ".map((img) => img.getAttribute('src').split('/').pop())"
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_each_theme_shows_its_own_figure(browser, server, scheme):
    ctx = browser.new_context(base_url=server, color_scheme=scheme)
    try:
        page = visit(ctx, server, LESSON_PAGE).page
        shown = shown_figures(page)
        assert shown, "no figure is visible"
        assert all(name.endswith("-dark.svg") == (scheme == "dark") for name in shown), shown
    finally:
        ctx.close()


def test_dark_mode_lesson_is_readable(browser, server):
    """furo follows the reader's colour scheme; text, stamp and figures stay readable in dark mode."""
    from axe_playwright_python.sync_playwright import Axe

    ctx = browser.new_context(base_url=server, color_scheme="dark")
    try:
        page = visit(ctx, server, LESSON_PAGE).page
        background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        channels = [int(value) for value in background[background.index("(") + 1 : -1].split(",")[:3]]
        assert sum(channels) / 3 < 80, f"the page is not in dark mode: body background {background}"
        figure = page.locator("figure img.only-dark").first
        figure.scroll_into_view_if_needed()  # lazily loaded, as a reader scrolls to it
        expect(figure).to_be_visible()
        results = Axe().run(page)
        violations = [v for v in results.response["violations"] if v.get("impact") in BLOCKING_IMPACTS]
        assert not violations, "\n".join(map(format_violation, violations))
    finally:
        ctx.close()


# ------------------------------------------------------------------------- reading details

#: Private-use characters are icon-font glyphs: without that font they draw as a missing-glyph box.
PRIVATE_USE = "() => { const found = []; for (const element of document.querySelectorAll('*')) {"
PRIVATE_USE += " for (const where of ['::before', '::after']) {"
PRIVATE_USE += " const content = getComputedStyle(element, where).content || '';"
PRIVATE_USE += " if (/[\\uE000-\\uF8FF]/.test(content)) found.push(element.className + where); } }"
PRIVATE_USE += " return found; }"


@pytest.mark.parametrize("path", [LESSON_PAGE, "lessons/scale-01.html"])
def test_no_icon_glyph_needs_a_font_the_site_does_not_load(context, server, path):
    page = visit(context, server, path).page
    expect(page.locator("div.exercise").first).to_be_attached()
    assert page.evaluate(PRIVATE_USE) == []


def test_error_outputs_wrap_instead_of_hiding_their_end(browser, server):
    ctx = browser.new_context(base_url=server, viewport={"width": 390, "height": 900})
    try:
        page = visit(ctx, server, "lessons/foundations-01.html").page
        errors = page.locator("div.cell_output .error-summary pre")
        assert errors.count() > 0
        clipped = errors.evaluate_all("(blocks) => blocks.filter((b) => b.scrollWidth > b.clientWidth + 1).length")
        assert clipped == 0
    finally:
        ctx.close()


def test_the_sidebar_groups_lessons_under_their_phases(context, server, course_site):
    from conftest import COURSE

    page = visit(context, server, HOME_PAGE).page
    captions = page.locator(".sidebar-tree p.caption").evaluate_all("(items) => items.map((p) => p.textContent.trim())")
    expected = []
    for lesson in COURSE:
        caption = f"Phase {lesson.meta['phase']:02d}: {lesson.meta['phase_title']}"
        if caption not in expected:
            expected.append(caption)
    assert captions[: len(expected)] == expected  # the site's own pages follow, under their own caption


def test_matrix_parentheses_stretch_to_the_matrix(context, server):
    """transforms-08's Jacobian: with the site's math font, each fence is as tall as the matrix it encloses."""
    page = visit(context, server, "lessons/transforms-08.html").page
    page.evaluate("() => document.fonts.ready")
    sizes = page.evaluate(
        """() => Array.from(document.querySelectorAll('math mtable')).map((table) => {
            const fences = [table.previousElementSibling, table.nextElementSibling]
                .filter((side) => side && side.localName === 'mo' && '()'.includes(side.textContent.trim()));
            return {table: table.getBoundingClientRect().height,
                    fences: fences.map((fence) => fence.getBoundingClientRect().height)};
        }).filter((size) => size.fences.length === 2)"""
    )
    assert sizes, "no parenthesised matrix on the page"
    for size in sizes:
        assert all(fence >= 0.9 * size["table"] for fence in size["fences"]), sizes
    assert page.evaluate("() => document.fonts.check('16px \"STIX Two Math\"')")


# ------------------------------------------------------------------- readers on every device

READER_PAGES = [HOME_PAGE, *LESSON_PAGES]


@pytest.fixture
def reader(browser, server, request):
    """A new context of the size and colour scheme a test's parameters name: reader(size, scheme)."""
    contexts = []

    def make(size: str, scheme: str = "light"):
        ctx = browser.new_context(base_url=server, viewport=VIEWPORTS[size], color_scheme=scheme)
        ctx.set_default_timeout(TIMEOUT_MS)
        contexts.append(ctx)
        return ctx

    yield make
    for ctx in contexts:
        ctx.close()


#: The views axe-core checks here. The laptop in the light theme is not among them: every page gets that
#: check from its one load in test_page_loads_cleanly_offline_and_accessibly (the ``context`` fixture).
OTHER_VIEWS = [view for view in itertools.product(sorted(VIEWPORTS), SCHEMES) if view != ("1280", "light")]


def test_the_laptop_light_view_is_checked_with_every_page():
    assert set(READER_PAGES) <= set(PAGES)
    assert set(itertools.product(VIEWPORTS, SCHEMES)) - set(OTHER_VIEWS) == {("1280", "light")}


@pytest.mark.parametrize(("size", "scheme"), OTHER_VIEWS)
@pytest.mark.parametrize("path", READER_PAGES)
def test_no_serious_axe_violation_on_a_phone_or_a_laptop_in_either_theme(reader, server, path, size, scheme):
    """Wide equations and tables scroll in boxes a keyboard can reach, at 390 px too."""
    from axe_playwright_python.sync_playwright import Axe

    page = visit(reader(size, scheme), server, path).page
    page.wait_for_load_state("networkidle")
    violations = [v for v in Axe().run(page).response["violations"] if v.get("impact") in BLOCKING_IMPACTS]
    assert not violations, f"{path} at {size} px, {scheme}:\n" + "\n".join(map(format_violation, violations))


#: Transitions and smooth scrolling, off while the focus ring is measured: the ring is compared with the
#: unfocused control only once both are drawn, wherever the page has scrolled to.
STILL = "html, * { scroll-behavior: auto !important; transition: none !important; animation: none !important; }"
FOCUSED = """() => {
  const element = document.activeElement;
  if (!element || element === document.body || element === document.documentElement) return null;
  window.__visited = window.__visited || new Set();
  const again = window.__visited.has(element);
  window.__visited.add(element);
  const box = element.getBoundingClientRect();
  const name = (element.getAttribute('aria-label') || element.textContent || '').trim().replace(/\\s+/g, ' ');
  return {again, x: box.x, y: box.y, width: box.width, height: box.height,
          what: `<${element.localName} class="${element.className}"> ${name.slice(0, 50)}`};
}"""


def focus_ring_problems(page, size: str) -> tuple[int, list[str]]:
    """Tab through the whole page; for each control, compare its surroundings focused and not focused."""
    width, height = VIEWPORTS[size]["width"], VIEWPORTS[size]["height"]
    problems, stops = [], 0
    for _ in range(1000):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
        if focused is None or focused["again"]:
            break
        stops += 1
        margin = 6  # the ring may be drawn outside the control
        left, top = max(0, focused["x"] - margin), max(0, focused["y"] - margin)
        right = min(width, focused["x"] + focused["width"] + margin)
        bottom = min(height, focused["y"] + focused["height"] + margin)
        if right - left < 1 or bottom - top < 1:
            problems.append(f"focused off the screen: {focused['what']}")
            continue
        clip = {"x": left, "y": top, "width": right - left, "height": bottom - top}
        with_focus = page.screenshot(clip=clip, animations="disabled")
        page.evaluate("() => document.activeElement.blur()")  # the next Tab still starts from here
        without_focus = page.screenshot(clip=clip, animations="disabled")
        if with_focus == without_focus:
            problems.append(f"focus changes no pixel: {focused['what']}")
    return stops, problems


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", sorted(VIEWPORTS))
@pytest.mark.parametrize("path", [LESSON_PAGE, HOME_PAGE])
def test_every_control_shows_its_focus(reader, server, path, size, scheme):
    page = visit(reader(size, scheme), server, path).page
    page.wait_for_load_state("networkidle")
    page.add_style_tag(content=STILL)
    stops, problems = focus_ring_problems(page, size)
    assert stops > 20, f"Tab reached only {stops} controls on {path}"
    assert not problems, f"{path} at {size} px, {scheme}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", LESSON_PAGES)
def test_each_toggle_is_named_by_what_it_opens(context, server, path):
    page = visit(context, server, path).page
    buttons = page.locator("button.toggle-button")
    expect(buttons.first).to_have_attribute("aria-label", re.compile(r"^Show "))
    names = buttons.evaluate_all("(all) => all.map((button) => button.getAttribute('aria-label'))")
    assert len(names) >= 5 and len(set(names)) == len(names), names
    assert "Toggle hidden content" not in names
    assert "Show the recorded run" in names
    for level in ("Foundation", "Practice", "Challenge"):
        assert f"Show solution: {level}" in names, names


def test_a_toggle_s_name_follows_its_state(context, server):
    page = visit(context, server, LESSON_PAGE).page
    names = page.locator("button.toggle-button").evaluate_all("(all) => all.map((b) => b.getAttribute('aria-label'))")
    assert names == [
        "Show “Compare your reasoning”",
        "Show the recorded run",
        "Show solution: Foundation",
        "Show hint 1: Practice",
        "Show solution: Practice",
        "Show hint 2: Challenge",
        "Show solution: Challenge",
        "Show “Answer and explanation”",
    ]
    _, button, content = solution_parts(page, 0)
    button.click()
    expect(content).to_be_visible()
    expect(button).to_have_attribute("aria-label", "Hide solution: Foundation")


#: Each chart's smallest text in CSS px as drawn on the page: the SVG is put inline at the size its <img>
#: has, and each <text>'s font size is scaled by the transform from its units to the screen.
CHART_TEXT = """async () => {
  const charts = [];
  for (const img of document.querySelectorAll('figure img')) {
    if (img.offsetParent === null) continue;  // the other theme's twin
    img.scrollIntoView();
    const shown = img.getBoundingClientRect().width;
    const source = await (await fetch(img.currentSrc || img.src)).text();
    const svg = new DOMParser().parseFromString(source, 'image/svg+xml').documentElement;
    const inline = document.importNode(svg, true);
    inline.setAttribute('width', shown);
    inline.removeAttribute('height');
    const host = document.createElement('div');
    host.style.cssText = 'position: absolute; left: 0; top: 0; visibility: hidden';
    host.appendChild(inline);
    document.body.appendChild(host);
    const sizes = [...inline.querySelectorAll('text')].filter((text) => text.textContent.trim()).map((text) => {
      const matrix = text.getScreenCTM();
      return parseFloat(getComputedStyle(text).fontSize) * Math.hypot(matrix.a, matrix.b);
    });
    host.remove();
    charts.push({src: img.getAttribute('src').split('/').pop(), shown, texts: sizes.length,
                 smallest: Math.min(...sizes), glyphPaths: /<use[^>]+#DejaVu/.test(source)});
  }
  return charts;
}"""
SMALLEST_CHART_TEXT_PX = 11


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("path", LESSON_PAGES)
def test_chart_text_is_text_and_readable_on_a_phone(reader, server, path, scheme):
    page = visit(reader("390", scheme), server, path).page
    charts = page.evaluate(CHART_TEXT)
    assert charts, f"{path} shows no chart"
    for chart in charts:
        print(f"\n{path} {scheme}: {chart['src']} shown {chart['shown']:.0f} px wide, smallest text "
              f"{chart['smallest']:.2f} px")  # fmt: skip
        assert chart["texts"] > 0 and not chart["glyphPaths"], f"{chart['src']}: text drawn as paths"
        assert chart["smallest"] >= SMALLEST_CHART_TEXT_PX, chart


@pytest.mark.parametrize("size", sorted(VIEWPORTS))
def test_a_newcomer_sees_where_to_start_and_the_phases_on_the_first_screen(reader, server, size, course_site):
    from conftest import COURSE

    page = visit(reader(size), server, HOME_PAGE).page
    height = VIEWPORTS[size]["height"]
    first = page.locator("article a[href*='lessons/']").first
    expect(first).to_have_text(COURSE[0].meta["title"])
    assert first.bounding_box()["y"] + first.bounding_box()["height"] <= height
    start = page.locator(".start-here")
    assert start.bounding_box()["y"] + start.bounding_box()["height"] <= height, "the phases fall below the fold"
    phases = sorted({(lesson.meta["phase"], lesson.meta["phase_title"]) for lesson in COURSE})
    listed = start.locator("ul.start-phases li").evaluate_all("(items) => items.map((li) => li.textContent)")
    assert [text.split(" · ")[0] for text in listed] == [f"Phase {n:02d}: {title}" for n, title in phases]
    assert all(re.search(r" · \d+ lessons? · about \d", text) for text in listed), listed


def test_lesson_ids_never_break_mid_word(reader, server):
    page = visit(reader("390"), server, HOME_PAGE).page
    lines = page.locator(".lesson-id").evaluate_all("(ids) => ids.map((id) => id.getClientRects().length)")
    assert lines and all(count == 1 for count in lines), lines


def test_the_home_page_outline_has_a_heading_per_phase(context, server):
    from conftest import COURSE

    page = visit(context, server, HOME_PAGE).page
    headings = page.locator("article h3").all_inner_texts()
    phases = sorted({(lesson.meta["phase"], lesson.meta["phase_title"]) for lesson in COURSE})
    shown = [text.strip().rstrip("¶").strip() for text in headings[: len(phases)]]
    assert shown == [f"Phase {n:02d}: {title}" for n, title in phases]


#: The lesson a newcomer searching for the word wants: its title is about the word.
SEARCHES = {"jit": "transforms-04", "vmap": "transforms-02"}


@pytest.mark.parametrize("word", sorted(SEARCHES))
def test_search_ranks_the_lesson_about_the_word_first_with_a_prose_snippet(context, server, word):
    from conftest import COURSE

    record = visit(context, server, f"search.html?q={word}")
    page = record.page
    expect(page.locator("#search-results p.search-summary")).to_contain_text("Search finished")
    page.wait_for_load_state("networkidle")
    (about,) = [lesson for lesson in COURSE if lesson.id == SEARCHES[word]]
    assert re.search(rf"\b{word}\b", about.meta["title"]), about.meta["title"]
    first = page.locator("ul.search > li").first
    assert urlsplit(first.locator("a").first.evaluate("(a) => a.href")).path == f"/lessons/{about.id}.html"
    snippet = first.locator("p.context").inner_text()
    assert word in snippet.lower() and len(snippet) > 60, snippet
    assert "Executed by this build" not in snippet and "UTC" not in snippet, snippet  # never the run stamp
    pages = [url for url in record.requests if re.search(r"/(lessons|docs)/[^/]+\.html", url)]
    assert pages == [], f"the search downloaded pages to make its snippets: {pages}"


def test_one_search_needs_no_page_downloaded(context, server):
    """The cost of one search, printed: the page, its assets, the index and the prose file, nothing else."""
    page = context.new_page()
    responses = []
    page.on("requestfinished", lambda request: responses.append(request))
    page.goto(server + "search.html?q=jit")
    expect(page.locator("#search-results p.search-summary")).to_contain_text("Search finished")
    page.wait_for_load_state("networkidle")
    sizes = {urlsplit(r.url).path: len(r.response().body()) for r in responses if r.response() is not None}
    print(f"\nOne search for 'jit': {len(responses)} requests, {sum(sizes.values()):,} bytes")
    assert "/_static/course-search.js" in sizes
    assert sum(sizes.values()) < 1024 * 1024, sizes


def test_code_names_are_not_underlined_in_the_dark_theme(reader, server):
    page = visit(reader("1280", "dark"), server, LESSON_PAGE).page
    underlined = page.locator("div.highlight span").evaluate_all(
        "(spans) => spans.filter((s) => getComputedStyle(s).textDecorationLine.includes('underline'))"
        ".map((s) => s.className + ' ' + s.textContent)"
    )
    assert underlined == []


@pytest.mark.parametrize("path", LESSON_PAGES)
def test_code_and_outputs_fit_their_boxes_at_1280(reader, server, path):
    """Code lines of at most 88 characters fit; outputs wrap; neither scrolls sideways on a laptop."""
    page = visit(reader("1280"), server, path).page
    wide = page.locator("div.cell_input pre, div.cell_output pre, div.highlight-python pre").evaluate_all(
        "(boxes) => boxes.filter((b) => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)"
        ".map((b) => b.textContent.split('\\n').reduce((a, l) => (l.length > a.length ? l : a), ''))"
    )
    assert wide == [], f"{path}: boxes that scroll sideways, longest lines: {wide}"
