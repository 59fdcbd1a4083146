"""Archives of per-node files: a ``.tar``, ``.tar.gz``/``.tgz`` or ``.zip`` upload
expanded into its member files.

Ops collect one NCCL topology XML or ``nvidia-smi topo -m`` per host and pack
them; the twin reads the pack as if each member had been uploaded on its own.
Each member is named ``<archive name>/<member path>`` (``nodes.tgz/node01.xml``,
``nodes.tgz/topo/node01/nccl_topo.xml``) so that every later error names it, and
so that ``twin.ingest.hostlist`` can take the host from the member's file name
or, failing that, from its directory inside the archive.

The kind is told by the first bytes, not by the name: ``PK\\x03\\x04`` is a
zip, ``\\x1f\\x8b`` a gzip stream (which must hold a tar), ``ustar`` at offset
257 a tar. An upload is refused as a whole, with an ``ArchiveRefused`` that
names the archive, the member where there is one, and what was expected, when:

- it holds more entries than ``ArchiveLimits.max_members`` (directories count:
  they cost as much to read);
- a member would unpack to more than ``max_member_bytes`` or all members
  together to more than ``max_total_bytes``;
- a member, or the archive so far, unpacks to more than ``max_ratio`` times
  its compressed size (a zip bomb), once past ``RATIO_FLOOR`` bytes;
- a member's path is absolute or climbs out with ``..``, or the member is a
  symbolic or hard link, a device, a FIFO or a sparse file;
- a member is itself an archive or compressed file (one level only: limits
  that hold for the outer archive say nothing of an inner one, and ops pack
  per-node files once);
- a zip member is encrypted or uses a compression method Python cannot read,
  or the archive is damaged or truncated;
- nothing is left to read.

Directories and operating-system clutter (``__MACOSX/``, ``._*``,
``.DS_Store``, any other name starting with a dot, ``Thumbs.db``) are skipped
and listed in ``ExpandedArchive.skipped``.

Memory stays bounded: a tar member's size is in its header and a zip member's
in the central directory, so both are checked before a byte is inflated;
members are then read in ``CHUNK``-sized pieces and reading stops as soon as a
limit is passed, so a bomb is never inflated to be measured. The gzip stream
under a tar is itself counted, so what tar keeps for itself (long names, pax
headers) cannot grow without bound either.
"""

from __future__ import annotations

import gzip
import io
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from twin.ingest.errors import IngestError, Words
from twin.simcore.translation import LATER

__all__ = [
    "CHUNK",
    "RATIO_FLOOR",
    "ArchiveLimits",
    "ArchiveMember",
    "ArchiveRefused",
    "ExpandedArchive",
    "archive_kind",
    "expand_archive",
]

CHUNK = 1 << 16
# Below this many unpacked bytes no ratio is judged: a small file of blanks compresses 1000:1 harmlessly.
RATIO_FLOOR = 1 << 20
# What a tar stream holds besides member data: a 512-byte header and up to 511 bytes of padding
# a member, plus the end-of-archive record.
_TAR_OVERHEAD_PER_MEMBER = 1024
_TAR_OVERHEAD = 20 * 512

SUPPORTED = LATER.gettext(".tar, .tar.gz (.tgz) or .zip")
_REGULAR_FILES = LATER.gettext("regular files only")
_WHOLE_ZIP = LATER.gettext("a whole .zip archive")

# (magic bytes, offset, kind); "tar.gz", "tar" and "zip" are read, the others are named in the refusal.
_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"PK\x03\x04", 0, "zip"),
    (b"PK\x05\x06", 0, "zip"),  # an empty zip: only the end of the central directory
    (b"\x1f\x8b", 0, "tar.gz"),
    (b"ustar", 257, "tar"),
    (b"BZh", 0, "bzip2"),
    (b"\xfd7zXZ\x00", 0, "xz"),
    (b"\x28\xb5\x2f\xfd", 0, "zstd"),
    (b"7z\xbc\xaf\x27\x1c", 0, "7z"),
    (b"Rar!\x1a\x07", 0, "rar"),
)
READABLE_KINDS = ("tar", "tar.gz", "zip")

