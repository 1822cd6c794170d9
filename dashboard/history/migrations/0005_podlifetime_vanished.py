from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("history", "0004_admissions"),
    ]

    operations = [
        migrations.AddField(
            model_name="podlifetime",
            name="vanished",
            field=models.BooleanField(default=False),
        ),
    ]
