"""Calibrated transports stored before the protocol model: drop the per-domain step and chunk
overheads it replaced (per-protocol latencies now), keep what still means the same thing."""

from django.db import migrations

REPLACED = ("step_overhead_ns", "message_overhead_ns", "chunk_bytes")


def drop_replaced_parameters(apps, schema_editor):
    Fabric = apps.get_model("fabrics", "Fabric")
    for fabric in Fabric.objects.exclude(transport={}):
        transport = {
            name: {key: value for key, value in section.items() if key not in REPLACED} if isinstance(section, dict) else section
            for name, section in fabric.transport.items()
        }
        if transport != fabric.transport:
            fabric.transport = {name: section for name, section in transport.items() if section != {}}
            fabric.save(update_fields=["transport"])


class Migration(migrations.Migration):
    dependencies = [("fabrics", "0003_fabric_calibration")]

    operations = [migrations.RunPython(drop_replaced_parameters, migrations.RunPython.noop)]
