"""The charts of ``save_figure``: a lesson's ``visual_data`` drawn as SVG by matplotlib, in both themes.

Equal inputs give equal bytes, the text stays text (a reader can zoom, select and hear it), and every size
is chosen so that the smallest label is still 11 CSS px on a 390 px phone. Runs in the kernel: no Sphinx.
"""

from __future__ import annotations

import io
import math
import re

from .colours import text_colour_on

#: The dark twin of figures/<stem>.svg is figures/<stem>-dark.svg.
DARK_SUFFIX = "-dark"
#: Background, ink and series colours per theme. The backgrounds are furo's page backgrounds, so a
#: figure sits on the page instead of glaring as a white card in the dark theme; the series colours
#: are the colour-blind-safe Okabe-Ito palette, lightened for the dark background.
LIGHT = {
    "background": "#ffffff",
    "ink": "#1b1c1e",
    "muted": "#5a5c63",
    "series": ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#8c8c8c", "#f0e442"],
}
DARK = {
    "background": "#131416",
    "ink": "#e6e6e6",
    "muted": "#a6a8ad",
    "series": ["#56b4e9", "#e69f00", "#2fc18f", "#e59ac3", "#7fa6ff", "#f28a4a", "#b0b0b0", "#f0e442"],
}
#: Grid cells: the same colours in both themes (the legend names them), with the text on each in
#: black or white, whichever contrasts more (at least 4.5:1 for every colour here).
_GRID_COLOURS = ["#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#999999"]


#: Every figure's size in inches. Pages show a figure at most 560 px wide (the lessons' ``:width:``) and
#: 358 px wide on a 390 px phone; at 5.6 inches (403.2 SVG units) the smallest text below is drawn at
#: 13 / 403.2 * 358 = 11.5 CSS px there. course.css gives the image box the same shape.
FIGURE_SIZE = (5.6, 4.0)
#: Text sizes in points (SVG units): the smallest (bar values, grid cells, legends), the axes, the title.
SMALL_TEXT, TEXT, TITLE_TEXT = 13, 14, 15
#: The font the layout is measured with (matplotlib ships it), then similar ones a reader may have: the SVG
#: names them all, and its text stays text, which a reader can zoom, select and have read aloud.
FONTS = ["DejaVu Sans", "Bitstream Vera Sans", "Verdana", "Arial", "Helvetica"]


def render_svg(visual_data: dict, *, title: str, theme: dict = LIGHT) -> bytes:
    """The SVG bytes for ``visual_data`` in one theme; equal inputs give equal bytes."""
    import matplotlib
    from matplotlib.figure import Figure

    kind = visual_data.get("kind")
    if kind not in ("bar", "line", "grid"):
        raise ValueError(f"visual_data['kind'] must be 'bar', 'line' or 'grid', got {kind!r}")
    style = {
        "svg.hashsalt": "jaxcourse",  # fixed element ids instead of random ones
        "svg.fonttype": "none",  # text as <text>, not glyph outlines: readable at any zoom
        "font.family": "sans-serif",
        "font.sans-serif": FONTS,
        "font.size": TEXT,
        "axes.titlesize": TITLE_TEXT,
        "legend.fontsize": SMALL_TEXT,
        "axes.edgecolor": theme["muted"],
        **dict.fromkeys(("figure.facecolor", "axes.facecolor", "savefig.facecolor"), theme["background"]),
        **dict.fromkeys(
            ("text.color", "axes.labelcolor", "xtick.color", "ytick.color", "legend.labelcolor"), theme["ink"]
        ),
    }
    with matplotlib.rc_context(style):
        # Constrained layout keeps the title, the axes' labels and a legend outside the plot in the figure.
        figure = Figure(figsize=FIGURE_SIZE, layout="constrained")
        axes = figure.add_subplot()
        if kind == "grid":
            _draw_grid(axes, visual_data, theme)
        else:
            _draw_series(axes, kind, visual_data, theme)
        # The title spans the figure, not the axes, so a narrow plot (a grid) never pushes it off the edge.
        figure.suptitle(_wrapped(title, _characters_across(FIGURE_SIZE[0] * 72, TITLE_TEXT)), fontsize=TITLE_TEXT)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return _compact(buffer.getvalue())


