"""What needs attention on a cluster as a whole: the kinds of concern ranked worst first, the
overall status they add up to, and whether a repeating Warning is new or chronic.

The concerns are those of the overview's "needs attention" lists (Volcano components not
ready, crash-looping pods, stuck Jobs, Jobs in an unknown phase, gangs below minMember, Jobs
restarting repeatedly, failed Jobs, pending Jobs, closed queues); each counts once per object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

# Worst first. A Volcano component not ready (the scheduler, the controller manager, the admission
# webhook) stops the work of the whole cluster; a crash-looping pod is broken now and restarts
# again; a stuck Job holds its pods while its controller does not move on, and a Job in a phase
# Volcano does not define may be just as stuck; a gang below minMember
# runs short of the pods it needs; repeated restarts burn the Job's retries; a failed Job is final
# (nothing left to save, but its owner needs to know); a pending Job waits; a closed queue only
# refuses new work.
CONCERNS: tuple[str, ...] = (
    "components",
    "crash",
    "stuck",
    "unknown",
    "below",
    "restarting",
    "failed",
    "pending",
    "closed",
)


@dataclass(frozen=True)
class Overall:
    """The cluster's overall status: ``total`` objects needing attention (0: all clear), ``worst``
    the worst concern among them (a CONCERNS key; None when ``total`` is 0)."""

    total: int
    worst: str | None

    @property
    def clear(self) -> bool:
        return self.total == 0


def overall(totals: Mapping[str, int]) -> Overall:
    """The overall status from how many objects each concern holds (``totals``: CONCERNS key →
    count; missing keys and negative counts count as none)."""
    counts = {c: max(0, int(totals.get(c, 0) or 0)) for c in CONCERNS}
    worst = next((c for c in CONCERNS if counts[c]), None)
    return Overall(total=sum(counts.values()), worst=worst)


# A Warning first seen this recently is new: it is a change an operator has not seen before.
NEW_WINDOW = timedelta(minutes=10)
# A Warning repeating for this long (between its first and last occurrence) is chronic: the same
# object and reason, known for hours, which should not hide a new problem.
CHRONIC_SPAN = timedelta(hours=1)
# ... and repeating: a chronic Warning happened at least this many times.
CHRONIC_COUNT = 2

Recurrence = Literal["new", "chronic", "ongoing"]


def warning_recurrence(
    first: datetime | None, last: datetime | None, count: int, now: datetime
) -> Recurrence:
    """How a Warning (one object and reason, folded: its earliest ``first`` and newest ``last``
    seen, the summed ``count``) stands at ``now``: "new" when first seen less than NEW_WINDOW ago
    (a first time ahead of ``now``, a skewed clock, counts as new), "chronic" when it repeated
    (``count`` >= CHRONIC_COUNT) over at least CHRONIC_SPAN, else "ongoing". An unknown first time
    is never new, an unknown span never chronic."""
    if first is not None and now - first < NEW_WINDOW:
        return "new"
    if first is not None and last is not None and count >= CHRONIC_COUNT and last - first >= CHRONIC_SPAN:
        return "chronic"
    return "ongoing"
