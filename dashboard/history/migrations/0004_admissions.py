from datetime import UTC

from django.db import migrations, models
from django.db.models import Max, Min, Q
from django.db.models.functions import Coalesce

from dashboard.volcano.history import admission_wait


def fill_admissions(apps, schema_editor):
    """One Admission per PodGroup the recorded transitions show start Running: its first Running
    and first Inqueue (the PodGroup's own times where it carried them, else when seen), the
    wait by dashboard.volcano.history.admission_wait, as the recorder writes them."""
    using = schema_editor.connection.alias
    transition = apps.get_model("history", "PhaseTransition")
    admission = apps.get_model("history", "Admission")
    at = Coalesce("object_time", "seen_at")
    rows = (
        transition.objects.using(using)
        .filter(kind="PodGroup", phase__in=("Inqueue", "Running"))
        .values("uid")
        .annotate(
            first_inqueue=Min(at, filter=Q(phase="Inqueue")),
            first_running=Min(at, filter=Q(phase="Running")),
            made=Max("created"),
            in_queue=Max("queue"),
            in_namespace=Max("namespace"),
            named=Max("name"),
        )
        .filter(first_running__isnull=False)
        .order_by()
        .values_list("uid", "in_queue", "in_namespace", "named", "made", "first_inqueue", "first_running")
    )
    batch = []
    for uid, queue, namespace, name, made, inqueue, running in rows.iterator(chunk_size=10_000):
        wait = admission_wait(made, inqueue, running)
        batch.append(
            admission(
                uid=uid,
                queue=queue,
                namespace=namespace,
                name=name,
                running=running,
                day=running.astimezone(UTC).date(),
                wait=wait.total_seconds() if wait is not None else None,
            )
        )
        if len(batch) >= 5000:
            admission.objects.using(using).bulk_create(batch)
            batch = []
    admission.objects.using(using).bulk_create(batch)


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0003_hourly_rollups"),
    ]

    operations = [
        migrations.CreateModel(
            name="Admission",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("uid", models.CharField(max_length=64, unique=True)),
                ("queue", models.CharField(max_length=253)),
                ("namespace", models.CharField(max_length=253)),
                ("name", models.CharField(max_length=253)),
                ("running", models.DateTimeField()),
                ("day", models.DateField()),
                ("wait", models.FloatField(null=True)),
            ],
            options={
                "indexes": [
                    models.Index(fields=["queue", "day", "wait", "running"], name="history_adm_day_idx"),
                    models.Index(fields=["queue", "wait", "running"], name="history_adm_wait_idx"),
                    models.Index(fields=["running"], name="history_adm_running_idx"),
                ],
            },
        ),
        migrations.RunPython(fill_admissions, migrations.RunPython.noop, elidable=True),
    ]
