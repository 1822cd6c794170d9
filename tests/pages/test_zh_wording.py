"""Chinese wording of the pages' relative times: "16分钟前", not the abbreviated "16分前"."""

from __future__ import annotations

from datetime import timedelta

from django.template import Context, Template
from django.utils import timezone, translation


def test_relative_times_in_chinese_read_minutes_in_full():
    now = timezone.now()
    page = Template("{% load volcano %}{% ago then True %} {% ago hours True %} {% ago days True %}")
    with translation.override("zh-hans"):
        text = page.render(
            Context(
                {
                    "now": now,
                    "then": now - timedelta(minutes=16),
                    "hours": now - timedelta(hours=3, minutes=5),
                    "days": now - timedelta(days=2, hours=4),
                }
            )
        )
    assert ">16分钟前<" in text and ">3小时5分钟前<" in text and ">2天4小时前<" in text
    assert "分前" not in text
