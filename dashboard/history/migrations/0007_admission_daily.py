from datetime import UTC, datetime

from django.db import migrations, models

from dashboard.history.rollup import DAY, day_start, wait_days


def fill_admission_daily(apps, schema_editor):
    """The rollups of the admission waits of every closed UTC day (before today's) the
    Admission rows hold, as the recorder rolls them from then on (dashboard/history/rollup.py)."""
    using = schema_editor.connection.alias
    admission = apps.get_model("history", "Admission")
    daily = apps.get_model("history", "AdmissionDaily")
    runs = admission.objects.using(using).order_by("running").values_list("running", flat=True)
    oldest = runs.first()
    if oldest is None:
        return
    day, today = oldest.astimezone(UTC).date(), datetime.now(UTC).date()
    while day < today:
        rows = (
            admission.objects.using(using)
            .filter(running__gte=day_start(day), running__lt=day_start(day + DAY), wait__isnull=False)
            .values_list("queue", "wait", "pk")
        )
        rolled = wait_days(rows.iterator(chunk_size=20_000))
        daily.objects.using(using).bulk_create(
            [
                daily(queue=queue, day=day, n=n, total=total, top=top, p50=p50, p90=p90, buckets=buckets)
                for queue, (n, total, top, p50, p90, buckets) in rolled.items()
            ]
        )
        day += DAY


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0006_five_minute_means"),
    ]

    operations = [
        migrations.CreateModel(
            name="AdmissionDaily",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("queue", models.CharField(max_length=253)),
                ("day", models.DateField()),
                ("n", models.IntegerField()),
                ("total", models.FloatField()),
                ("top", models.BigIntegerField()),
                ("p50", models.FloatField()),
                ("p90", models.FloatField()),
                ("buckets", models.JSONField(default=dict)),
            ],
            options={
                "indexes": [models.Index(fields=["day"], name="history_admd_day_idx")],
                "constraints": [models.UniqueConstraint(fields=("queue", "day"), name="admission_daily_key")],
            },
        ),
        migrations.RunPython(fill_admission_daily, migrations.RunPython.noop, elidable=True),
    ]
