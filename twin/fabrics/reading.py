"""Reading uploaded topology files (unpack archives, decode, detect, parse, merge, complete) in a
child process with hard limits on its memory and time, so that a file that makes a parser blow up,
or an archive that unpacks to too much or too many members, costs a child process, never the web
server or the worker that received it.

Children fork from a forkserver that has imported the parsers once (a fresh child in
milliseconds, never a copy of a web process with its threads and database connections). The
child imports no Django: `read_files` is plain Python on `twin.ingest`.
"""
import hashlib
import logging
import multiprocessing
import resource
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from twin.ingest import IngestError, ParseOptions, detect_format, parse_fabric
from twin.ingest.archive import ArchiveLimits, archive_kind, expand_archive
from twin.ingest.completion import Completion, complete_fabric
from twin.ingest.merge import merge_fabrics
from twin.simcore.translation import LATER

__all__ = ("SourceFile", "decode_text", "read_files", "read_files_isolated", "FilesRead", "FilesRefused")

log = logging.getLogger(__name__)

# Imported once by the forkserver (this module too: the child runs child_reads from it).
PARSER_MODULES = ["twin.fabrics.reading", "twin.ingest", "twin.ingest.archive", "twin.ingest.completion", "twin.ingest.merge"]


@dataclass(frozen=True)
class SourceFile:
    """One uploaded file: its name as the user knows it, and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class FilesRead:
    """`source_names`: the files read, each archive's members in its place (`<archive>/<path>`);
    `checksum`: SHA-256 over the SHA-256 of each of them."""

    format_name: str
    completion: Completion
    source_names: tuple[str, ...]
    checksum: str


@dataclass(frozen=True)
class FilesRefused:
    """Why the files cannot be read: a message, and each file's problems (IngestError.as_dict)."""

    message: str
    files: list[dict]


def decode_text(source: SourceFile) -> str:
    """UTF-8 text of an upload, or an IngestError saying why it is not."""
    if not source.data.strip():
        raise IngestError(LATER.gettext("the file is empty"), source=source.name, expected=LATER.gettext("a topology file"))
    if b"\x00" in source.data[:65536]:
        raise IngestError(LATER.gettext("this is a binary file"), source=source.name, expected=LATER.gettext("a text file (a topology dump, XML, JSON, YAML or CSV)"))
    try:
        return source.data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = source.data[: error.start].count(b"\n") + 1
        raise IngestError(
            LATER.gettext("byte %(byte)s at offset %(offset)s is not UTF-8") % {"byte": f"0x{source.data[error.start]:02x}", "offset": error.start},
            source=source.name,
            line=line,
            expected=LATER.gettext("UTF-8 text (convert the file, e.g. with iconv -t UTF-8)"),
        ) from None


def files_unpacked(files: Sequence[SourceFile], limits: ArchiveLimits) -> list[SourceFile] | FilesRefused:
    """`files` with each archive (.tar, .tar.gz, .zip, told by its bytes) replaced by its member
    files, named `<archive>/<member path>`, in place; other files are kept as they are. An archive
    over a limit or holding something that is not a plain file is refused: every refused archive
    is listed."""
    unpacked: list[SourceFile] = []
    failures: list[IngestError] = []
    for source in files:
        if archive_kind(source.data) is None:
            unpacked.append(source)
            continue
        try:
            archive = expand_archive(source.name, source.data, limits=limits)
        except IngestError as error:
            failures.append(error)
            continue
        unpacked.extend(SourceFile(name=member.name, data=member.data) for member in archive.members)
    if failures:
        return FilesRefused("; ".join(str(error) for error in failures), [error.as_dict() for error in failures])
    return unpacked


def read_files(files: Sequence[SourceFile], *, fmt: str | None, options: ParseOptions, fabric_name: str, archive_limits: ArchiveLimits) -> FilesRead | FilesRefused:
    """Every file read (archives unpacked first; several files describing one fabric merged) and
    completed, or why not: every file's problems at once."""
    files = files_unpacked(files, archive_limits)
    if isinstance(files, FilesRefused):
        return files
    parsed = []
    failures: list[IngestError] = []
    for source in files:
        try:
            text = decode_text(source)
            # Without a detected format, parse_fabric raises an IngestError naming the known ones.
            format_name = fmt or detect_format(text)
            parsed.append((source.name, format_name, parse_fabric(text, source_name=source.name, format=format_name, options=options)))
        except IngestError as error:
            failures.append(error)
    if failures:
        return FilesRefused("; ".join(str(error) for error in failures), [error.as_dict() for error in failures])
    try:
        if len(parsed) == 1:
            _, format_name, spec = parsed[0]
        else:
            spec = merge_fabrics([(name, spec) for name, _, spec in parsed], name=fabric_name or parsed[0][2].name)
            format_name = "+".join(sorted({format_name for _, format_name, _ in parsed}))
        completion = complete_fabric(spec, options=options, formats={name: format_name for name, format_name, _ in parsed})
    except IngestError as error:
        if error.source is None:
            error.source = " + ".join(source.name for source in files)
        return FilesRefused(str(error), [error.as_dict()])
    checksum = hashlib.sha256(b"".join(hashlib.sha256(source.data).digest() for source in files)).hexdigest()
    return FilesRead(format_name, completion, tuple(source.name for source in files), checksum)


@cache
def forkserver():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PARSER_MODULES)
    return context


def child_reads(sender, files, fmt, options, fabric_name, archive_limits, memory_bytes: int, time_limit_s: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (time_limit_s, time_limit_s + 5))  # SIGXCPU, then SIGKILL
    try:
        outcome = read_files(files, fmt=fmt, options=options, fabric_name=fabric_name, archive_limits=archive_limits)
    except MemoryError:
        outcome = "memory"
    sender.send(outcome)
    sender.close()


def read_files_isolated(
    files: Sequence[SourceFile], *, fmt: str | None, options: ParseOptions, fabric_name: str, archive_limits: ArchiveLimits, memory_bytes: int, time_limit_s: int,
) -> FilesRead | FilesRefused:
    """`read_files` in a child process of at most `memory_bytes` of address space and
    `time_limit_s` of CPU and of wall-clock time; past either, the files are refused with the
    limit they hit."""
    context = forkserver()
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=child_reads, args=(sender, list(files), fmt, options, fabric_name, archive_limits, memory_bytes, time_limit_s), daemon=True)
    child.start()
    sender.close()
    try:
        outcome = receiver.recv() if receiver.poll(time_limit_s) else "time"
    except EOFError:  # died without a word: out of CPU time, or killed (the kernel's OOM killer)
        child.join()
        outcome = "time" if child.exitcode == -signal.SIGXCPU else "died"
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join()
    if isinstance(outcome, FilesRead | FilesRefused):
        return outcome
    gib = memory_bytes / 2**30
    reason = {
        "memory": LATER.gettext("reading it needs more than %(gib)s GiB of memory") % {"gib": f"{gib:.3g}"},
        "time": LATER.gettext("reading it takes more than %(seconds)s s") % {"seconds": time_limit_s},
    }.get(outcome, LATER.gettext("the process reading it stopped (exit code %(code)s)") % {"code": str(child.exitcode)})
    error = IngestError(
        reason, source=", ".join(source.name for source in files), expected=LATER.gettext("a smaller file, or higher TWIN_PARSE_MEMORY_BYTES / TWIN_PARSE_TIME_LIMIT_S"),
    )
    log.warning("upload refused: %s", error)
    return FilesRefused(str(error), [error.as_dict()])
