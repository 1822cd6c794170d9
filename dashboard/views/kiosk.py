"""The kiosk: a full-screen overview for an ops-room display, and the layout of its lists.

A wall display cannot scroll, so every list is cut to what fits and says how many more there are.
The layout functions (``kiosk_queues``, ``kiosk_queue_cuts``, ``kiosk_attention``) choose the rows
and write the "+ N more" texts; the view only gathers the overview's sections and passes them on.
"""

from __future__ import annotations

import json
import time

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import get_template
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_safe

from dashboard.presenters.clock import reference_now
from dashboard.presenters.kiosk import kiosk_warnings, overall_status
from dashboard.presenters.versions import version_key
from dashboard.views import overview
from dashboard.views.fragments import Fragments, bucket, kind_states
from dashboard.views.notices import ALL_KINDS, one_notice, page_ctx
from dashboard.views.queue_summary import queue_summaries
from dashboard.views.rows import memo_base, snapshot
from dashboard.views.scheduler_health import health_version, scheduler_health_ctx
from dashboard.volcano import objects, phases

# ?rotate=N: whole seconds per queue. The kiosk polls at most every N seconds, so the floor keeps a
# wall display from polling faster than once a second; an hour is the longest useful rotation.
KIOSK_ROTATE_MIN = 1
KIOSK_ROTATE_MAX = 3600


def _kiosk_rotate(raw: str | None) -> tuple[int, str]:
    """``?rotate=`` as (seconds, note): 0 = rotation off. The note (shown on the kiosk; "" when the
    value was used as given) says when the value was ignored (not a whole number, negative) or
    clamped to KIOSK_ROTATE_MIN..KIOSK_ROTATE_MAX, or that 0 turned rotation off."""
    if raw is None or raw.strip() == "":
        return 0, ""
    limits = {"min": KIOSK_ROTATE_MIN, "max": KIOSK_ROTATE_MAX}
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    shown = raw if len(raw) <= 40 else raw[:40] + "…"
    if value < 0:
        return 0, _(
            "?rotate=%(value)s ignored (give whole seconds from %(min)d to %(max)d, or 0): rotation off."
        ) % {"value": shown, **limits}
    if value == 0:
        return 0, _("?rotate=0: rotation off.")
    if value > KIOSK_ROTATE_MAX:
        return KIOSK_ROTATE_MAX, _(
            "?rotate=%(value)s is more than %(max)d: one queue every %(max)d seconds."
        ) % {"value": shown, **limits}
    return max(value, KIOSK_ROTATE_MIN), ""


# What the kiosk shows per list without script. The kiosk's type scales with the screen (app.css:
# the root font size follows the viewport height, capped by its width), so its layout measures the
# same in rem on every 16:9 screen; these caps are what fits the smallest supported one (1280×720),
# with room left for the one-line notice above the board ("may be out of date") and every pending
# Job's reason counted at its two-line maximum. A list longer than its cap shows its most important
# rows and says how many more there are: a wall display cannot scroll, and a silently cut list
# reads as complete.
# Both columns hold about 21 rem there: Needs attention 14 of its lines, or the queue table 10 rows
# (9 and the "+ N more" line); Recent warnings (2 of them, two lines each) takes 7 attention lines or
# 5 queue rows from the column it goes under (kiosk_layout).
KIOSK_QUEUE_ROWS = 10
KIOSK_QUEUE_ROWS_SHARED = 5
KIOSK_WARNING_ROWS = 2
# "Needs attention" in lines: a group heading (which carries its "+ N more") and an item are one
# line each, a pending Job three (its name, then the first reason, at most two lines), a stuck Job
# two (its name, then the pod that holds it). Every group keeps its heading and first item, so with
# all nine groups at once the cut is 21 lines and may not fit without script (kiosk.js fits it).
KIOSK_ATTENTION_LINES = 14
KIOSK_ATTENTION_LINES_SHARED = 7
KIOSK_ATTENTION_GROUPS = (
    "components",
    "pending",
    "stuck",
    "unknown",
    "below",
    "crash",
    "restarting",
    "failed",
    "closed",
)
# Lines per item of a group (1 when not listed).
KIOSK_ITEM_LINES = {"pending": 3, "stuck": 2}
# What the kiosk sends: more rows than the caps above (queues up to KIOSK_QUEUE_RENDER, attention
# everything in the overview's lists, at most overview.attention's limit per group), those beyond the caps
# with the ``hidden`` attribute. static/dashboard/kiosk.js then shows, in the same order of
# importance, as many as fit each panel on the screen at hand and sets the "+ N more" line from the
# texts the server wrote for every possible cut (``data-cuts``). 40 queue rows fill a panel on a
# 16:10 or 4:3 screen, which are taller in rem than 16:9.
KIOSK_QUEUE_RENDER = 40


