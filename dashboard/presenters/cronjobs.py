"""CronJob schedules in words (cron-descriptor, in the page's language) and CronJob badges."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cron_descriptor import ExpressionDescriptor, Options
from django.utils.translation import get_language, gettext_noop
from django.utils.translation import gettext as _

from dashboard.presenters.phases import Phase, phase_of_table
from dashboard.volcano import cronjobs as vc
from dashboard.volcano.objects import as_str, status

# Django language codes -> cron-descriptor's locale names (it ships zh_CN among others).
_LOCALES = {"zh-hans": "zh_CN", "en": "en_US"}
CRONJOB_STATES = (gettext_noop("Active"), gettext_noop("Idle"), gettext_noop("Suspended"))
_LOOK: dict[str, tuple[str, str, bool]] = {
    "Active": ("ok", "play", False),
    "Idle": ("info", "clock", False),
    "Suspended": ("muted", "stop", False),
}


def schedule_words(cj: Mapping[str, Any]) -> str:
    """The schedule as a sentence ("Every 5 minutes"); "" when it cannot be read."""
    if not vc.schedule_valid(cj):
        return ""
    options = Options()
    options.locale_code = _LOCALES.get((get_language() or "en").lower(), "en_US")
    options.use_24hour_time_format = True
    try:
        return str(ExpressionDescriptor(vc.expanded_schedule(cj), options).get_description())
    except Exception:  # noqa: BLE001  cron-descriptor rejects some syntax croniter accepts
        return ""


def cronjob_state(cj: Mapping[str, Any]) -> str:
    """Suspended, Active (a Job is running) or Idle: the list's "phase"."""
    if vc.suspended(cj):
        return "Suspended"
    return "Active" if vc.active_refs(cj) else "Idle"


def cronjob_badge(state: str) -> Phase:
    """The badge of a CronJob state, its label translated (the state is this page's word, not
    the cluster's)."""
    badge = phase_of_table(_LOOK, state)
    return replace(badge, label=_(badge.label)) if badge.known else badge


def badge_of_card(obj: Mapping[str, Any]) -> Phase:
    return cronjob_badge(as_str(status(obj).get("phase")))


def zone_text(cj: Mapping[str, Any]) -> str:
    zone = vc.time_zone_name(cj)
    if not zone:
        return _("not set (the controller's local time zone)")
    if vc.time_zone(cj) is None:
        return _("%(zone)s (not a known time zone)") % {"zone": zone}
    return zone
