from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("runs", "0010_message_phrase"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="error_phrase",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