def kiosk_queue_problem(row: dict) -> bool:
    """A queue the kiosk must never cut: Closed or Closing (``phases.queue_closed``), any
    resource allocated above deserved or capability, or outside the real tree (missing parent,
    parent cycle). ``row``: a queue_summary row."""
    if phases.queue_closed(row["state"].label):
        return True
    return bool(row["problem"]) or any(b.over for b in row["bars"])


def kiosk_queues(
    rows: list[dict], limit: int = KIOSK_QUEUE_ROWS, render: int = KIOSK_QUEUE_RENDER
) -> tuple[list[dict], int, int]:
    """The queue rows the kiosk sends, in tree order, as (rows, hidden, hidden problems) where the
    counts are those of the cut to ``limit`` (what shows without script).

    Importance (``kiosk_rank``, 0 first): every problem queue (kiosk_queue_problem) in tree order,
    then the top of the tree (the shallowest queues first, then tree order). A cut to N rows shows
    ranks 0..N-1: all rows when they fit in N, else N - 1 (the "+ N more" line takes a row's place).
    The rows sent are the cut to ``render``; those outside the cut to ``limit`` have
    ``kiosk_hidden``. A row whose parent may be left out while it shows (the parent ranks after it,
    or is not sent) gets ``kiosk_path`` (its ancestors, root first), so it still reads in place;
    ``kiosk_path_hidden`` says its parent shows in the cut to ``limit`` (kiosk.js decides per cut
    after that). ``hidden problems`` counts the problem queues left out (only when there are more
    of them than rows). Rows are copies; ``rows`` (shared with the overview's memo) is not changed."""
    total = len(rows)
    order = range(total)
    problems = [i for i in order if kiosk_queue_problem(rows[i])]
    problem_set = set(problems)
    ranked = problems + sorted(
        (i for i in order if i not in problem_set), key=lambda i: (rows[i]["depth"], i)
    )
    rank = {i: r for r, i in enumerate(ranked)}

    def cut(n: int) -> int:
        return total if total <= n else max(1, n - 1)

    base, sent = cut(limit), cut(max(render, limit))
    rank_by_name = {rows[i]["name"]: rank[i] for i in order}
    parent_of = {r["name"]: r["tree_parent"] for r in rows}
    out = []
    for i in sorted(ranked[:sent]):
        row, r = rows[i], rank[i]
        path: list[str] = []
        parent = row["tree_parent"]
        parent_rank = rank_by_name.get(parent, total) if parent else -1
        if parent and not row["problem"] and (parent_rank > r or parent_rank >= sent):
            seen = {row["name"]}
            while parent and parent not in seen and len(path) < 50:
                path.append(parent)
                seen.add(parent)
                parent = parent_of.get(parent, "")
            path.reverse()
        out.append(
            {
                **row,
                "kiosk_rank": r,
                "kiosk_hidden": r >= base,
                "kiosk_path": path,
                "kiosk_path_hidden": bool(path) and parent_rank < base,
                # An Open queue is the normal case: the kiosk shows the state of the others only.
                "kiosk_state_quiet": row["state"].label in phases.ADMITTING_QUEUE_STATES,
            }
        )
    return out, total - base, max(0, len(problems) - base)


def kiosk_queue_cuts(sent: int, total: int, problems: int) -> list[list]:
    """The "+ N more" line of each cut of kiosk_queues' ``sent`` rows as [N, text]: item k is for
    the k + 1 most important rows shown (text "" when nothing is left out). ``total``: all queues;
    ``problems``: how many of them are problem queues (they rank first)."""
    return [[total - k, _queues_more_text(total - k, max(0, problems - k))] for k in range(1, sent + 1)]


def _queues_more_text(hidden: int, hidden_problems: int) -> str:
    if hidden <= 0:
        return ""
    text = ngettext("+ %(n)s more queue", "+ %(n)s more queues", hidden) % {"n": hidden}
    if hidden_problems:
        text += ngettext(
            ", %(n)s of them with a problem", ", %(n)s of them with problems", hidden_problems
        ) % {"n": hidden_problems}
    return text


