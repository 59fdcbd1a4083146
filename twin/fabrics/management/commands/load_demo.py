"""Load the demo super-node: 1,024 cards under leaf ICN switches with spines above."""
import hashlib

from django.core.management.base import BaseCommand

from twin.fabrics.models import Fabric
from twin.fabrics.services import snapshot_create
from twin.ingest import export_canonical
from twin.simcore.generate import supernode
from twin.simcore.units import counted

DEMO_NAME = "demo-supernode"


class Command(BaseCommand):
    help = "Store the generated 1,024-card demo super-node as a fabric (once)."

    def add_arguments(self, parser):
        parser.add_argument("--cards", type=int, default=1024)
        parser.add_argument("--name", default=DEMO_NAME)

    def handle(self, *args, cards: int, name: str, **options):
        if Fabric.objects.filter(name=name).exists():
            self.stdout.write(f"Fabric {name!r} already exists; left as it is.")
            return
        spec = supernode(cards=cards, name=name)
        snapshot = snapshot_create(
            fabric_name=name,
            spec=spec,
            source_name="generated: twin.simcore.generate.supernode",
            source_format="generated",
            checksum=hashlib.sha256(export_canonical(spec).encode()).hexdigest(),
        )
        self.stdout.write(self.style.SUCCESS(
            f"Loaded {name!r} v{snapshot.version}: {counted(snapshot.card_count, 'card')}, "
            f"{counted(snapshot.switch_count, 'switch')}, {counted(snapshot.link_count, 'link')}."
        ))
