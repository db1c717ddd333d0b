"""Read and validate a page's YAML front matter: ``lesson:`` metadata and ``execution:`` settings.

Shared by the Sphinx extension and the lesson checker; nothing here imports Sphinx, so the checker stays fast.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from pathlib import Path

import yaml

_CPU_DEVICES = (
    "simulated CPU devices the {}'s kernel starts with, 1 to 64 "
    "(sets XLA_FLAGS=--xla_force_host_platform_device_count before JAX starts)"
)
#: Keys every lesson declares under ``lesson:``, with their types and meaning.
LESSON_KEYS: dict[str, tuple[type, str]] = {
    "id": (str, "lesson id, equal to the file name without .md (transforms-04)"),
    "title": (str, "the page title, equal to the lesson's '# ' heading"),
    "phase": (int, "phase number the lesson belongs to (2)"),
    "phase_title": (str, "phase name shown on the home page (JAX transformations)"),
    "order": (int, "position of the lesson inside its phase (4)"),
    "minutes": (int, "estimated study time in minutes (55)"),
    "device": (str, "device the lesson is written for: CPU, GPU or TPU"),
}
#: Keys a lesson may declare under ``lesson:``.
OPTIONAL_LESSON_KEYS: dict[str, tuple[type, str]] = {"cpu_devices": (int, _CPU_DEVICES.format("lesson"))}
#: Settings any executed page may declare under ``execution:`` (a lesson or a notebook page in docs/).
EXECUTION_KEYS: dict[str, tuple[type, str]] = {
    "cpu_devices": (int, _CPU_DEVICES.format("page")),
    "timeout": (int, "seconds each cell may run; default: nb_execution_timeout in conf.py"),
    "output_limit": (int, "bytes of output one cell may show; default: 1000000"),
    "stderr": (
        str,
        "what a cell's stderr does: 'fail' the build at the cell (a lesson's only choice), or 'show' it on the "
        "page and list it as a warning in the execution report (the default for pages under docs/)",
    ),
}
STDERR_CHOICES = ("fail", "show")
#: Execution keys other tools read from notebook metadata, which the course does not allow.
REFUSED_EXECUTION_KEYS = {
    "allow_errors": (
        "errors are never allowed page-wide: a cell that shows an error on purpose gets ':raises: ErrorName' "
        "(or, on a page from elsewhere, myst-nb's raises-exception tag)"
    ),
}
#: A Python kernel's name, as notebooks written elsewhere give it: python3, python, python3.11.
_PYTHON_KERNEL_NAME = re.compile(r"^python[\d.]*$", re.I)
#: Why a page may not choose each of myst-nb's execution modes ('mystnb: {execution_mode: ...}'); any other
#: mode gets REFUSED_MYSTNB_KEYS["execution_mode"].
REFUSED_EXECUTION_MODES = {
    "off": "every executed page runs all its cells; show code that must not run as a code block (```python)",
    "inline": (
        "the build runs a page's cells in its own kernel before the page is rendered, so the {eval} roles and "
        "directives that inline mode serves have no kernel to ask; print the value from a cell, or glue it "
        "(myst_nb.glue) and paste it with {glue:text}"
    ),
}
#: myst-nb's own per-page execution settings ('mystnb:' in the front matter) that would break a course promise.
REFUSED_MYSTNB_KEYS = {
    "execution_mode": (
        "the build runs every page the same way (nox -s docs runs each afresh, nox -s lesson reuses a run whose code "
        "and environment are unchanged)"
    ),
    "execution_in_temp": "kernels always run in a scratch folder, so a relative path never writes into the checkout",
    "execution_cache_path": "the build keeps one execution cache, under _build/ (nb_execution_cache_path in conf.py)",
    "execution_allow_errors": REFUSED_EXECUTION_KEYS["allow_errors"],
    "execution_raise_on_error": "a failing cell always fails the build, at its line",
    "execution_show_tb": "a failure is reported at its line, and its whole traceback saved under reports/",
}
DEFAULT_OUTPUT_LIMIT = 1_000_000
CPU_DEVICES_RANGE = range(1, 65)
DEVICES = ("CPU", "GPU", "TPU")
TEMPLATE = "lessons/_template.md"


@dataclasses.dataclass(frozen=True)
class Problem:
    """One thing wrong with a lesson, located at a line of its file (1-based)."""

    line: int
    message: str


@dataclasses.dataclass
class FrontMatter:
    """The parsed front matter block and where it sits in the file."""

    data: dict
    line_count: int  # number of lines from the opening ``---`` to the closing ``---``, inclusive
    key_lines: dict[str, int]  # 1-based line of each top-level key and each ``lesson:`` key

    @property
    def lesson(self) -> dict:
        value = self.data.get("lesson")
        return value if isinstance(value, dict) else {}  # not a mapping: validate() says so, at its line

    @property
    def execution(self) -> dict:
        value = self.data.get("execution")
        return value if isinstance(value, dict) else {}

    def line_of(self, key: str) -> int:
        """The line of ``key`` ('lesson.id'), else of its mapping ('lesson'), else 1."""
        return self.key_lines.get(key, self.key_lines.get(key.split(".")[0], 1))


class FrontMatterError(ValueError):
    """Raised when a file has no readable front matter at all."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