def kiosk_attention(attention: dict, lines: int = KIOSK_ATTENTION_LINES) -> dict:
    """The "needs attention" lists for the kiosk, as a new dict with the same keys plus, per group,
    ``<group>_base``: how many of its items show without script (the cut to ``lines``, see
    KIOSK_ATTENTION_LINES), ``<group>_more``: how many of the group's total that cut leaves out
    (the kiosk says "+ N more" in the group's heading), and ``<group>_cuts``: the "+ N more" line
    for each number of items shown as JSON [N, text] pairs (item k: k + 1 shown; text "" when none
    is left out), for kiosk.js, which shows as many as fit. Every non-empty group keeps its heading
    and first item; the lines left go to the groups in turn (Volcano components first, then pending
    Jobs), one item each round. The lists are sent whole. ``attention``: overview.attention's dict
    (not changed; the overview memoizes it)."""
    cost = KIOSK_ITEM_LINES
    totals = {
        "components": attention.get("components_total", len(attention.get("components") or ())),
        "pending": attention.get("pending_total", 0),
        "stuck": attention.get("stuck_total", 0),
        "unknown": attention.get("unknown_total", 0),
        "below": attention.get("below_total", 0),
        "crash": attention.get("crash_total", 0),
        "restarting": attention.get("restarting_total", 0),
        "failed": attention.get("failed_total", 0),
        "closed": attention.get("closed_total", len(attention.get("closed") or ())),
    }
    present = [g for g in KIOSK_ATTENTION_GROUPS if attention.get(g)]
    shown = dict.fromkeys(present, 1)

    def used() -> int:
        return sum(1 + shown[g] * cost.get(g, 1) for g in present)

    grew = True
    while grew:
        grew = False
        for g in present:
            if shown[g] >= len(attention[g]):
                continue
            shown[g] += 1
            if used() <= lines:
                grew = True
            else:
                shown[g] -= 1
    out = dict(attention)
    for g in KIOSK_ATTENTION_GROUPS:
        items = attention.get(g) or []
        out[f"{g}_base"] = shown.get(g, 0)
        out[f"{g}_more"] = max(0, totals[g] - shown[g]) if g in shown else 0
        cuts = []
        for k in range(1, len(items) + 1):
            n = max(0, totals[g] - k)
            # In the group's heading, after its total ("12 pending Jobs + 9 more").
            cuts.append([n, ngettext("+ %(n)s more", "+ %(n)s more", n) % {"n": n} if n else ""])
        out[f"{g}_cuts"] = json.dumps(cuts, ensure_ascii=False)
    return out


