"""Server-rendered SVG charts: coordinates, axis labels and the same values as table rows.

The templates draw the SVG (templates/dashboard/_chart.html, _bars.html) with colours from the
stylesheet's variables, so both themes read; every chart has its values as a table too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo

from django.utils import formats, timezone, translation

from dashboard.volcano.history import downsample

WIDTH, HEIGHT = 640, 160
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 4, 4, 8, 18


@dataclass(frozen=True)
class Line:
    label: str
    css: str  # "a" (the main series), "b", "c": the stylesheet colours chart-line-<css>
    paths: list[str]  # SVG polyline "x,y x,y" runs; a gap (no value) starts a new run
    dashed: bool = False


@dataclass(frozen=True)
class Chart:
    title: str
    lines: list[Line]
    y_max: str
    x_ticks: list[tuple[float, str]]
    headers: list[str]
    rows: list[list[str]]  # the values per time, for the table
    width: int = WIDTH
    height: int = HEIGHT
    plot_bottom: float = HEIGHT - PAD_BOTTOM
    empty: bool = False
    caption: str = field(default="")


def _clock(span: timedelta) -> Callable[[datetime], str]:
    """A labeller of clock times in the viewer's time zone, as precise as ``span`` (the window)
    needs: seconds in a window under 10 minutes (a young Job's timeline), the date in one over a
    day. The zone and language are read once (each read costs ~10 us, a chart labels hundreds)."""
    if span < timedelta(minutes=10):
        precision = "seconds"
    elif span <= timedelta(days=1):
        precision = "minutes"
    else:
        precision = "date"
    zone, language = timezone.get_current_timezone(), translation.get_language()
    return lambda at: _clock_label(at, precision, zone, language)


@functools.lru_cache(maxsize=4096)
def _clock_label(at: datetime, precision: str, zone: tzinfo, language: str | None) -> str:
    """What Django's ``H:i:s``, ``H:i`` or ``M j H:i`` format writes for ``at`` in ``zone``; only
    the month's name needs Django's formatting (its translation). Remembered: a page's charts
    label the same bucket times in every chart and table (hundreds of labels a page, each a time
    zone conversion and a format)."""
    local = timezone.localtime(at, zone)
    if precision == "seconds":
        return local.strftime("%H:%M:%S")
    if precision == "minutes":
        return local.strftime("%H:%M")
    return f"{_month_abbr(local.month, language)} {local.day} {local:%H:%M}"


@functools.lru_cache(maxsize=64)
def _month_abbr(month: int, language: str | None) -> str:
    return formats.date_format(datetime(2000, month, 1), "M")


def line_chart(
    title: str,
    series: Sequence[tuple[str, str, Sequence[tuple[datetime, float | None]], bool]],
    since: datetime,
    until: datetime,
    fmt: Callable[[float], str],
    buckets: int = 96,
) -> Chart:
    """A chart of ``series`` [(label, css, points, dashed)] over [since, until), each averaged
    into ``buckets`` spans (at most one a minute: the table labels them by the minute, so each
    label names one span); ``fmt`` writes a value (the y axis maximum, the table)."""
    buckets = max(1, min(buckets, int((until - since).total_seconds() // 60)))
    sampled = [
        (label, css, downsample(points, since, until, buckets), dashed)
        for label, css, points, dashed in series
    ]
    known = [v for _l, _c, pts, _d in sampled for _t, v in pts if v is not None]
    top = max(known, default=0.0) or 1.0
    plot_w = WIDTH - PAD_LEFT - PAD_RIGHT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    lines = []
    for label, css, pts, dashed in sampled:
        runs: list[str] = []
        run: list[str] = []
        for i, (_at, value) in enumerate(pts):
            if value is None:
                if run:
                    runs.append(" ".join(run))
                run = []
                continue
            x = PAD_LEFT + plot_w * (i + 0.5) / buckets
            y = PAD_TOP + plot_h * (1 - value / top)
            run.append(f"{x:.1f},{y:.1f}")
        if run:
            runs.append(" ".join(run))
        # A single point draws no line: repeat it so it shows as a dot-sized stroke.
        runs = [r if " " in r else f"{r} {r}" for r in runs]
        lines.append(Line(label, css, runs, dashed))
    span = until - since
    clock = _clock(span)
    ticks = [(PAD_LEFT + plot_w * f, clock(since + span * f)) for f in (0.0, 0.25, 0.5, 0.75, 1.0)]
    rows = []
    for i in range(buckets):
        values = [pts[i][1] for _l, _c, pts, _d in sampled]
        if any(v is not None for v in values):
            at = sampled[0][2][i][0]
            rows.append([clock(at), *("—" if v is None else fmt(v) for v in values)])
    return Chart(
        title=title,
        lines=lines,
        y_max=fmt(top) if known else "",
        x_ticks=ticks,
        headers=[label for label, _c, _p, _d in series],
        rows=rows,
        empty=not known,
    )


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str
    width: float  # 0..100, of the largest bar
    y: int  # the bar's top in the chart's coordinates


@dataclass(frozen=True)
class Bars:
    items: list[Bar]
    height: int  # of the chart's coordinates (BAR_STEP per bar)


BAR_STEP = 12


def bars(items: Sequence[tuple[str, float, str]]) -> Bars:
    """Horizontal bars [(label, value, text)], widths relative to the largest value."""
    top = max((v for _l, v, _t in items), default=0.0) or 1.0
    out = [
        Bar(label, value, text, round(100 * max(value, 0.0) / top, 1), i * BAR_STEP + 2)
        for i, (label, value, text) in enumerate(items)
    ]
    return Bars(out, max(1, len(out)) * BAR_STEP)


def sparkline(points: Sequence[tuple[datetime, float | None]], since: datetime, until: datetime) -> str:
    """An 80x20 SVG polyline of ``points`` (gaps skipped), "" when there is no value."""
    sampled = downsample(points, since, until, 48)
    known = [v for _t, v in sampled if v is not None]
    if not known:
        return ""
    top = max(known) or 1.0
    coords = [
        f"{80 * (i + 0.5) / 48:.1f},{18 - 16 * v / top + 1:.1f}"
        for i, (_t, v) in enumerate(sampled)
        if v is not None
    ]
    return " ".join(coords) if len(coords) > 1 else f"{coords[0]} {coords[0]}"


@dataclass(frozen=True)
class Segment:
    x: float  # 0..100 of the window
    width: float
    css: str  # "pending" | "scheduled" | "running" | "ok" | "failed"
    label: str


@dataclass(frozen=True)
class GanttRow:
    label: str  # the pod's name
    note: str
    segments: list[Segment]
    times: list[str]  # the start of each part of ``rows`` in order ("—": none), then the last one's end


@dataclass(frozen=True)
class GanttTick:
    x: float  # 0..100 of the window
    text: str  # a clock time in the viewer's time zone (the line charts' axis)
    anchor: str  # SVG text-anchor: the first tick starts at the edge, the last ends there
    minor: bool  # a tick between others, left out on narrow screens


@dataclass(frozen=True)
class Gantt:
    rows: list[GanttRow]
    ticks: list[GanttTick]


GANTT_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def gantt(
    rows: Sequence[tuple[str, str, Sequence[tuple[datetime | None, datetime | None, str, str]]]],
    since: datetime,
    until: datetime,
) -> Gantt:
    """Rows [(label, note, [(start, end, css, label)])] as segments placed in [since, until]
    (0..100 across); an open end runs to ``until``. With the time axis: clock times at GANTT_TICKS
    of the window, as the line charts write them."""
    span = max((until - since).total_seconds(), 1.0)
    window = until - since
    clock = _clock(window)

    def pos(at: datetime) -> float:
        return max(0.0, min(100.0, 100 * (at - since).total_seconds() / span))

    out = []
    for label, note, parts in rows:
        segments = []
        times = [clock(start) if start else "—" for start, _end, _css, _text in parts]
        last_end = parts[-1][1] if parts else None
        times.append(clock(last_end) if last_end else "—")
        for start, end, css, text in parts:
            if start is None:
                continue
            x0, x1 = pos(start), pos(end or until)
            segments.append(Segment(round(x0, 2), round(max(x1 - x0, 0.3), 2), css, text))
        out.append(GanttRow(label, note, segments, times))
    ticks = [
        GanttTick(
            100 * f,
            clock(since + window * f),
            "start" if f == 0 else "end" if f == 1 else "middle",
            f not in (0.0, 0.5, 1.0),
        )
        for f in GANTT_TICKS
    ]
    return Gantt(out, ticks)