def front_matter_end(lines: list[str]) -> int:
    """The 1-based line of the front matter's closing ``---``; 0 without a closed block at the top."""
    if lines and lines[0].strip() == "---":
        return next((i + 1 for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
    return 0


def split_front_matter(text: str) -> tuple[str, int]:
    """Return the YAML text between the ``---`` fences and the block's line count."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError(1, "a lesson must start with a '---' front matter block")
    end = front_matter_end(lines)
    if not end:
        raise FrontMatterError(1, "the front matter block opened on line 1 is never closed with '---'")
    return "\n".join(lines[1 : end - 1]), end


def parse(text: str) -> FrontMatter:
    """Parse the front matter of a lesson's text; raise FrontMatterError if unreadable."""
    yaml_text, line_count = split_front_matter(text)
    loader = yaml.SafeLoader(yaml_text)  # not libyaml's: its messages and lines differ, and it may be absent
    try:  # one pass: the node tree gives each key's line, and the data is built from it
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.YAMLError as error:
        # The construct's start (context) is where the author should look; else the problem.
        mark = getattr(error, "context_mark", None) or getattr(error, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1  # +1 for 1-based, +1 for '---'
        problem = getattr(error, "problem", None) or str(error)
        raise FrontMatterError(line, f"front matter is not valid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise FrontMatterError(1, "front matter must be a YAML mapping of keys to values")
    key_lines: dict[str, int] = {}
    for key_node, value_node in root.value:
        key_lines[key_node.value] = key_node.start_mark.line + 2
        if isinstance(value_node, yaml.MappingNode):  # lesson.id, execution.timeout, ...
            for sub_key, _ in value_node.value:
                key_lines[f"{key_node.value}.{sub_key.value}"] = sub_key.start_mark.line + 2
    return FrontMatter(data=data, line_count=line_count, key_lines=key_lines)


def validate(front: FrontMatter, path: Path) -> list[Problem]:
    """Every problem with a parsed front matter block; an empty list means complete."""
    problems: list[Problem] = []
    if "kernelspec" not in front.data:
        problems.append(Problem(1, f"front matter lacks 'kernelspec' (copy it from {TEMPLATE})"))
    lesson = front.data.get("lesson")
    if not isinstance(lesson, dict):
        message = f"front matter lacks the 'lesson:' mapping (copy it from {TEMPLATE}, or run nox -s new)"
        misspelt = closest("lesson", [key for key in front.data if key != "lesson"])
        if misspelt:
            message += f"; did you mean 'lesson' for '{misspelt}'?"
        problems.append(Problem(front.line_of(misspelt or "lesson"), message))
        return problems

    def add(key: str, message: str) -> None:
        problems.append(Problem(front.line_of(f"lesson.{key}"), message))

    known = {**LESSON_KEYS, **OPTIONAL_LESSON_KEYS}
    unknown = sorted(set(lesson) - set(known))
    misspelt = {closest(key, known) for key in unknown}
    for key, (kind, meaning) in known.items():
        if key not in lesson:
            if key in LESSON_KEYS and key not in misspelt:  # a misspelling is reported once, as an unknown key
                add(key, f"'lesson.{key}' is missing: {meaning}")
        elif not _is_a(lesson[key], kind):
            add(key, f"'lesson.{key}' must be {kind.__name__}, got {lesson[key]!r}: {meaning}")
    if _is_a(lesson.get("cpu_devices"), int) and lesson["cpu_devices"] not in CPU_DEVICES_RANGE:
        add("cpu_devices", _cpu_devices_range("lesson.cpu_devices", lesson["cpu_devices"]))
    for key in unknown:
        add(key, f"unknown key 'lesson.{key}'{did_you_mean(key, known)}")
    if isinstance(lesson.get("id"), str) and lesson["id"] != path.stem:
        add("id", f"'lesson.id' is {lesson['id']!r} but the file is named {path.name!r}")
    if isinstance(lesson.get("device"), str) and lesson["device"] not in DEVICES:
        add("device", f"'lesson.device' must be one of {', '.join(DEVICES)}")
    for key in ("minutes", "order", "phase"):
        if _is_a(lesson.get(key), int) and lesson[key] <= 0:
            add(key, f"'lesson.{key}' must be positive")
    return problems + validate_execution(front)


@dataclasses.dataclass(frozen=True)
class ExecutionSettings:
    """How one page executes, from its front matter (``execution:``, and ``lesson.cpu_devices``)."""

    cpu_devices: int | None = None
    timeout: int | None = None  # None: the site's nb_execution_timeout (or myst-nb's per-page setting)
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    stderr: str = "fail"  # a lesson's; pages under docs/ show it by default (execution_settings)


def _is_a(value, kind: type) -> bool:
    """``isinstance``, except that YAML's true and false are not numbers."""
    return isinstance(value, kind) and not isinstance(value, bool)


def is_python_kernel(spec: dict) -> bool:
    """Whether a page's kernelspec asks for Python: its language says so, or else its name or display name."""
    if spec.get("language") is not None:
        return str(spec["language"]).lower() == "python"
    return (
        bool(_PYTHON_KERNEL_NAME.match(str(spec.get("name", ""))))
        or "python" in str(spec.get("display_name", "")).lower()
    )


def kernel_problems(front: FrontMatter) -> list[Problem]:
    """A page that asks for a kernel of another language: the build runs every page in its own Python kernel."""
    spec = front.data.get("kernelspec")
    if not isinstance(spec, dict) or is_python_kernel(spec):
        return []
    language = f" ({spec['language']})" if spec.get("language") else ""
    message = (
        f"this page asks for the Jupyter kernel {spec.get('name')!r}{language}, and the build runs every page in "
        "its own Python kernel; a Python page says 'kernelspec: {name: python3}'"
    )
    return [Problem(front.line_of("kernelspec"), message)]


def validate_execution(front: FrontMatter) -> list[Problem]:
    """Every problem with an executed page's kernel, its ``execution:`` settings, and its refused ``mystnb:`` ones."""
    mystnb = front.data.get("mystnb") if isinstance(front.data.get("mystnb"), dict) else {}
    problems = kernel_problems(front) + [
        Problem(front.line_of(f"mystnb.{key}"), f"'mystnb.{key}' is not a course setting: {_refusal(key, mystnb[key])}")
        for key in mystnb
        if key in REFUSED_MYSTNB_KEYS
    ]
    if "execution" not in front.data:
        return problems
    if not isinstance(front.data["execution"], dict):
        return [*problems, Problem(front.line_of("execution"), "'execution:' must be a mapping of settings to values")]
    for key, value in front.execution.items():
        line = front.line_of(f"execution.{key}")
        if key in REFUSED_EXECUTION_KEYS:
            problems.append(Problem(line, f"'execution.{key}' is not a course setting: {REFUSED_EXECUTION_KEYS[key]}"))
        elif key not in EXECUTION_KEYS:
            suggestion = did_you_mean(key, EXECUTION_KEYS) or f"; the settings are {', '.join(EXECUTION_KEYS)}"
            problems.append(Problem(line, f"unknown key 'execution.{key}'{suggestion}"))
        elif key == "stderr":
            if value not in STDERR_CHOICES:
                choices = " or ".join(repr(choice) for choice in STDERR_CHOICES)
                problems.append(Problem(line, f"'execution.stderr' must be {choices}, got {value!r}"))
            elif value == "show" and "lesson" in front.data:
                message = (
                    "a lesson fails on stderr, so that a deprecation or a warning is fixed where it starts; hide "
                    "output the reader need not see with ':tags: [remove-stderr]' on its cell"
                )
                problems.append(Problem(line, message))
        elif not _is_a(value, int):
            problems.append(Problem(line, f"'execution.{key}' must be int, got {value!r}: {EXECUTION_KEYS[key][1]}"))
        elif key == "cpu_devices" and value not in CPU_DEVICES_RANGE:
            problems.append(Problem(line, _cpu_devices_range("execution.cpu_devices", value)))
        elif value <= 0:
            # myst-nb and nbclient read a timeout of -1 or 0 as none; a build keeps one, or a hung cell hangs it.
            never = ": a build never runs a cell without a time limit" if key == "timeout" else ""
            problems.append(Problem(line, f"'execution.{key}' must be positive{never}"))
    both = front.lesson.get("cpu_devices"), front.execution.get("cpu_devices")
    if None not in both and both[0] != both[1]:
        problems.append(
            Problem(front.line_of("execution.cpu_devices"), "'execution.cpu_devices' differs from 'lesson.cpu_devices'")
        )
    return problems


def _refusal(key: str, value: object) -> str:
    """Why a page may not set myst-nb's ``key``: for the execution mode, why not this one."""
    if key == "execution_mode" and isinstance(value, str) and value in REFUSED_EXECUTION_MODES:
        return REFUSED_EXECUTION_MODES[value]
    return REFUSED_MYSTNB_KEYS[key]


def _cpu_devices_range(key: str, value) -> str:
    return f"'{key}' must be from {CPU_DEVICES_RANGE.start} to {CPU_DEVICES_RANGE.stop - 1}, got {value}"


def validate_notebook_page(front: FrontMatter) -> list[Problem]:
    """Every problem with the front matter of an executed page that is not a lesson (docs/)."""
    if "lesson" not in front.data:
        return validate_execution(front)
    message = (
        "'lesson:' is for the lessons in lessons/, and this page is not one: its phase, order and anatomy would be "
        "ignored; put execution settings (cpu_devices, timeout, output_limit) under 'execution:'"
    )
    return [Problem(front.line_of("lesson"), message), *validate_execution(front)]


def execution_settings(front: FrontMatter) -> ExecutionSettings:
    """The settings of a page whose front matter passed validation."""
    execution = front.execution
    return ExecutionSettings(
        cpu_devices=execution.get("cpu_devices", front.lesson.get("cpu_devices")),
        timeout=execution.get("timeout"),
        output_limit=execution.get("output_limit", DEFAULT_OUTPUT_LIMIT),
        stderr="fail" if "lesson" in front.data else execution.get("stderr", "show"),
    )


def closest(word: str, choices) -> str | None:
    """The choice most like `word`, for "did you mean" hints, or None."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, choices) -> str:
    """``; did you mean 'choice'?`` for the choice most like ``word``, or nothing."""
    match = closest(word, choices)
    return f"; did you mean {match!r}?" if match else ""


def read_lesson(path: Path) -> tuple[FrontMatter | None, list[Problem]]:
    """Parse and validate one lesson file."""
    try:
        front = parse(path.read_text(encoding="utf-8"))
    except FrontMatterError as error:
        return None, [Problem(error.line, error.message)]
    return front, validate(front, path)
