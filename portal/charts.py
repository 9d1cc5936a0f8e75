"""Geometry for the health page's inline SVG charts (no JavaScript chart library).

The health selector returns numbers per day; this module turns one Chart into coordinates that
``templates/portal/review/_chart.html`` draws: stacked bars for counts, lines for latency and
rates. Each shape carries a title so screen readers and hover tooltips read the value. A line
has no point on a day without a value (None: no deletion completed, no retrieval made), and is
broken there: it drew such days as 0 s and 0 %.
"""

import math

WIDTH = 640
# A phone's chart (portal.css shows it under 560 px): drawn ~310 px wide on a 375 px screen,
# the 640-wide one set its 14-unit labels at ~7 px; in 400 units they read at ~11 px.
NARROW_WIDTH = 400
HEIGHT = 230
LEFT = 48
# Room for half of the last day's label ("03 Dec", centred under its bar) at the axes' 14 px.
RIGHT = 24
TOP = 14
BOTTOM = 30
LINE_UNITS = {"seconds", "%"}


def _nice_ceiling(value: float) -> float:
    """Return a round axis maximum at or above ``value`` (1, 2, 2.5, 5 x 10^n)."""
    if value <= 0:
        return 1
    exponent = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        ceiling = step * 10**exponent
        if ceiling >= value:
            return ceiling
    return 10 ** (exponent + 1)


def _count_steps():
    """Yield 1, 2, 5, 10, 20, 50, ...: tick steps that keep count axes in whole numbers."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            yield step * scale
        scale *= 10


def _count_axis(peak: float) -> tuple[int, int]:
    """Return (axis maximum, intervals) for counts: 4 or 5 whole-number intervals, whichever
    reaches ``peak`` with the lowest maximum."""
    options = []
    for intervals in (4, 5):
        step = next(step for step in _count_steps() if step * intervals >= peak)
        options.append((step * intervals, intervals))
    return min(options)


def _label(value: float, unit: str = "") -> str:
    text = f"{value:g}" if value < 1000 else f"{value / 1000:g}k"
    return f"{text}%" if unit == "%" else text


def figure(value: float) -> str:
    """Return a bar's or a point's value as its title says it, in full: a count with
    thousands separated ("1,234,567"), a measure to two decimals at most ("0.37", "1,000,000.5").
    ``:g`` wrote "1.23457e+06", which screen readers and tooltips read (stop 50's audit)."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _line_axis(peak: float, unit: str) -> tuple[float, int]:
    """Return (axis maximum, intervals) for a line: a round maximum cut into steps that are
    round too (0.1 of 0.5, not 0.125 shown as 0.12), a rate's axis at least 10 %."""
    y_max = _nice_ceiling(peak)
    if unit == "%":
        y_max = max(y_max, 10)
    mantissa = round(y_max / 10 ** math.floor(math.log10(y_max)), 2)
    return y_max, 4 if mantissa in (1, 2) else 5


def chart_geometry(chart, width: int = WIDTH) -> dict:
    """Return the shapes, axes and legend of one health chart, ``width`` units wide."""
    kind = "line" if chart.unit in LINE_UNITS else "bars"
    days = chart.days
    plot_w = width - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM
    count = max(len(days), 1)
    slot = plot_w / count
    if kind == "bars":
        peak = max((sum(s.values[i] for s in chart.series) for i in range(len(days))), default=0)
    else:
        peak = max((v for s in chart.series for v in s.values if v is not None), default=0)
    if kind == "bars":
        y_max, intervals = _count_axis(peak)
    else:
        y_max, intervals = _line_axis(peak, chart.unit)

    def y_of(value: float) -> float:
        return round(TOP + plot_h - (value / y_max) * plot_h, 1)

    ticks = [
        {
            "y": y_of(y_max * step / intervals),
            "label": _label(round(y_max * step / intervals, 6), chart.unit),
        }
        for step in range(intervals + 1)
    ]
    # A day's label ("03 Dec") is ~45 units wide at 14: every day's, or every 2nd, 5th, ...
    # counted back from the last, so that labels stand at least 64 units apart.
    every = next(step for step in (1, 2, 5, 10, 15, 30, math.inf) if slot * step >= 64)
    xlabels = [
        {"x": round(LEFT + slot * (i + 0.5), 1), "label": day.strftime("%d %b")}
        for i, day in enumerate(days)
        if (count - 1 - i) % every == 0
    ]
    legend = [
        {"css": f"s{position}", "label": series.label}
        for position, series in enumerate(chart.series)
    ]
    shapes: dict = {"bars": [], "lines": []}
    if kind == "bars":
        bar_w = round(max(slot * 0.62, 2), 1)
        for i, day in enumerate(days):
            base = 0.0
            for position, series in enumerate(chart.series):
                value = series.values[i]
                if not value:
                    continue
                top = y_of(base + value)
                shapes["bars"].append(
                    {
                        "x": round(LEFT + slot * i + (slot - bar_w) / 2, 1),
                        "y": top,
                        "w": bar_w,
                        "h": round(y_of(base) - top, 1),
                        "css": f"s{position}",
                        "title": f"{day:%d %b}: {figure(value)} {series.label}",
                    }
                )
                base += value
    else:
        for position, series in enumerate(chart.series):
            dots, segments, run = [], [], []
            for i, value in enumerate(series.values):
                if value is None:  # no value that day: the line breaks
                    segments, run = segments + [run] if run else segments, []
                    continue
                dot = {
                    "x": round(LEFT + slot * (i + 0.5), 1),
                    "y": y_of(value),
                    "title": f"{days[i]:%d %b}: {figure(value)} {chart.unit} ({series.label})",
                }
                dots.append(dot)
                run.append(f"{dot['x']},{dot['y']}")
            if run:
                segments.append(run)
            shapes["lines"].append(
                {
                    "css": f"s{position}",
                    "segments": [" ".join(points) for points in segments if len(points) > 1],
                    "dots": dots,
                }
            )
    return {
        "kind": kind,
        "width": width,
        "height": HEIGHT,
        "left": LEFT,
        "right": width - RIGHT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "ticks": ticks,
        "xlabels": xlabels,
        "xlabel_y": HEIGHT - BOTTOM + 18,
        "legend": legend,
        "unit": chart.unit,
        **shapes,
    }
