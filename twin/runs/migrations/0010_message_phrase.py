from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("runs", "0009_leases"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="message_phrase",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="runcell",
            name="label_phrase",
            field=models.JSONField(blank=True, help_text="The label as a Phrase, rendered in the reader's language", null=True),
        ),
    ]