@require_safe
def kiosk(request: HttpRequest) -> HttpResponse:
    """Full-screen overview for an ops-room display. ``?rotate=N`` shows one queue at a time in
    detail, changing every N seconds; which queue is derived from the clock, so any refresh (or a
    restarted dashboard) continues the rotation without client state."""
    snap = snapshot(request)
    now = reference_now(snap)
    rotate, rotate_note = _kiosk_rotate(request.GET.get("rotate"))
    states = kind_states(snap, *ALL_KINDS)
    slot = int(time.time() // rotate) if rotate else 0
    versions = [getattr(snap, k).version for k in ("jobs", "podgroups", "queues", "pods", "events")]
    frags = Fragments(
        request,
        snap,
        now,
        ALL_KINDS,
        board=lambda: version_key(*versions, *health_version(snap), states, bucket(now), slot),
    )
    if resp := frags.unchanged():
        return resp
    ctx = page_ctx(snap, now, ALL_KINDS, "kiosk")
    notices = ctx["notices"]
    ctx["notices"] = one_notice(notices)
    kiosk_poll = (
        min(settings.VOLCANO_UI_POLL_SECONDS * 2, rotate) if rotate else settings.VOLCANO_UI_POLL_SECONDS * 2
    )
    ctx.update(
        {"rotate": rotate, "force_theme": "dark", "kiosk_poll": kiosk_poll, "poll_seconds": kiosk_poll}
    )
    if frags.want("board"):
        ctx.update(overview.sections(request, snap, now, notices))
        ctx["focus"] = _focus(snap, rotate, slot)
        ctx.update(_board(ctx, now, ctx["focus"]))
        ctx["rotate_note"] = rotate_note
        ctx["health"] = scheduler_health_ctx(snap, now, memo_base(request))
    return frags.respond("dashboard/kiosk.html", ctx)


def _focus(snap, rotate: int, slot: int) -> dict | None:
    """The queue shown in detail in rotation ``slot`` (queues by name), with its place ``index``
    of ``of``; None when rotation is off or there are no queues."""
    queue_list = sorted(snap.queues.all(), key=objects.name)
    if not rotate or not queue_list:
        return None
    focus = queue_summaries(snap, [queue_list[slot % len(queue_list)]])[0]
    focus["index"] = slot % len(queue_list) + 1
    focus["of"] = len(queue_list)
    return focus


def _board(sections: dict, now, focus: dict | None) -> dict:
    """The kiosk's cut of the overview's ``sections`` (queue rows, warnings, attention), the overall
    status and which column Recent warnings goes under."""
    all_queue_rows = sections.get("queue_rows") or []
    # The focus of rotate mode: its heading, PodGroup chips and a bar of two lines per resource.
    queue_lines = 6 + 2 * len(focus["bars"]) if focus else 1 + len(all_queue_rows)
    warnings_in = kiosk_layout(_attention_lines(sections["attention"]), queue_lines)
    shared = warnings_in == "right"
    queue_rows, queues_more, queue_problems_more = kiosk_queues(
        all_queue_rows, KIOSK_QUEUE_ROWS_SHARED if shared else KIOSK_QUEUE_ROWS
    )
    queue_problems = sum(1 for r in all_queue_rows if kiosk_queue_problem(r))
    queue_cuts = kiosk_queue_cuts(len(queue_rows), len(all_queue_rows), queue_problems)
    warnings = kiosk_warnings(sections.get("warnings") or [], now)
    # overview.recent_warnings stops at its limit: more than it kept may exist.
    at_least = len(warnings) >= overview.RECENT_WARNING_OBJECTS
    warnings_cuts = kiosk_warning_cuts(len(warnings), at_least)
    attention = kiosk_attention(
        sections["attention"], KIOSK_ATTENTION_LINES if shared else KIOSK_ATTENTION_LINES_SHARED
    )
    base = min(len(warnings), KIOSK_WARNING_ROWS)
    return {
        "status": overall_status(sections["attention"]),
        "warnings_in": warnings_in,
        "queue_rows": queue_rows,
        "queues_more": queues_more,
        "queue_problems": queue_problems,
        "queue_problems_more": queue_problems_more,
        "queues_more_text": _queues_more_text(queues_more, queue_problems_more),
        "queue_cuts": json.dumps(queue_cuts, ensure_ascii=False),
        "warnings": warnings,
        "warnings_base": base,
        "warnings_more": warnings_cuts[base][0],
        "warnings_more_text": warnings_cuts[base][1],
        "warnings_cuts": json.dumps(warnings_cuts, ensure_ascii=False),
        # Events that cannot be read are "not available", never "No warnings".
        "events_blocked": sections.get("events_blocked", False),
        "attention": attention,
        # Rendered per request, not through memo.attention_html: the cut lists are new dicts
        # each time, and at most a few dozen rows.
        "attention_html": mark_safe(  # noqa: S308 - template output, escaped when rendered
            get_template("dashboard/_attention.html").render(
                {"attention": attention, "now": now, "kiosk": True}
            )
        ),
    }


def _attention_lines(attention: dict) -> int:
    """The lines of the whole "needs attention" lists as sent (KIOSK_ATTENTION_LINES' costs)."""
    return sum(
        1 + len(attention[g]) * KIOSK_ITEM_LINES.get(g, 1) for g in KIOSK_ATTENTION_GROUPS if attention.get(g)
    )


def kiosk_layout(attention_lines: int, queue_lines: int) -> str:
    """Where Recent warnings goes: "left" (under Needs attention) or "right" (under the queues),
    under the column with fewer lines, so a short list gives its room to the warnings and a long
    one keeps the whole column. Ties go left."""
    return "left" if attention_lines <= queue_lines else "right"


def kiosk_warning_cuts(sent: int, at_least: bool) -> list[list]:
    """The "+ N more" line of each cut of ``sent`` warnings as [N, text] (item k: k shown, from 0:
    a column too short for one; text "" when none is left out); ``at_least``: more objects with
    warnings than were sent may exist."""
    cuts: list[list] = []
    for k in range(sent + 1):
        n = sent - k
        if n == 0:
            cuts.append([0, ""])
        elif at_least:
            cuts.append(
                [
                    n,
                    ngettext(
                        "+ at least %(n)s more object with recent warnings",
                        "+ at least %(n)s more objects with recent warnings",
                        n,
                    )
                    % {"n": n},
                ]
            )
        else:
            cuts.append(
                [
                    n,
                    ngettext(
                        "+ %(n)s more object with recent warnings",
                        "+ %(n)s more objects with recent warnings",
                        n,
                    )
                    % {"n": n},
                ]
            )
    return cuts