_SKIPPED_NAMES = frozenset({"__MACOSX", "Thumbs.db", "desktop.ini"})
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class ArchiveLimits:
    """What one archive may hold. The defaults suit a 2,048-host SuperPOD's per-node files
    (about 15 MB of XML) with room to spare; the web app sets them from its settings."""

    max_members: int = 20_000
    max_member_bytes: int = 200 * 1024 * 1024
    max_total_bytes: int = 400 * 1024 * 1024
    # Realistic per-node files reach about 80:1 in a .tar.gz (near-identical XMLs); deflate bombs ~1000:1.
    max_ratio: float = 200.0


@dataclass(frozen=True)
class ArchiveMember:
    """One file of an archive: ``name`` is ``<archive name>/<path>``; ``path`` is inside the archive."""

    name: str
    path: str
    data: bytes


@dataclass(frozen=True)
class ExpandedArchive:
    kind: str
    members: tuple[ArchiveMember, ...]
    skipped: tuple[str, ...]
    """Paths of the clutter left out (``__MACOSX/...``, ``.DS_Store``); directories are not listed."""


class ArchiveRefused(IngestError):
    """An archive that is not expanded. ``source`` is the archive, ``path`` the member (if any)."""


def archive_kind(data: bytes) -> str | None:
    """``"tar"``, ``"tar.gz"``, ``"zip"`` (readable), another archive or compression format
    (``"xz"``, ``"7z"``, ...; refused by ``expand_archive``), or ``None`` for a plain file."""
    return next((kind for magic, offset, kind in _MAGIC if data[offset : offset + len(magic)] == magic), None)


def expand_archive(name: str, data: bytes, *, limits: ArchiveLimits = ArchiveLimits()) -> ExpandedArchive:
    """The member files of the archive ``data`` uploaded as ``name``, or ``ArchiveRefused``.

    All or nothing: the first limit passed or member refused stops the reading.
    """
    kind = archive_kind(data)
    if kind not in READABLE_KINDS:
        raise ArchiveRefused(
            LATER.gettext("this is a %(kind)s archive or compressed file, which is not read here") % {"kind": kind} if kind else LATER.gettext("this is not an archive"),
            source=name,
            expected=LATER.gettext("a %(kinds)s archive (repack it, e.g. tar czf nodes.tgz node*/)") % {"kinds": SUPPORTED},
        )
    reader = _Expansion(name, len(data), limits)
    if kind == "zip":
        reader.read_zip(data)
    else:
        reader.read_tar(data, compressed=kind == "tar.gz")
    if not reader.members:
        raise ArchiveRefused(
            LATER.ngettext("the archive holds no files (only %(count)s hidden or system file)", "the archive holds no files (only %(count)s hidden or system files)", len(reader.skipped))
            % {"count": len(reader.skipped)}
            if reader.skipped
            else LATER.gettext("the archive holds no files"),
            source=name,
            expected=LATER.gettext("per-node files such as node01.xml or node01/nvidia-smi-topo.txt"),
        )
    return ExpandedArchive(kind, tuple(reader.members), tuple(reader.skipped))


