"""The orders of the list pages in words: the options of the "Order" control and what the
"needs a look first" order means (``dashboard.volcano.states.ATTENTION_CLASSES``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from dashboard.volcano.states import ATTENTION_CLASSES

# How a sort key reads in each direction: "text" A–Z, "age" (ascending: newest first), "since"
# (ascending: shortest in its phase first), "number" (ascending: lowest first), "attention"
# (ascending: needs a look first), "time" (a timestamp, not inverted: ascending oldest first).
SORT_KINDS = {
    "attention": "attention",
    "name": "text",
    "namespace": "text",
    "phase": "text",
    "queue": "text",
    "age": "age",
    "last": "time",
    "inphase": "since",
    "pending": "number",
    "running": "number",
    "failed": "number",
    "retries": "number",
    "minmember": "number",
    "free_cpu": "number",
    "free_memory": "number",
    "free_gpu": "number",
}


@dataclass(frozen=True)
class SortOption:
    """One option of the "Order" control: ``value`` is the ``?sort=`` value."""

    value: str
    label: str
    selected: bool


def _column(key: str, columns: Mapping[str, str]) -> str:
    if key in columns:
        return _(columns[key])
    words = {
        "name": _("Name"),
        "namespace": _("Namespace"),
        "phase": _("Phase"),
        "queue": _("Queue"),
        "age": _("Age"),
        "inphase": _("In phase"),
        "pending": _("Pending"),
        "running": _("Running"),
        "failed": _("Failed"),
        "retries": _("Retries"),
        "minmember": _("minMember"),
        "free_cpu": _("Free CPU"),
        "free_memory": _("Free memory"),
        "free_gpu": _("Free GPUs"),
    }
    return words.get(key, key)


def _formats(kind: str) -> tuple[str, str]:
    """(ascending, descending) label formats of a kind of SORT_KINDS."""
    if kind == "age":
        return _("%(column)s, newest first"), _("%(column)s, oldest first")
    if kind == "time":
        return _("%(column)s, oldest first"), _("%(column)s, newest first")
    if kind == "since":
        return _("%(column)s, shortest first"), _("%(column)s, longest first")
    if kind == "number":
        return _("%(column)s, lowest first"), _("%(column)s, highest first")
    return _("%(column)s, A–Z"), _("%(column)s, Z–A")


def _label(key: str, descending: bool, columns: Mapping[str, str]) -> str:
    kind = SORT_KINDS.get(key, "text")
    if kind == "attention":
        return _("Needs a look last") if descending else _("Needs a look first")
    return _formats(kind)[descending] % {"column": _column(key, columns)}


def sort_options(
    keys: Iterable[str], current: str, columns: Mapping[str, str] | None = None
) -> list[SortOption]:
    """Both directions of every sort key (``key`` and ``-key``), in the order of ``keys``, with
    ``current`` (a ``?sort=`` value) selected; ``columns``: key -> the untranslated header of its
    column on this list, where it differs from the usual one."""
    return [
        SortOption(value, _label(key, value.startswith("-"), columns or {}), value == current)
        for key in keys
        for value in (key, f"-{key}")
    ]


def attention_note() -> str:
    """What "needs a look first" puts where, in the order of ATTENTION_CLASSES."""
    words = {
        "waiting": _("waiting"),
        "failing": _("failing"),
        "in_transition": _("in transition or stuck"),
        "running": _("running"),
        # "failed" alone reads as "failed at" in the attention lists ("failed 5m ago").
        "failed": pgettext("attention class", "failed"),
        "stopped": _("stopped"),
        "finished": _("finished"),
    }
    return _(
        "Needs a look first: %(order)s; within a class the longest in its phase first, "
        "and the stopped ones newest first."
    ) % {"order": " → ".join(words[c] for c in ATTENTION_CLASSES)}
