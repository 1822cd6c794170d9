"""Chinese wording of the pages' relative times and of a failed Job's policy sentence: "16分钟前"
(not the abbreviated "16分前"), and a policy of the Job read as one phrase ("作业的策略")."""

from __future__ import annotations

from datetime import timedelta

from django.template import Context, Template
from django.utils import timezone, translation

from dashboard.presenters import failure as pf
from dashboard.volcano.failure import Failure, Policy


def _failure(scope: str, action: str = "AbortJob", retries: int = 0) -> Failure:
    return Failure(
        phase="Failed",
        retry_count=retries,
        max_retry=3,
        max_retry_set=True,
        failed_pods=1,
        min_available=1,
        state_reason="",
        state_message="",
        policies=(Policy("PodFailed", action, scope),),
        actions=(),
        terminations=(),
        image_pulls=(),
        unschedulable="",
        pods_present=True,
    )


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


def test_the_policy_of_the_job_is_one_phrase_in_chinese():
    with translation.override("zh-hans"):
        job = pf._policy_finding(_failure(""))
        task = pf._policy_finding(_failure("worker"))
        restarted = pf._policy_finding(_failure("", "RestartJob", retries=3))
    assert job and "作业的策略以 AbortJob 响应" in job.text and "作业 的" not in job.text
    assert task and "任务 worker 的策略以 AbortJob 响应" in task.text
    assert restarted and "作业的策略会重启作业" in restarted.text
