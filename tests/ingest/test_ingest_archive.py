"""twin.ingest.archive: .tar, .tar.gz and .zip uploads expanded into their members, and every
limit refused with a reason that names the archive and the member."""

import gzip
import io
import random
import stat
import tarfile
import tracemalloc
import zipfile

import pytest

from twin.ingest.archive import RATIO_FLOOR, ArchiveLimits, ArchiveRefused, archive_kind, expand_archive

XML = b'<system version="1">\n  <cpu numaid="0"/>\n</system>\n'


def tar_bytes(members, mode: str = "w:gz") -> bytes:
    """An archive of ``(path, data)`` members; ``data`` None makes a directory, a TarInfo is added as is."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
                continue
            path, data = member
            info = tarfile.TarInfo(path)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zip_bytes(members, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for path, data in members:
            archive.writestr(path, data)
    return buffer.getvalue()


class Zeros(io.RawIOBase):
    """``size`` zero bytes, made as they are read (a bomb is built without holding it)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


def tar_bomb(size: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("node01.xml")
        info.size = size
        tar.addfile(info, Zeros(size))
    return buffer.getvalue()


def refusal(name: str, data: bytes, **limits) -> ArchiveRefused:
    with pytest.raises(ArchiveRefused) as caught:
        expand_archive(name, data, limits=ArchiveLimits(**limits))
    return caught.value


# -- what is read -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["w:gz", "w"], ids=["tar.gz", "tar"])
def test_tar_members_are_named_after_the_archive(mode):
    data = tar_bytes([("topo", None), ("topo/node01", None), ("topo/node01/nccl_topo.xml", XML), ("./node02.xml", XML)], mode)
    expanded = expand_archive("nodes.tgz", data)
    assert expanded.kind == ("tar.gz" if mode == "w:gz" else "tar")
    assert [member.name for member in expanded.members] == ["nodes.tgz/topo/node01/nccl_topo.xml", "nodes.tgz/node02.xml"]
    assert [member.path for member in expanded.members] == ["topo/node01/nccl_topo.xml", "node02.xml"]
    assert all(member.data == XML for member in expanded.members)


def test_zip_members_and_clutter():
    data = zip_bytes([
        ("hosts/", b""),
        ("hosts/node01.xml", XML),
        ("hosts\\node02.xml", XML),  # Windows tools may write backslashes
        ("__MACOSX/hosts/._node01.xml", b"\x00\x05\x16\x07"),
        ("hosts/.DS_Store", b"\x00\x00\x00\x01Bud1"),
        ("hosts/Thumbs.db", b"\xd0\xcf"),
    ])
    expanded = expand_archive("hosts.zip", data)
    assert expanded.kind == "zip"
    assert [member.name for member in expanded.members] == ["hosts.zip/hosts/node01.xml", "hosts.zip/hosts/node02.xml"]
    assert expanded.skipped == ("__MACOSX/hosts/._node01.xml", "hosts/.DS_Store", "hosts/Thumbs.db")


def test_the_kind_comes_from_the_bytes_not_the_name():
    assert archive_kind(tar_bytes([("a.xml", XML)])) == "tar.gz"
    assert archive_kind(tar_bytes([("a.xml", XML)], "w")) == "tar"
    assert archive_kind(zip_bytes([("a.xml", XML)])) == "zip"
    assert archive_kind(zip_bytes([])) == "zip"
    assert archive_kind(XML) is None and archive_kind(b"") is None
    assert archive_kind(tar_bytes([("a.xml", XML)], "w:xz")) == "xz"
    # A tar.gz uploaded under any name is expanded; its members keep the name it was given.
    assert expand_archive("upload.bin", tar_bytes([("node01.xml", XML)])).members[0].name == "upload.bin/node01.xml"


def test_zip_bomb_is_not_inflated_to_be_measured():
    bomb = tar_bomb(64 * RATIO_FLOOR)  # 64 MiB of zeros in about 64 KB
    tracemalloc.start()
    try:
        error = refusal("bomb.tgz", bomb, max_member_bytes=128 * RATIO_FLOOR, max_total_bytes=128 * RATIO_FLOOR)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error.source == "bomb.tgz" and error.path == "node01.xml"
    assert "times its compressed size" in error.message and "zip bomb" in error.expected
    assert peak < 8 * RATIO_FLOOR, f"{peak:,} bytes held to refuse a bomb"


# -- limits ---------------------------------------------------------------------------------


def test_member_count():
    error = refusal("many.tgz", tar_bytes([(f"node{index:02d}.xml", XML) for index in range(12)]), max_members=10)
    assert "more than 10 entries" in str(error) and error.path == "node10.xml"
    error = refusal("many.zip", zip_bytes([(f"node{index:02d}.xml", XML) for index in range(12)]), max_members=10)
    assert "12 entries" in str(error) and "at most 10 entries" in str(error)


def test_member_size_is_refused_from_the_header_before_reading():
    error = refusal("big.tgz", tar_bytes([("node01.xml", XML), ("node02.xml", b"x" * 5000)]), max_member_bytes=4096)
    assert error.path == "node02.xml" and "5,000 bytes" in str(error) and "at most 4,096 bytes" in str(error)
    error = refusal("big.zip", zip_bytes([("node02.xml", b"x" * 5000)]), max_member_bytes=4096)
    assert error.path == "node02.xml" and "5,000 bytes" in str(error)


def test_total_unpacked_size():
    members = [(f"node{index:02d}.xml", bytes(range(256)) * 16) for index in range(4)]  # 4 x 4,096 bytes
    error = refusal("all.tgz", tar_bytes(members), max_total_bytes=10_000)
    assert error.path == "node02.xml" and "more than 10,000 bytes" in str(error) and "split the archive" in str(error)
    error = refusal("all.zip", zip_bytes(members), max_total_bytes=10_000)
    assert error.path is None and "declares 16,384 bytes" in str(error)


def test_ratio_of_one_member_and_of_the_whole_archive():
    size = 2 * RATIO_FLOOR
    # tar.gz: the gzip stream is measured as it is inflated; the member being read is named.
    error = refusal("one.tgz", tar_bomb(size), max_ratio=50)
    assert error.path == "node01.xml" and "unpacks to more than 50 times" in str(error)
    # A bomb member after incompressible padding, so that the whole archive stays under the ratio.
    padding = random.Random(12).randbytes(4 * size)
    error = refusal("two.tgz", tar_bytes([("padding.bin", padding), ("node01.xml", bytes(size))]), max_ratio=50)
    assert error.path == "node01.xml" and "this member unpacks to more than 50 times" in str(error)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("padding.bin"), padding, compress_type=zipfile.ZIP_STORED)
        archive.writestr("node01.xml", bytes(size))
    error = refusal("one.zip", buffer.getvalue(), max_ratio=50)
    assert error.path == "node01.xml" and "this member unpacks to more than 50 times" in str(error)
    # zip: many small members, none over the floor, the archive as a whole over the ratio.
    error = refusal("all.zip", zip_bytes([(f"node{index:03d}.xml", bytes(64 * 1024)) for index in range(40)]), max_ratio=50)
    assert error.path is None and "the archive unpacks to more than 50 times" in str(error)


