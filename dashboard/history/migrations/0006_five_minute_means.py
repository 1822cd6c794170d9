from django.db import migrations, models

from dashboard.history.rollup import FIVE_MINUTE_KEEP, HOUR, five_minute_phases, five_minute_usage


def fill_five_minutes(apps, schema_editor):
    """The five-minute means of the hours already rolled into hourly means, for the last
    FIVE_MINUTE_KEEP of them (the recorder writes them with the hours it rolls from then on)."""
    using = schema_editor.connection.alias
    hourly = apps.get_model("history", "QueueHourly")
    newest = hourly.objects.using(using).order_by("-hour").values_list("hour", flat=True).first()
    if newest is None:
        return
    end = newest + HOUR
    start = end - FIVE_MINUTE_KEEP
    sample = apps.get_model("history", "QueueSample")
    phase_sample = apps.get_model("history", "QueuePhaseSample")
    five = apps.get_model("history", "QueueFiveMinute")
    phase_five = apps.get_model("history", "QueuePhaseFiveMinute")
    usage = five_minute_usage(
        sample.objects.using(using)
        .filter(at__gte=start, at__lt=end)
        .values_list("queue", "resource", "at", "allocated", "deserved", "capability", "guarantee")
        .iterator(chunk_size=20_000)
    )
    five.objects.using(using).bulk_create(
        [
            five(at=at, queue=q, resource=r, allocated=a, deserved=d, capability=c, guarantee=g)
            for q, r, at, a, d, c, g in usage
        ],
        batch_size=5000,
    )
    phases = five_minute_phases(
        phase_sample.objects.using(using)
        .filter(at__gte=start, at__lt=end)
        .values_list("queue", "phase", "at", "count")
        .iterator(chunk_size=20_000)
    )
    phase_five.objects.using(using).bulk_create(
        [phase_five(at=at, queue=q, phase=p, count=n) for q, p, at, n in phases], batch_size=5000
    )


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0005_podlifetime_vanished"),
    ]

    operations = [
        migrations.CreateModel(
            name="QueueFiveMinute",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("at", models.DateTimeField()),
                ("queue", models.CharField(max_length=253)),
                ("resource", models.CharField(max_length=253)),
                ("allocated", models.FloatField(null=True)),
                ("deserved", models.FloatField(null=True)),
                ("capability", models.FloatField(null=True)),
                ("guarantee", models.FloatField(null=True)),
            ],
            options={
                "indexes": [models.Index(fields=["at"], name="history_q5m_at_idx")],
                "constraints": [
                    models.UniqueConstraint(fields=("queue", "resource", "at"), name="queue_five_minute_key")
                ],
            },
        ),
        migrations.CreateModel(
            name="QueuePhaseFiveMinute",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("at", models.DateTimeField()),
                ("queue", models.CharField(max_length=253)),
                ("phase", models.CharField(max_length=64)),
                ("count", models.FloatField()),
            ],
            options={
                "indexes": [models.Index(fields=["at"], name="history_qp5m_at_idx")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("queue", "phase", "at"), name="queue_phase_five_minute_key"
                    )
                ],
            },
        ),
        migrations.RunPython(fill_five_minutes, migrations.RunPython.noop),
    ]