#: matplotlib names every font of the list on every <text>; the figure's style sheet names them once.
_TEXT_FONT = re.compile(r"font-family: [^;\"]*(?:; )?")
#: A rotation by zero degrees, which matplotlib writes on every upright <text>.
_NO_ROTATION = re.compile(r' transform="rotate\(-0 [-\d.]+ [-\d.]+\)"')


def _compact(svg: bytes) -> bytes:
    """The same drawing in fewer bytes: one font rule for all text, no zero-degree rotations.

    A grid of 8 x 8 labelled cells has about a hundred <text> elements; these two repeat on each
    (lessons' pages are held to 350 KB, figures included). Equal inputs still give equal bytes.
    """
    text = svg.decode("utf-8")
    fonts = ", ".join(f"'{font}'" for font in FONTS) + ", sans-serif"
    text = _NO_ROTATION.sub("", _TEXT_FONT.sub("", text))
    rule = "*{stroke-linejoin: round; stroke-linecap: butt}"
    if rule not in text:
        raise RuntimeError("matplotlib's SVG changed: its style sheet no longer holds " + rule)
    text = text.replace(rule, f"{rule}\n  text{{font-family: {fonts}}}", 1)
    return text.encode("utf-8")


def _characters_across(width_points: float, size: float) -> int:
    """About how many characters of DejaVu Sans at ``size`` points fit in ``width_points``."""
    return max(4, int(width_points / (0.6 * size)))


def _wrapped(text: str, characters: int, *, hyphens: bool = False) -> str:
    """``text`` in as few lines of at most ``characters`` as it needs, of even lengths.

    Lines break at spaces (and after hyphens, with ``hyphens``); a word longer than a line keeps a line
    of its own.
    """
    import textwrap

    def lines(width: int) -> list[str]:
        return textwrap.wrap(str(text), width, break_long_words=False, break_on_hyphens=hyphens)

    fewest = lines(characters)
    width = characters
    while width > 1 and len(lines(width - 1)) == len(fewest):
        width -= 1
    return "\n".join(lines(width)) or str(text)


def value_text(value: float) -> str:
    """A bar's label: a whole number as one, anything else to three significant digits."""
    value = float(value)
    return str(int(value)) if value.is_integer() else f"{value:.3g}"


def drawn(values: list[float]) -> list[float]:
    """``values`` rounded where no reader can see it: to the fourth significant digit of their range.

    XLA compiles for the host's vector instructions, so a sum can round differently on another CPU, in
    about the seventh digit (measured: AVX2 against AVX alone). matplotlib writes a path to six
    decimals of a point, so such a difference changed the committed figures on another machine. A
    range of 0.55 is drawn to 0.0001, a few hundredths of a point. NaN (a gap in a line) stays NaN.
    """
    finite = [value for value in values if math.isfinite(value)]
    spread = (max(finite) - min(finite) or max(map(abs, finite))) if finite else 0
    if not spread:
        return values
    digits = 3 - math.floor(math.log10(spread))
    return [round(value, digits) if math.isfinite(value) else value for value in values]


