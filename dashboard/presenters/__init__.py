"""View models for the pages: the domain's facts (``dashboard.volcano``) as display values.

One topic per module: ``phases`` (badges), ``jobs``, ``podgroups``, ``queues``, ``pods``,
``events``, ``resources`` (quantities in words, resource bars), ``pending`` (why-pending in
words, "cannot be read" hints), ``selectors`` (label selectors of the list filters),
``versions`` (fragment version keys), ``clock`` (the pages' "now").

The names below are the package's public API, as the views and templates use them
(``from dashboard import presenters as p``): the presenters' own names, plus the domain readers
the views call through ``p`` (accessors, ``to_int``, time helpers).
"""

from dashboard.presenters.clock import reference_now, set_time_source
from dashboard.presenters.events import (
    EventRow,
    event_count,
    event_first,
    event_last,
    event_row,
    event_rows,
    latest_per_object,
)
from dashboard.presenters.jobs import (
    Gang,
    TaskRow,
    TimelineEntry,
    gang_bar,
    job_gang,
    job_health_hint,
    job_min_available,
    job_plugins,
    job_replicas,
    job_tasks,
    job_timeline,
    policy_text,
    task_rows,
)
from dashboard.presenters.pending import (
    NO_ROOM_PODGROUP_LINKS,
    Finding,
    PendingOptions,
    absent_hint,
    finding,
    never_start,
    unreadable_reason,
    why_pending,
)
from dashboard.presenters.phases import (
    FINAL_JOB_PHASES,
    JOB_PHASE_ORDER,
    JOB_PHASES,
    POD_TONES,
    PODGROUP_PHASE_ORDER,
    PODGROUP_PHASES,
    QUEUE_STATES,
    TONE_ICONS,
    Phase,
    job_phase,
    phase_counts,
    pod_phase,
    podgroup_phase,
    queue_state,
)
from dashboard.presenters.podgroups import owner_of, podgroup_conditions, podgroup_gang
from dashboard.presenters.pods import (
    PodRow,
    exit_text,
    pod_display_status,
    pod_ready,
    pod_restarts,
    pod_row,
    pod_rows,
)
from dashboard.presenters.queues import (
    TREE_INDENT_MAX,
    GangRoom,
    TreeRow,
    gang_room,
    queue_ancestors,
    queue_parent,
    queue_tree,
    room_row,
)
from dashboard.presenters.resources import (
    FIELD_WORDS,
    PCT_CAP,
    ResourceBar,
    _pct,
    amount_text,
    compact_bars,
    exact_quantity,
    invalid_amount_text,
    min_resources,
    queue_resource_bars,
)
from dashboard.presenters.selectors import SelectorError, parse_selector, selector_matches
from dashboard.presenters.versions import resource_versions, version_key
from dashboard.volcano.objects import annotations as annotations_of
from dashboard.volcano.objects import as_dict, as_list, as_str, is_deleting, meta
from dashboard.volcano.objects import count as to_int
from dashboard.volcano.objects import labels as labels_of
from dashboard.volcano.objects import name as name_of
from dashboard.volcano.objects import namespace as namespace_of
from dashboard.volcano.objects import spec as spec_of
from dashboard.volcano.objects import status as status_of
from dashboard.volcano.pending import unschedulable_condition
from dashboard.volcano.phases import job_phase as job_phase_name
from dashboard.volcano.phases import job_phase_since
from dashboard.volcano.phases import podgroup_phase as podgroup_phase_name
from dashboard.volcano.pods import pod_blockers, pod_is_crashlooping, pod_task
from dashboard.volcano.quantities import RESOURCE_ORDER, format_quantity, quantity, resource_sort_key
from dashboard.volcano.time import EARLIEST_TIME, created_at, parse_time, seconds_between
from dashboard.volcano.time import EPOCH as _EPOCH

__all__ = [
    "EARLIEST_TIME",
    "FIELD_WORDS",
    "FINAL_JOB_PHASES",
    "JOB_PHASES",
    "JOB_PHASE_ORDER",
    "NO_ROOM_PODGROUP_LINKS",
    "PCT_CAP",
    "PODGROUP_PHASES",
    "PODGROUP_PHASE_ORDER",
    "POD_TONES",
    "QUEUE_STATES",
    "RESOURCE_ORDER",
    "TONE_ICONS",
    "TREE_INDENT_MAX",
    "EventRow",
    "Finding",
    "Gang",
    "GangRoom",
    "PendingOptions",
    "Phase",
    "PodRow",
    "ResourceBar",
    "SelectorError",
    "TaskRow",
    "TimelineEntry",
    "TreeRow",
    "_EPOCH",
    "_pct",
    "absent_hint",
    "amount_text",
    "annotations_of",
    "as_dict",
    "as_list",
    "as_str",
    "compact_bars",
    "created_at",
    "event_count",
    "event_first",
    "event_last",
    "event_row",
    "event_rows",
    "exact_quantity",
    "exit_text",
    "finding",
    "format_quantity",
    "gang_bar",
    "gang_room",
    "invalid_amount_text",
    "is_deleting",
    "job_gang",
    "job_health_hint",
    "job_min_available",
    "job_phase",
    "job_phase_name",
    "job_phase_since",
    "job_plugins",
    "job_replicas",
    "job_tasks",
    "job_timeline",
    "labels_of",
    "latest_per_object",
    "meta",
    "min_resources",
    "name_of",
    "namespace_of",
    "never_start",
    "owner_of",
    "parse_selector",
    "parse_time",
    "phase_counts",
    "pod_blockers",
    "pod_display_status",
    "pod_is_crashlooping",
    "pod_phase",
    "pod_ready",
    "pod_restarts",
    "pod_row",
    "pod_rows",
    "pod_task",
    "podgroup_conditions",
    "podgroup_gang",
    "podgroup_phase",
    "podgroup_phase_name",
    "policy_text",
    "quantity",
    "queue_ancestors",
    "queue_parent",
    "queue_resource_bars",
    "queue_state",
    "queue_tree",
    "reference_now",
    "resource_sort_key",
    "resource_versions",
    "room_row",
    "seconds_between",
    "selector_matches",
    "set_time_source",
    "spec_of",
    "status_of",
    "task_rows",
    "to_int",
    "unreadable_reason",
    "unschedulable_condition",
    "version_key",
    "why_pending",
]
