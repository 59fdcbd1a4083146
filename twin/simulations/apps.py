from django.apps import AppConfig


class SimulationsConfig(AppConfig):
    name = "twin.simulations"
    label = "simulations"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from twin.fabrics.models import Snapshot

        from . import fanouts, whatifs  # noqa: F401 - register the fanned-out run kinds
        from .telemetry import snapshot_stored

        post_save.connect(snapshot_stored, sender=Snapshot, dispatch_uid="telemetry-index-of-new-snapshots")
