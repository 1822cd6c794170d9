"""A JobFlow's dependency graph and running histories laid out for server-rendered SVG.

The graph is drawn left to right in layers (``volcano.jobflows.depths``): a flow sits one column
right of its deepest dependency; edges run from a dependency's right edge to the dependent's left
edge, dashed while the dependency is unmet. Coordinates are SVG user units; the template only
draws what this module computes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from dashboard.presenters import phases as badges
from dashboard.presenters.phases import Phase
from dashboard.volcano import jobflows as vf

BOX_W, BOX_H = 180, 50
GAP_X, GAP_Y = 70, 22
PAD = 10
# How far right of a box an edge drawn around it bulges.
LOOP_OUT = 40
# Names longer than this are cut in the box (the full name is in its <title> and the table).
LABEL_CHARS = 22
STATE_PX = 160  # the state line's room in a box: BOX_W less both margins
_FLOW_LOOK: dict[str, tuple[str, str, bool]] = {
    "Pending": ("warn", "clock", False),
    "Running": ("ok", "play", False),
    "Succeed": ("done", "check", True),
    "Terminating": ("warn", "ban", False),
    "Failed": ("bad", "cross", True),
}


def jobflow_badge(jf: Mapping[str, Any]) -> Phase:
    return badges.phase_of_table(_FLOW_LOOK, vf.jobflow_phase(jf))


def badge_of_card(obj: Mapping[str, Any]) -> Phase:
    return jobflow_badge(obj)


@dataclass(frozen=True)
class Box:
    flow: str
    label: str
    x: int
    y: int
    tone: str
    state: str
    job: str
    job_exists: bool
    missing: bool
    cx: int
    cy: int
    text_y: int
    sub_y: int

    @property
    def state_squeezed(self) -> bool:
        """Whether the state line is wider than the box at the graph's 12 px (about 6.5 px a Latin
        character, 12 px a CJK one): the template then fits it with SVG textLength."""
        return sum(12 if ord(c) >= 0x2E80 else 6.5 for c in self.state) > STATE_PX


@dataclass(frozen=True)
class Edge:
    path: str
    met: bool
    source: str
    target: str


@dataclass(frozen=True)
class Graph:
    boxes: list[Box]
    edges: list[Edge]
    width: int
    height: int


def _cut(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def flow_graph(items: Sequence[vf.Flow], state: Mapping[str, tuple[str, str, str, bool]]) -> Graph:
    """The graph of ``items``; ``state[flow]`` = (state text, tone, Job name, Job exists).
    Targets naming no flow are drawn as their own (missing) boxes."""
    depth = vf.depths(items)
    names = [f.name for f in items]
    missing = sorted({t for f in items for t in f.targets if t not in depth})
    columns: dict[int, list[tuple[str, bool]]] = {}
    for n in names:
        columns.setdefault(depth.get(n, 0), []).append((n, False))
    for m in missing:
        # One column left of its nearest dependent, below that column's flows: no edge crosses a box.
        col = max(0, min(depth.get(f.name, 0) for f in items if m in f.targets) - 1)
        columns.setdefault(col, []).append((m, True))
    boxes: dict[str, Box] = {}
    for col, entries in sorted(columns.items()):
        for row, (flow, is_missing) in enumerate(entries):
            x = PAD + col * (BOX_W + GAP_X)
            y = PAD + row * (BOX_H + GAP_Y)
            text, tone, job, exists = state.get(flow, ("", "muted", "", False))
            if is_missing:
                text, tone = _("not a flow of this JobFlow"), "bad"
            boxes.setdefault(
                flow,
                Box(
                    flow,
                    _cut(flow),
                    x,
                    y,
                    tone,
                    text,
                    job,
                    exists,
                    is_missing,
                    x + BOX_W // 2,
                    y + BOX_H // 2,
                    y + 20,
                    y + 38,
                ),
            )
    edges = []
    reach = 0  # how far right an edge drawn around the boxes goes
    for f in items:
        to = boxes.get(f.name)
        for t in f.targets:
            src = boxes.get(t)
            if src is None or to is None:
                continue
            met = state.get(t, ("", "", "", False))[0] == vf.MET_PHASE
            x1, y1 = src.x + BOX_W, src.cy
            if src is to:
                # A flow that depends on itself: a loop on its right side.
                loop = x1 + LOOP_OUT
                reach = max(reach, loop)
                path = f"M{x1},{y1 - 12} C{loop},{y1 - 30} {loop},{y1 + 30} {x1},{y1 + 12}"
            elif src.x >= to.x:
                # Back to a column at or left of the source (a cycle): around the right sides,
                # never through the boxes in between.
                x2, y2 = to.x + BOX_W, to.cy
                out = max(x1, x2) + LOOP_OUT
                reach = max(reach, out)
                path = f"M{x1},{y1} C{out},{y1} {out},{y2} {x2},{y2}"
            else:
                x2, y2 = to.x, to.cy
                mid = (x1 + x2) // 2
                path = f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"
            edges.append(Edge(path, met, t, f.name))
    width = max(max((b.x + BOX_W for b in boxes.values()), default=0), reach) + PAD
    height = max((b.y + BOX_H for b in boxes.values()), default=0) + PAD
    return Graph(list(boxes.values()), edges, width, height)


@dataclass(frozen=True)
class Bar:
    state: str
    tone: str
    x: float
    width: float
    start: datetime | None
    end: datetime | None


TIMELINE_W = 600
# Left margin for the Job names, and the height of one row (SVG units).
TIMELINE_LABEL_W = 210
TIMELINE_ROW_H = 12
_SPAN_TONES = {"Running": "ok", "Completed": "done", "Failed": "bad", "Pending": "warn"}


def timeline(statuses: Sequence[vf.FlowStatus], now: datetime) -> dict[str, Any] | None:
    """The running histories on one time axis: rows of (Job, bars), with the axis ends; None when
    no history has a start time."""
    starts = [s.start for st in statuses for s in st.history if s.start]
    if not starts:
        return None
    t0 = min(starts)
    t1 = max([now, *[s.end for st in statuses for s in st.history if s.end]])
    total = max((t1 - t0).total_seconds(), 1.0)
    rows: list[dict[str, Any]] = []
    for st in statuses:
        bars = []
        for s in st.history:
            if s.start is None:
                continue
            end = s.end or now
            x = TIMELINE_LABEL_W + (s.start - t0).total_seconds() / total * TIMELINE_W
            w = max((end - s.start).total_seconds() / total * TIMELINE_W, 2.0)
            bars.append(
                Bar(s.state, _SPAN_TONES.get(s.state, "muted"), round(x, 1), round(w, 1), s.start, s.end)
            )
        y = len(rows) * TIMELINE_ROW_H
        rows.append(
            {"job": st.job, "bars": bars, "restarts": st.restarts, "y": y, "text_y": y + 8, "bar_y": y + 1}
        )
    return {
        "rows": rows,
        "start": t0,
        "end": t1,
        "width": TIMELINE_LABEL_W + TIMELINE_W + 10,
        "height": len(rows) * TIMELINE_ROW_H + 2,
    }