def _draw_series(axes, kind: str, visual_data: dict, theme: dict) -> None:
    from matplotlib.ticker import MaxNLocator

    labels = list(visual_data["labels"])
    series = list(visual_data["series"])
    colours = theme["series"]
    values = [float(y) for entry in series for y in entry["y"]]
    heights = iter(drawn(values))
    drawn_y = [[next(heights) for _ in entry["y"]] for entry in series]
    if kind == "bar":
        width = 0.8 / len(series)
        # The value on each bar, so a reader reads it instead of estimating it against the axis. A value
        # wider than its bar would run into its neighbours' values: then every value stands upright.
        texts = [[value_text(y) for y in entry["y"]] for entry in series]
        longest = max((len(text) for row in texts for text in row), default=1)
        bar_points = FIGURE_SIZE[0] * 72 * 0.8 * width / max(1, len(labels))
        upright = longest * 0.6 * SMALL_TEXT > bar_points
        for series_index, entry in enumerate(series):
            positions = [i + (series_index - (len(series) - 1) / 2) * width for i in range(len(labels))]
            colour = colours[series_index % len(colours)]
            bars = axes.bar(positions, drawn_y[series_index], width=width, label=entry.get("label"), color=colour)
            for bar_index, bar in enumerate(bars):
                bar.set_gid(f"bar-{series_index}-{bar_index}")
            axes.bar_label(
                bars, labels=texts[series_index], padding=2, fontsize=SMALL_TEXT, rotation=90 if upright else 0
            )
        # Each bar's name wraps within its share of the width, so neighbouring names never overlap.
        share = FIGURE_SIZE[0] * 72 * 0.8 / max(1, len(labels))
        names = [_wrapped(label, _characters_across(share, TEXT), hyphens=True) for label in labels]
        axes.set_xticks(range(len(labels)), names)
        # Room beyond the longest bar for its value: a line of text, or an upright value's length.
        plot_points = FIGURE_SIZE[1] * 72 * 0.5
        axes.margins(y=max(0.15, (longest * 0.6 * SMALL_TEXT + 6) / plot_points) if upright else 0.15)
    else:
        for series_index, entry in enumerate(series):
            (line,) = axes.plot(
                labels,
                drawn_y[series_index],
                marker=entry.get("marker", ""),
                label=entry.get("label"),
                color=colours[series_index % len(colours)],
                linewidth=2,
            )
            line.set_gid(f"line-{series_index}")
    axes.set_ylabel(visual_data["ylabel"])
    if visual_data.get("integer_y", all(value.is_integer() for value in values)):  # counts: no fractional ticks
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    if all(isinstance(label, (int, float)) and float(label).is_integer() for label in labels) and kind == "line":
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    if visual_data.get("xlabel"):
        axes.set_xlabel(visual_data["xlabel"])
    if len(series) > 1 or kind == "line":
        _legend_below(axes, [str(entry.get("label", "")) for entry in series])
    axes.spines[["top", "right"]].set_visible(False)


def _draw_grid(axes, visual_data: dict, theme: dict) -> None:
    from matplotlib.patches import Patch, Rectangle

    values = [list(row) for row in visual_data["values"]]
    labels = visual_data.get("cell_labels")
    names = list(visual_data.get("legend") or [])
    rows, columns = len(values), len(values[0])
    for row_index, row in enumerate(values):
        if len(row) != columns:
            raise ValueError("visual_data['values'] must be a rectangle")
        for column_index, value in enumerate(row):
            colour = _GRID_COLOURS[int(value) % len(_GRID_COLOURS)]
            cell = Rectangle(
                (column_index, row_index), 1, 1, facecolor=colour, edgecolor=theme["background"], linewidth=1.5
            )
            cell.set_gid(f"cell-{row_index}-{column_index}")
            cell.set_clip_on(False)  # inside the axes by construction: no clip path to write per cell
            axes.add_patch(cell)
            text = str(labels[row_index][column_index]) if labels else str(value)
            axes.text(
                column_index + 0.5,
                row_index + 0.5,
                text,
                ha="center",
                va="center",
                fontsize=SMALL_TEXT,
                color=text_colour_on(colour),
            )
    axes.set_xlim(0, columns)
    axes.set_ylim(rows, 0)  # row 0 at the top, as arrays print
    axes.set_aspect("equal")
    axes.set_xticks([i + 0.5 for i in range(columns)], [str(i) for i in range(columns)])
    axes.set_yticks([i + 0.5 for i in range(rows)], [str(i) for i in range(rows)])
    axes.tick_params(length=0)
    axes.set_xlabel(visual_data.get("xlabel", "column"))
    axes.set_ylabel(visual_data.get("ylabel", "row"))
    axes.spines[:].set_visible(False)
    if names:
        used = sorted({int(value) for row in values for value in row})
        handles = [Patch(facecolor=_GRID_COLOURS[i % len(_GRID_COLOURS)], label=names[i]) for i in used]
        _legend_below(axes, [names[i] for i in used], handles=handles)


def _legend_below(axes, labels: list[str], handles=None) -> None:
    """The legend under the plot, where it covers no bar, line or value: as many columns as fit."""
    longest = max((len(label) for label in labels), default=1)
    # A column: the label, its 2-em handle and 0.8-em gap, and 2 em before the next column.
    column = (longest * 0.6 + 4.8) * SMALL_TEXT
    columns = max(1, min(len(labels), int(FIGURE_SIZE[0] * 72 * 0.95 / column)))
    extra = {"handles": handles} if handles is not None else {}
    axes.figure.legend(frameon=False, loc="outside lower center", ncols=columns, **extra)
