"""The chart table's time labels: one row per label, in order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboard.presenters.charts import line_chart


@pytest.mark.parametrize("span", [timedelta(hours=1), timedelta(hours=24), timedelta(days=7)])
def test_the_charts_minute_labels_are_unique_and_increasing(span):
    until = datetime(2026, 12, 1, 19, 23, 13, 400000, tzinfo=UTC)  # not on a minute
    since = until - span
    points = []
    at = since.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while at < until:
        points.append((at + timedelta(seconds=7), 2.0))
        at += timedelta(minutes=1)
    chart = line_chart("gpu", [("allocated", "a", points, False)], since, until, lambda v: f"{v:g}")
    labels = [row[0] for row in chart.rows]
    assert len(labels) == len(set(labels))
    if span == timedelta(hours=1):
        # Every minute of the hour has its row, none twice.
        minutes = [(since + timedelta(minutes=i)).strftime("%H:%M") for i in range(60)]
        assert labels == minutes


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("zone", ["UTC", "Asia/Shanghai", "America/St_Johns"])
def test_the_charts_clock_labels_are_djangos_formats_in_the_viewers_zone_and_language(language, zone):
    from django.utils import formats, timezone, translation

    from dashboard.presenters.charts import _clock

    starts = [datetime(2026, 1, 31, 23, 59, 58, tzinfo=UTC) + timedelta(minutes=37 * i) for i in range(80)]
    with translation.override(language), timezone.override(zone):
        for span, fmt in (
            (timedelta(minutes=5), "H:i:s"),
            (timedelta(hours=24), "H:i"),
            (timedelta(days=7), "M j H:i"),
        ):
            clock = _clock(span)
            for at in starts:
                local = timezone.localtime(at)
                want = formats.date_format(local, fmt) if "M" in fmt else formats.time_format(local, fmt)
                assert clock(at) == want, (span, at)
