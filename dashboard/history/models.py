"""The history tables. Times are aware UTC datetimes; amounts are in base units (cores, bytes,
GPUs) as floats: charts and hours need no more precision than a double carries."""

from __future__ import annotations

from django.db import models


class PhaseTransition(models.Model):
    """A Job or PodGroup seen entering ``phase``. ``seen_at``: when the dashboard saw it;
    ``object_time``: the object's own transition time (Job status.state.lastTransitionTime, the
    PodGroup's newest condition), None when it carries none. ``key`` makes a transition seen again
    after a restart of the dashboard (its re-list) one row."""

    kind = models.CharField(max_length=16)  # "Job" | "PodGroup"
    key = models.CharField(max_length=320, unique=True)
    uid = models.CharField(max_length=64)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    queue = models.CharField(max_length=253)
    phase = models.CharField(max_length=64)
    previous = models.CharField(max_length=64, blank=True)
    seen_at = models.DateTimeField()
    object_time = models.DateTimeField(null=True)
    created = models.DateTimeField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["kind", "queue", "seen_at"]),
            models.Index(fields=["kind", "namespace", "name"]),
            models.Index(fields=["seen_at"]),
        ]


class Admission(models.Model):
    """A PodGroup's first start Running (its gang admitted), one row per ``uid``. ``running``: the
    PodGroup's own transition time where it carries one, else when the dashboard saw it;
    ``day``: the UTC calendar day of ``running`` (the wait table's day); ``wait``: seconds from its
    creation to ``running`` (dashboard.volcano.history.admission_wait),
    None when its creation time is unknown. Written by the recorder with the transitions it
    derives from; a PodGroup that runs again after Pending keeps its first row."""

    uid = models.CharField(max_length=64, unique=True)
    queue = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    running = models.DateTimeField()
    day = models.DateField()  # the UTC calendar day of ``running``
    wait = models.FloatField(null=True)

    class Meta:
        # In wait order per queue and day, and per queue: a percentile's rank is found by
        # stepping through an index, not by sorting the day's (or the week's) waits.
        indexes = [
            models.Index(fields=["queue", "day", "wait", "running"], name="history_adm_day_idx"),
            models.Index(fields=["queue", "wait", "running"], name="history_adm_wait_idx"),
            models.Index(fields=["running"], name="history_adm_running_idx"),
        ]


class PodLifetime(models.Model):
    """One pod from creation to deletion, updated as it changes. ``last_seen``: the latest time the
    recorder knew the pod existed (its latest change, and, while it is open, refreshed at most once
    per sampling interval while the pod cache is synced); ``deleted``: when the dashboard saw it
    deleted, or, when ``vanished``, the ``last_seen`` of a pod found gone after a restart or a
    re-list (its end was not observed: it went at some time after that)."""

    uid = models.CharField(max_length=64, unique=True)
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    job = models.CharField(max_length=253, blank=True)
    task = models.CharField(max_length=253, blank=True)
    podgroup = models.CharField(max_length=253, blank=True)
    queue = models.CharField(max_length=253, blank=True)
    node = models.CharField(max_length=253, blank=True)
    phase = models.CharField(max_length=64, blank=True)
    created = models.DateTimeField(null=True)
    scheduled = models.DateTimeField(null=True)
    started = models.DateTimeField(null=True)
    finished = models.DateTimeField(null=True)
    deleted = models.DateTimeField(null=True)
    vanished = models.BooleanField(default=False)  # ``deleted`` is a bound: the end was not observed
    last_seen = models.DateTimeField()
    exit_code = models.IntegerField(null=True)
    restarts = models.IntegerField(default=0)
    cpu = models.FloatField(null=True)  # cores requested
    memory = models.FloatField(null=True)  # bytes requested
    gpu = models.FloatField(default=0)  # GPUs requested (*/gpu resources)
    requests = models.JSONField(default=dict)  # every resource: amount as a plain decimal string

    class Meta:
        indexes = [
            models.Index(fields=["namespace", "job"]),
            models.Index(fields=["queue", "started"]),
            models.Index(fields=["last_seen"]),
        ]


