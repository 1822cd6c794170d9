"""Django's request-scoped state lives in plain thread-locals (dashboard/threadlocal.py), and each
request thread still sees only its own language, time zone and script prefix."""

from __future__ import annotations

import threading

from django.urls import base as urls_base
from django.urls import get_script_prefix, set_script_prefix
from django.utils import timezone, translation
from django.utils.translation import trans_real

from dashboard import threadlocal


def test_the_request_locals_are_thread_locals() -> None:
    assert threadlocal.installed()
    for module, name in threadlocal.SWAPPED:
        assert type(getattr(module, name)) is threading.local, (module.__name__, name)
    assert trans_real._active is not timezone._active is not urls_base._prefixes


def test_install_again_keeps_the_current_locals() -> None:
    before = [getattr(module, name) for module, name in threadlocal.SWAPPED]
    threadlocal.install()
    assert [getattr(module, name) for module, name in threadlocal.SWAPPED] == before


def test_each_thread_sees_its_own_language_time_zone_and_prefix() -> None:
    barrier = threading.Barrier(2, timeout=10)
    seen: dict[str, tuple] = {}

    def request(lang: str, tz: str, prefix: str) -> None:
        translation.activate(lang)
        timezone.activate(tz)
        set_script_prefix(prefix)
        try:
            barrier.wait()  # both threads have set theirs before either reads
            seen[lang] = (
                translation.get_language(),
                translation.gettext("Jobs"),
                timezone.get_current_timezone_name(),
                get_script_prefix(),
            )
            barrier.wait()
        finally:
            translation.deactivate()
            timezone.deactivate()
            set_script_prefix("/")

    threads = [
        threading.Thread(target=request, args=("zh-hans", "Asia/Shanghai", "/cn/")),
        threading.Thread(target=request, args=("en", "UTC", "/en/")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["zh-hans"][0] == "zh-hans" and seen["en"][0] == "en"
    assert seen["zh-hans"][1] != "Jobs" and seen["en"][1] == "Jobs"
    assert seen["zh-hans"][2:] == ("Asia/Shanghai", "/cn/")
    assert seen["en"][2:] == ("UTC", "/en/")


def test_a_new_thread_starts_without_another_threads_language() -> None:
    translation.activate("zh-hans")
    try:
        got: list[str | None] = []
        t = threading.Thread(target=lambda: got.append(getattr(trans_real._active, "value", None)))
        t.start()
        t.join()
        assert got == [None]
    finally:
        translation.deactivate()
