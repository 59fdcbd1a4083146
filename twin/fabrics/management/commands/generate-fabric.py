"""Build a fabric from design rules and store it as a snapshot (for what-ifs and tests)."""
import hashlib
import json

from django.core.management.base import CommandError
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy as _

from twin.common.cli import TwinCommand
from twin.common.errors import core_error_text

from twin.fabrics.services import snapshot_create
from twin.ingest import export_canonical
from twin.simcore.errors import TwinCoreError
from twin.simcore.generate import fat_tree, rail_optimised, supernode_cluster
from twin.simcore.translation import rendered
from twin.simcore.units import counted_list_phrase, counted_phrase

DESIGNS = ("fat-tree", "rail", "supernodes")


class Command(TwinCommand):
    help = _("Generate a fabric design (fat-tree, rail-optimised, or ICN super-nodes joined by a scale-out network) as a snapshot.")

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True, help=_("Fabric name (a new snapshot if it exists)"))
        parser.add_argument("--cards", type=int, required=True, help=_("Cards in all"))
        parser.add_argument("--design", choices=DESIGNS, default="fat-tree")
        parser.add_argument("--radix", type=int, default=64, help=_("Switch ports"))
        parser.add_argument("--tiers", choices=("auto", "2", "3"), default="auto")
        parser.add_argument("--oversubscription", type=float, default=1.0, help=_("Leaf down:up bandwidth ratio R (R:1)"))
        parser.add_argument("--link-gbps", type=float, default=400.0)
        parser.add_argument("--hop-latency-ns", type=float, default=100.0, help=_("Switch forwarding latency"))
        parser.add_argument("--cable-latency-ns", type=float, default=10.0)
        parser.add_argument("--cards-per-host", type=int, default=8)
        parser.add_argument("--rails", type=int, help=_("rail design: cards per server (one rail leaf per card index)"))
        parser.add_argument("--supernodes", type=int, help=_("supernodes design: how many super-nodes share the cards"))
        parser.add_argument("--scale-out-gbps", type=float, default=200.0, help=_("supernodes design: scale-out link speed"))
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args, name, cards, design, radix, tiers, oversubscription, link_gbps, hop_latency_ns,
               cable_latency_ns, cards_per_host, rails, supernodes, scale_out_gbps, as_json, **options):
        common = {"radix": radix, "tiers": None if tiers == "auto" else int(tiers), "link_gbps": link_gbps,
                  "cable_latency_ns": cable_latency_ns, "switch_latency_ns": hop_latency_ns, "name": name}
        try:
            if design == "fat-tree":
                spec = fat_tree(endpoints=cards, oversubscription=oversubscription, cards_per_host=cards_per_host, **common)
            elif design == "rail":
                per_server = rails or cards_per_host
                if cards % per_server:
                    raise CommandError(gettext("--cards %(cards)s is not a whole number of %(per_server)s-card servers") % {"cards": cards, "per_server": per_server})
                spec = rail_optimised(servers=cards // per_server, cards_per_server=per_server, oversubscription=oversubscription, **common)
            else:
                count = supernodes or 2
                if cards % count:
                    raise CommandError(gettext("--cards %(cards)s does not split evenly into %(count)s super-nodes") % {"cards": cards, "count": count})
                spec = supernode_cluster(supernodes=count, cards_per_supernode=cards // count, cards_per_host=cards_per_host,
                                         scale_out_gbps=scale_out_gbps, **common)
        except TwinCoreError as error:
            raise CommandError(core_error_text(error)) from error
        snapshot = snapshot_create(
            fabric_name=name, spec=spec, source_name=f"generated: {design}", source_format="generated",
            checksum=hashlib.sha256(export_canonical(spec).encode()).hexdigest(),
        )
        summary = {"fabric": name, "snapshot": snapshot.version, "design": design, **snapshot.summary, "attrs": snapshot.attrs}
        if as_json:
            self.stdout.write(json.dumps(summary, indent=2))
        else:
            words = {
                "name": name, "version": snapshot.version, "design": design,
                "kinds": rendered(counted_list_phrase(snapshot.summary["nodes_by_kind"]), translation),
                "tiers": rendered(counted_list_phrase(snapshot.summary["switches_by_tier"]), translation),
                "links": rendered(counted_phrase(snapshot.link_count, "link"), translation),
            }  # fmt: skip
            self.stdout.write(self.style.SUCCESS(gettext("%(name)s v%(version)s (%(design)s): %(kinds)s (%(tiers)s); %(links)s") % words))
