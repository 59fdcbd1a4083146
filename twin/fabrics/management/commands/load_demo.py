"""Load the demo super-node: 1,024 cards under leaf ICN switches with spines above."""
import hashlib

from django.utils import translation
from django.utils.translation import gettext, gettext_lazy as _

from twin.common.cli import TwinCommand
from twin.fabrics.models import Fabric
from twin.fabrics.services import snapshot_create
from twin.ingest import export_canonical
from twin.simcore.generate import supernode
from twin.simcore.translation import rendered
from twin.simcore.units import counted_list_phrase

DEMO_NAME = "demo-supernode"


class Command(TwinCommand):
    help = _("Store the generated 1,024-card demo super-node as a fabric (once).")

    def add_arguments(self, parser):
        parser.add_argument("--cards", type=int, default=1024)
        parser.add_argument("--name", default=DEMO_NAME)

    def handle(self, *args, cards: int, name: str, **options):
        if Fabric.objects.filter(name=name).exists():
            self.stdout.write(gettext("Fabric %(name)r already exists; left as it is.") % {"name": name})
            return
        spec = supernode(cards=cards, name=name)
        snapshot = snapshot_create(
            fabric_name=name,
            spec=spec,
            source_name="generated: twin.simcore.generate.supernode",
            source_format="generated",
            checksum=hashlib.sha256(export_canonical(spec).encode()).hexdigest(),
        )
        counts = counted_list_phrase({"card": snapshot.card_count, "switch": snapshot.switch_count, "link": snapshot.link_count})
        self.stdout.write(self.style.SUCCESS(
            gettext("Loaded %(name)r v%(version)s: %(counts)s.") % {"name": name, "version": snapshot.version, "counts": rendered(counts, translation)}
        ))