class QueueSample(models.Model):
    """A Queue's amounts of one resource at ``at`` (None: the queue states none)."""

    at = models.DateTimeField()
    queue = models.CharField(max_length=253)
    resource = models.CharField(max_length=253)
    allocated = models.FloatField(null=True)
    deserved = models.FloatField(null=True)
    capability = models.FloatField(null=True)
    guarantee = models.FloatField(null=True)

    class Meta:
        indexes = [models.Index(fields=["queue", "at"]), models.Index(fields=["at"])]


class QueuePhaseSample(models.Model):
    """How many of a Queue's PodGroups were in ``phase`` at ``at``."""

    at = models.DateTimeField()
    queue = models.CharField(max_length=253)
    phase = models.CharField(max_length=64)
    count = models.IntegerField()

    class Meta:
        indexes = [models.Index(fields=["queue", "at"]), models.Index(fields=["at"])]


class HistoryFill(models.Model):
    """A fast-forwarded history being written (the demo's day, dashboard/history/fastforward.py):
    it covers [start, end) and has reached ``reached``; ``done`` once it is whole."""

    start = models.DateTimeField()
    end = models.DateTimeField()
    reached = models.DateTimeField()
    done = models.BooleanField(default=False)


class QueueHourly(models.Model):
    """The means of a Queue's samples of one resource over the hour starting at ``hour``, written
    by the recorder once the hour has closed (long windows read these, not the samples)."""

    hour = models.DateTimeField()
    queue = models.CharField(max_length=253)
    resource = models.CharField(max_length=253)
    allocated = models.FloatField(null=True)
    deserved = models.FloatField(null=True)
    capability = models.FloatField(null=True)
    guarantee = models.FloatField(null=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["queue", "resource", "hour"], name="queue_hourly_key")]
        indexes = [models.Index(fields=["hour"])]


class QueuePhaseHourly(models.Model):
    """The mean count of a Queue's PodGroups in ``phase`` over the hour starting at ``hour``."""

    hour = models.DateTimeField()
    queue = models.CharField(max_length=253)
    phase = models.CharField(max_length=64)
    count = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["queue", "phase", "hour"], name="queue_phase_hourly_key")
        ]
        indexes = [models.Index(fields=["hour"])]


class QueueFiveMinute(models.Model):
    """The means of a Queue's samples of one resource over the five minutes starting at ``at``
    (a UTC clock time on a multiple of 5 minutes; each field the mean of the samples that state
    it, None when none does), written by the recorder with the hourly means for the last
    ``rollup.FIVE_MINUTE_KEEP`` (windows of hours read these, not the samples)."""

    at = models.DateTimeField()
    queue = models.CharField(max_length=253)
    resource = models.CharField(max_length=253)
    allocated = models.FloatField(null=True)
    deserved = models.FloatField(null=True)
    capability = models.FloatField(null=True)
    guarantee = models.FloatField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["queue", "resource", "at"], name="queue_five_minute_key")
        ]
        indexes = [models.Index(fields=["at"], name="history_q5m_at_idx")]


class QueuePhaseFiveMinute(models.Model):
    """The mean count of a Queue's PodGroups in ``phase`` over the five minutes starting at ``at``:
    the sum of the counts over the number of the queue's phase samples in those minutes (a sample
    without the phase counts 0, as the samples are read)."""

    at = models.DateTimeField()
    queue = models.CharField(max_length=253)
    phase = models.CharField(max_length=64)
    count = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["queue", "phase", "at"], name="queue_phase_five_minute_key")
        ]
        indexes = [models.Index(fields=["at"], name="history_qp5m_at_idx")]


class AdmissionDaily(models.Model):
    """The admission waits of a Queue's gangs that started Running on the closed UTC ``day``
    (Admission rows with a known wait), written by the recorder (dashboard/history/rollup.py):
    ``n`` of them, ``total`` seconds, the exact ``p50`` and ``p90`` seconds
    (dashboard.volcano.history.percentile), ``top`` the highest Admission id among them (with
    ``n`` and ``total``, what tells a day's rows changed), and ``buckets`` {bucket: count} of the
    waits in rollup.wait_bucket's log-spaced buckets (window percentiles sum these)."""

    queue = models.CharField(max_length=253)
    day = models.DateField()
    n = models.IntegerField()
    total = models.FloatField()
    top = models.BigIntegerField()
    p50 = models.FloatField()
    p90 = models.FloatField()
    buckets = models.JSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["queue", "day"], name="admission_daily_key")]
        indexes = [models.Index(fields=["day"], name="history_admd_day_idx")]