class _CountingReader(io.RawIOBase):
    """The raw upload, counting the compressed bytes handed to the decompressor."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self.position = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        chunk = self._data[self.position : self.position + len(buffer)]
        buffer[: len(chunk)] = chunk
        self.position += len(chunk)
        return len(chunk)


class _LimitedStream(io.RawIOBase):
    """The inflated tar stream; stops with ``ArchiveRefused`` once it passes the total size
    (with room for tar's own headers) or the ratio to the compressed bytes read so far."""

    def __init__(self, inner, raw: _CountingReader, expansion: _Expansion) -> None:
        self._inner, self._raw, self._expansion = inner, raw, expansion
        self.produced = 0
        limits = expansion.limits
        self._most = limits.max_total_bytes + limits.max_members * _TAR_OVERHEAD_PER_MEMBER + _TAR_OVERHEAD

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        chunk = self._inner.read(min(len(buffer), CHUNK))
        self.produced += len(chunk)
        if self.produced > self._most:
            raise self._expansion.refused(LATER.gettext("it unpacks to more than %(bytes)s bytes") % {"bytes": self._expansion.limits.max_total_bytes}, limit="total")
        self._expansion.check_ratio(self.produced, self._raw.position, member=self._expansion.reading, whole=True)
        buffer[: len(chunk)] = chunk
        return len(chunk)


_END_SEEN = "_twin_header_error"


class _TarInfo(tarfile.TarInfo):
    """Notes on the tar file why the last header could not be read (see ``read_tar``)."""

    @classmethod
    def fromtarfile(cls, tar):
        try:
            return super().fromtarfile(tar)
        except tarfile.HeaderError as error:
            setattr(tar, _END_SEEN, type(error))
            raise


class _Expansion:
    """The state of reading one archive: its members so far and what they add up to."""

    def __init__(self, name: str, size: int, limits: ArchiveLimits) -> None:
        self.name, self.size, self.limits = name, size, limits
        self.members: list[ArchiveMember] = []
        self.skipped: list[str] = []
        self.entries = 0
        self.total = 0
        self.reading: str | None = None
        """The member being read, if any: where a limit of the whole archive was passed."""
        self._seen: set[str] = set()

    # -- refusals --------------------------------------------------------------------------

    def refused(self, message: Words, *, member: str | None = None, expected: Words | None = None, limit: str | None = None) -> ArchiveRefused:
        if expected is None and limit is not None:
            limits = self.limits
            expected = {
                "members": LATER.gettext("at most %(count)s entries (split the archive)") % {"count": limits.max_members},
                "member": LATER.gettext("members of at most %(bytes)s bytes (upload that file on its own)") % {"bytes": limits.max_member_bytes},
                "total": LATER.gettext("at most %(bytes)s bytes unpacked in all (split the archive)") % {"bytes": limits.max_total_bytes},
                "ratio": LATER.gettext("at most %(ratio)s times smaller packed than unpacked (a zip bomb is not a topology)") % {"ratio": f"{limits.max_ratio:g}"},
            }[limit]
        return ArchiveRefused(message, source=self.name, path=member, expected=expected)

    def check_ratio(self, unpacked: int, packed: int, *, member: str | None, whole: bool = False) -> None:
        """Refuses ``unpacked`` bytes from ``packed`` over the ratio: a member's own (``whole``
        False) or the archive's so far (``whole``; ``member`` then names where reading stopped)."""
        if unpacked > RATIO_FLOOR and unpacked > self.limits.max_ratio * max(packed, 1):
            sizes = {"ratio": f"{self.limits.max_ratio:g}", "unpacked": unpacked, "packed": packed}
            raise self.refused(
                LATER.gettext("the archive unpacks to more than %(ratio)s times its compressed size (%(unpacked)s bytes from %(packed)s so far)") % sizes
                if whole
                else LATER.gettext("this member unpacks to more than %(ratio)s times its compressed size (%(unpacked)s bytes from %(packed)s so far)") % sizes,
                member=member,
                limit="ratio",
            )

    # -- what every member goes through -----------------------------------------------------

    def count_entry(self, member: str) -> None:
        self.entries += 1
        if self.entries > self.limits.max_members:
            raise self.refused(LATER.gettext("it holds more than %(count)s entries") % {"count": self.limits.max_members}, member=member, limit="members")

    def member_path(self, raw_path: str) -> str | None:
        """The normalised path of a member, ``None`` for a directory entry; refuses paths
        that would land outside the archive."""
        text = raw_path.replace("\\", "/")
        if text.startswith("/") or _DRIVE.match(text):
            raise self.refused(LATER.gettext("the member has an absolute path"), member=raw_path, expected=LATER.gettext("paths relative to the archive"))
        parts = [part for part in text.split("/") if part not in ("", ".")]
        if ".." in parts:
            raise self.refused(LATER.gettext("the member's path leaves the archive (..)"), member=raw_path, expected=LATER.gettext("paths inside the archive"))
        return "/".join(parts) or None

    def skip_clutter(self, path: str) -> bool:
        parts = path.split("/")
        if any(part.startswith(".") or part in _SKIPPED_NAMES for part in parts):
            self.skipped.append(path)
            return True
        return False

    def admit(self, path: str, size: int) -> None:
        """Checks a regular member by its declared size, before any of it is read."""
        if path in self._seen:
            raise self.refused(LATER.gettext("two members have this path"), member=path, expected=LATER.gettext("each path once"))
        self._seen.add(path)
        if size > self.limits.max_member_bytes:
            raise self.refused(LATER.gettext("the member unpacks to %(bytes)s bytes") % {"bytes": size}, member=path, limit="member")
        if self.total + size > self.limits.max_total_bytes:
            raise self.refused(LATER.gettext("it unpacks to more than %(bytes)s bytes") % {"bytes": self.limits.max_total_bytes}, member=path, limit="total")

    def keep(self, path: str, chunks: Iterator[bytes], *, packed_so_far) -> None:
        """Reads a member chunk by chunk, stopping at the first limit passed; ``packed_so_far()``
        gives the compressed bytes this member has used."""
        pieces: list[bytes] = []
        size = 0
        for chunk in chunks:
            size += len(chunk)
            if size > self.limits.max_member_bytes:
                raise self.refused(LATER.gettext("the member unpacks to more than %(bytes)s bytes") % {"bytes": self.limits.max_member_bytes}, member=path, limit="member")
            if self.total + size > self.limits.max_total_bytes:
                raise self.refused(LATER.gettext("it unpacks to more than %(bytes)s bytes") % {"bytes": self.limits.max_total_bytes}, member=path, limit="total")
            self.check_ratio(size, packed_so_far(), member=path)
            pieces.append(chunk)
        data = b"".join(pieces)
        inner = archive_kind(data)
        if inner is not None:
            raise self.refused(
                LATER.gettext("the member is itself a %(kind)s file") % {"kind": inner},
                member=path,
                expected=LATER.gettext("the per-node files themselves, in one archive (nested archives are not unpacked)"),
            )
        self.total += size
        self.members.append(ArchiveMember(f"{self.name}/{path}", path, data))

    # -- tar ----------------------------------------------------------------------------------

    def read_tar(self, data: bytes, *, compressed: bool) -> None:
        raw = _CountingReader(data)
        inflated = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        stream = _LimitedStream(inflated, raw, self)
        whole = LATER.gettext("a gzip-compressed tar archive, whole") if compressed else LATER.gettext("a tar archive, whole")
        try:
            with tarfile.open(fileobj=stream, mode="r|", tarinfo=_TarInfo) as tar:
                for info in tar:
                    self._tar_member(tar, info, raw)
                # tarfile ends its iteration quietly on a missing or broken header, not only on
                # the end-of-archive block: only that block says that nothing was cut off.
                if getattr(tar, _END_SEEN, None) is not tarfile.EOFHeaderError:
                    raise self.refused(
                        LATER.gettext("the archive is truncated or damaged after %(member)s") % {"member": self.members[-1].path}
                        if self.members
                        else LATER.gettext("the archive is truncated or damaged"),
                        expected=whole,
                    )
        except ArchiveRefused:
            raise
        except tarfile.ReadError as error:
            if not self.entries and compressed:
                raise self.refused(
                    LATER.gettext("this is gzip-compressed but holds no tar archive"),
                    expected=LATER.gettext("a %(kinds)s archive of the files (gunzip a single compressed file before uploading it)") % {"kinds": SUPPORTED},
                ) from None
            raise self.refused(LATER.gettext("the archive is truncated or damaged (%(error)s)") % {"error": str(error)}, expected=whole) from None
        except (EOFError, gzip.BadGzipFile, zlib.error) as error:
            raise self.refused(LATER.gettext("the archive is truncated or damaged (%(error)s)") % {"error": str(error)}, expected=whole) from None

    def _tar_member(self, tar: tarfile.TarFile, info: tarfile.TarInfo, raw: _CountingReader) -> None:
        self.count_entry(info.name)
        path = self.member_path(info.name)
        if info.isdir() or path is None:
            return
        if self.skip_clutter(path):
            return
        if info.issym() or info.islnk():
            link = LATER.gettext("the member is a symbolic link (to %(target)s)") if info.issym() else LATER.gettext("the member is a hard link (to %(target)s)")
            raise self.refused(link % {"target": repr(info.linkname)}, member=path, expected=_REGULAR_FILES)
        if info.issparse() or not info.isreg():
            if info.issparse():
                what = LATER.gettext("the member is a sparse file")
            elif info.ischr() or info.isblk() or info.isfifo():
                what = LATER.gettext("the member is a device or FIFO")
            else:
                what = LATER.gettext("the member is a special entry")
            raise self.refused(what, member=path, expected=_REGULAR_FILES)
        self.admit(path, info.size)
        extracted = tar.extractfile(info)
        start = raw.position
        self.reading = path
        self.keep(path, iter(lambda: extracted.read(CHUNK), b""), packed_so_far=lambda: raw.position - start)
        self.reading = None

    # -- zip ----------------------------------------------------------------------------------

    def read_zip(self, data: bytes) -> None:
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as error:
            raise self.refused(LATER.gettext("the zip archive cannot be read (%(error)s)") % {"error": str(error)}, expected=_WHOLE_ZIP) from None
        with archive:
            infos = archive.infolist()
            if len(infos) > self.limits.max_members:
                raise self.refused(LATER.gettext("it holds %(count)s entries") % {"count": len(infos)}, limit="members")
            # The central directory declares every size: refuse a bomb before inflating any of it.
            declared = sum(info.file_size for info in infos if not info.is_dir())
            if declared > self.limits.max_total_bytes:
                raise self.refused(LATER.gettext("it declares %(bytes)s bytes unpacked") % {"bytes": declared}, limit="total")
            self.check_ratio(declared, self.size, member=None, whole=True)
            for info in infos:
                self._zip_member(archive, info)

    def _zip_member(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
        self.count_entry(info.filename)
        path = self.member_path(info.filename)
        if info.is_dir() or path is None:
            return
        if self.skip_clutter(path):
            return
        file_type = stat.S_IFMT(info.external_attr >> 16)
        if info.create_system == 3 and file_type:  # made on Unix: the mode says what the entry is
            if file_type == stat.S_IFLNK:
                raise self.refused(LATER.gettext("the member is a symbolic link"), member=path, expected=_REGULAR_FILES)
            if file_type != stat.S_IFREG:
                raise self.refused(LATER.gettext("the member is a device, FIFO or other special file"), member=path, expected=_REGULAR_FILES)
        if info.flag_bits & 0x1:
            raise self.refused(LATER.gettext("the member is encrypted"), member=path, expected=LATER.gettext("members without a password"))
        self.admit(path, info.file_size)
        self.check_ratio(info.file_size, info.compress_size, member=path)
        try:
            with archive.open(info) as member:
                # zipfile stops at the declared size and checks the CRC, so a member cannot outgrow it.
                self.keep(path, iter(lambda: member.read(CHUNK), b""), packed_so_far=lambda: info.compress_size)
        except NotImplementedError as error:
            raise self.refused(
                LATER.gettext("the member cannot be unpacked (%(error)s)") % {"error": str(error)},
                member=path,
                expected=LATER.gettext("members stored or compressed with deflate, bzip2 or lzma"),
            ) from None
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
            raise self.refused(LATER.gettext("the member is damaged (%(error)s)") % {"error": str(error)}, member=path, expected=_WHOLE_ZIP) from None
