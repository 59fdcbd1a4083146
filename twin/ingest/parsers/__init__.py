"""Built-in parsers; importing this package registers them."""

from twin.ingest.parsers import canonical
from twin.ingest.parsers import infiniband
from twin.ingest.parsers import nccl_xml
from twin.ingest.parsers import nvidia_smi
from twin.ingest.parsers import slurm
from twin.ingest.parsers import cabling
from twin.ingest.parsers import lldp

__all__ = ["canonical", "infiniband", "nccl_xml", "nvidia_smi", "slurm", "cabling", "lldp"]
