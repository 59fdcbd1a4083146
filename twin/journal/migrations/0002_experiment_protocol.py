from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("journal", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="experiment",
            name="protocol",
            field=models.CharField(blank=True, help_text="As configured for the run (NCCL_PROTO: LL, LL128 or Simple); empty = library default", max_length=16),
        ),
        migrations.AlterField(
            model_name="experiment",
            name="predicted",
            field=models.JSONField(default=list, help_text="[{size_bytes, busbw_GBps, time_s, algorithm, protocol, error}] by the twin"),
        ),
    ]