def test_ratio_is_not_judged_on_small_files():
    blank = b" " * (RATIO_FLOOR // 2)  # compresses about 1000:1, and is harmless
    assert len(expand_archive("blank.tgz", tar_bytes([("node01.xml", blank)]), limits=ArchiveLimits(max_ratio=10)).members) == 1


def test_realistic_per_node_files_pass_the_default_ratio():
    # 512 near-identical host XMLs compress about 80:1 in one gzip stream.
    xml = (b'<pci busid="0000:18:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>\n' * 80)
    members = [(f"node{index:04d}.xml", xml.replace(b"0000:18", f"{index:04x}:18".encode())) for index in range(512)]
    data = tar_bytes(members)
    assert sum(len(member) for _, member in members) / len(data) > 50
    assert len(expand_archive("hosts.tgz", data).members) == 512


# -- members that are refused ---------------------------------------------------------------


def special(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    return info


@pytest.mark.parametrize(
    ("member", "message"),
    [
        (("/etc/passwd", XML), "absolute path"),
        (("C:\\Windows\\node01.xml", XML), "absolute path"),
        (("../node01.xml", XML), "leaves the archive"),
        (("topo/../../node01.xml", XML), "leaves the archive"),
        (special("node01.xml", tarfile.SYMTYPE, "/etc/shadow"), "symbolic link (to '/etc/shadow')"),
        (special("node02.xml", tarfile.LNKTYPE, "node01.xml"), "hard link"),
        (special("ttyS0", tarfile.CHRTYPE), "device or FIFO"),
        (special("sda", tarfile.BLKTYPE), "device or FIFO"),
        (special("pipe", tarfile.FIFOTYPE), "device or FIFO"),
    ],
    ids=["absolute", "drive", "dotdot", "dotdot-inside", "symlink", "hardlink", "char-device", "block-device", "fifo"],
)
def test_members_outside_the_archive_or_not_files_are_refused(member, message):
    error = refusal("nodes.tgz", tar_bytes([("node00.xml", XML), member]))
    assert error.source == "nodes.tgz" and message in str(error)
    assert error.path == (member.name if isinstance(member, tarfile.TarInfo) else member[0])


def test_zip_symlink_and_encrypted_members():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        link = zipfile.ZipInfo("node01.xml")
        link.create_system, link.external_attr = 3, (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    error = refusal("links.zip", buffer.getvalue())
    assert error.path == "node01.xml" and "symbolic link" in str(error)
    data = bytearray(zip_bytes([("node01.xml", XML)]))
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 0x1  # general purpose flag bit 0: encrypted
    error = refusal("locked.zip", bytes(data))
    assert error.path == "node01.xml" and "encrypted" in str(error)


def test_nested_archives_are_refused():
    inner = tar_bytes([("node01.xml", XML)])
    error = refusal("outer.tgz", tar_bytes([("node00.xml", XML), ("rack1.tgz", inner)]))
    assert error.path == "rack1.tgz" and "itself a tar.gz file" in str(error) and "nested archives" in str(error)
    error = refusal("outer.zip", zip_bytes([("node01.xml.gz", gzip.compress(XML))]))
    assert error.path == "node01.xml.gz" and "itself a tar.gz file" in str(error)


def test_duplicate_paths_are_refused():
    error = refusal("twice.tgz", tar_bytes([("node01.xml", XML), ("./node01.xml", XML)]))
    assert error.path == "node01.xml" and "two members have this path" in str(error)


# -- archives that cannot be read -----------------------------------------------------------


def test_damaged_and_truncated_archives():
    members = [(f"node{index:02d}.xml", bytes(range(256)) * 40) for index in range(8)]
    plain = tar_bytes(members, "w")
    compressed = gzip.compress(plain)
    assert "truncated or damaged" in str(refusal("cut.tgz", compressed[: len(compressed) // 2]))
    assert "truncated or damaged" in str(refusal("cut.tar", plain[:40_000]))  # inside a member
    cut = refusal("cut.tar", plain[: 3 * (512 + 10240)])  # on a header: tarfile alone would stop quietly
    assert "truncated or damaged after node02.xml" in str(cut)
    data = bytearray(zip_bytes([("node01.xml", XML)], zipfile.ZIP_STORED))
    data[data.index(b"<system")] ^= 0xFF
    assert "damaged" in str(refusal("crc.zip", bytes(data)))
    assert "cannot be read" in str(refusal("cut.zip", zip_bytes([("node01.xml", XML)])[:-30]))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (gzip.compress(XML), "gzip-compressed but holds no tar archive"),
        (tar_bytes([("node01.xml", XML)], "w:xz"), "xz archive or compressed file"),
        (tar_bytes([("node01.xml", XML)], "w:bz2"), "bzip2 archive or compressed file"),
        (tar_bytes([(".DS_Store", b"x"), ("empty", None)]), "holds no files (only 1 hidden or system file)"),
        (zip_bytes([]), "holds no files"),
    ],
    ids=["gzip-not-tar", "xz", "bzip2", "only-clutter", "empty-zip"],
)
def test_archives_with_nothing_to_read(data, message):
    error = refusal("nodes.tgz", data)
    assert message in str(error) and str(error).startswith("nodes.tgz: ")
