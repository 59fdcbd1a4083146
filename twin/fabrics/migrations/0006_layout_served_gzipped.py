"""Stored layouts are kept as they are served: compact JSON, gzipped, with the ETag of the JSON
(sha256). Layouts stored before are converted; snapshots with none get theirs on first view."""
import gzip
import hashlib
import json

from django.db import migrations, models


def gzip_stored_layouts(apps, schema_editor):
    SnapshotLayout = apps.get_model("fabrics", "SnapshotLayout")
    for layout in SnapshotLayout.objects.iterator(chunk_size=1):  # a 64k layout is megabytes
        text = json.dumps(layout.data, separators=(",", ":")).encode()
        layout.gzip_json, layout.etag = gzip.compress(text, compresslevel=6), hashlib.sha256(text).hexdigest()
        layout.save(update_fields=["gzip_json", "etag"])


class Migration(migrations.Migration):

    dependencies = [
        ("fabrics", "0005_fabric_team"),
    ]

    operations = [
        migrations.AddField(model_name="snapshotlayout", name="gzip_json", field=models.BinaryField(default=b""), preserve_default=False),
        migrations.AddField(model_name="snapshotlayout", name="etag", field=models.CharField(default="", max_length=64), preserve_default=False),
        migrations.RunPython(gzip_stored_layouts, migrations.RunPython.noop),
        migrations.RemoveField(model_name="snapshotlayout", name="data"),
    ]
