"""The pure checks of annotator.services.uploads: member names, duplicates, limits, text, entry counts.

Nothing is written and no database is used: archives are built in memory and only planned.
"""
from __future__ import annotations

import io
import stat
import zipfile
from pathlib import PurePosixPath

import pytest

from annotator.services.uploads import (
    PlannedFile, TextCheck, UploadError, UploadLimits, check_plan, declared_entries, member_path, name_key,
    plan_archive,
)

LIMITS = UploadLimits(sent_bytes=10**9, unpacked_bytes=10**9, entries=100, ratio=100)


def archive_of(files: dict[str, bytes], *, compression=zipfile.ZIP_DEFLATED) -> zipfile.ZipFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, content in files.items():
            archive.writestr(zipfile.ZipInfo(name), content, compress_type=compression)
    buffer.seek(0)
    return zipfile.ZipFile(buffer)


@pytest.mark.parametrize("name, why", [
    ("\\tmp\\slip.txt", "absolute path"),
    ("/etc/passwd", "absolute path"),
    ("../x.txt", "'..'"),
    ("a/../../x.txt", "'..'"),
    ("a\\..\\..\\x.txt", "'..'"),
    ("C:\\x.txt", "drive"),
    ("C:/x.txt", "drive"),
    ("c:x.txt", "drive"),
    ("a\x00b.txt", "NUL byte"),
])
def test_unsafe_member_names_are_refused_with_the_name(name, why):
    with pytest.raises(UploadError) as raised:
        member_path(name, archive="corpus.zip")
    assert str(raised.value).startswith(f"corpus.zip: the archive entry {name!r} ")
    assert why in str(raised.value)


@pytest.mark.parametrize("name, path", [
    ("notes\\a.txt", "notes/a.txt"),
    ("./notes//a.txt", "notes/a.txt"),
    ("a..b.txt", "a..b.txt"),
])
def test_safe_member_names_normalise(name, path):
    assert member_path(name, archive="corpus.zip") == PurePosixPath(path)


def test_names_differing_in_case_or_unicode_form_share_a_key():
    assert name_key(PurePosixPath("Notes/A.TXT")) == name_key(PurePosixPath("notes/a.txt"))
    assert name_key(PurePosixPath("caf\u00e9.txt")) == name_key(PurePosixPath("cafe\u0301.txt"))
    assert name_key(PurePosixPath("a.txt")) != name_key(PurePosixPath("b.txt"))


def planned(*names: str) -> list[PlannedFile]:
    return [PlannedFile(relative=PurePosixPath(name), size=10, shown=f"x.zip: {name}") for name in names]


def test_plan_refuses_two_names_for_one_file_and_a_file_where_a_folder_goes(tmp_path):
    with pytest.raises(UploadError, match=r"^x.zip: notes/A.txt: the same file as x.zip: Notes/a.txt"):
        check_plan(planned("Notes/a.txt", "notes/A.txt"), target=tmp_path, entries=2, limits=LIMITS)
    with pytest.raises(UploadError, match=r"^x.zip: a: a file where x.zip: a/b.txt needs a folder"):
        check_plan(planned("a", "a/b.txt"), target=tmp_path, entries=2, limits=LIMITS)
    with pytest.raises(UploadError, match=r"^x.zip: A: a file where x.zip: a/b.txt needs a folder"):
        check_plan(planned("a/b.txt", "A"), target=tmp_path, entries=2, limits=LIMITS)
    assert check_plan(planned("a/b.txt", "a/c.txt", "d.txt"), target=tmp_path, entries=3, limits=LIMITS) == 30


def test_plan_refuses_a_destination_resolving_outside_the_target(tmp_path):
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "out").symlink_to(tmp_path)
    with pytest.raises(UploadError, match="points outside the archive"):
        check_plan(planned("out/x.txt"), target=tmp_path / "target", entries=1, limits=LIMITS)


def test_plan_limits_are_over_the_whole_request(tmp_path):
    limits = UploadLimits(sent_bytes=10**9, unpacked_bytes=25, entries=3, ratio=100)
    with pytest.raises(UploadError, match="4 entries, more than the limit of 3"):
        check_plan(planned("a"), target=tmp_path, entries=4, limits=limits)
    with pytest.raises(UploadError, match="unpacks to 30 bytes, more than the limit of 25 bytes"):
        check_plan(planned("a", "b", "c"), target=tmp_path, entries=3, limits=limits)


def test_archive_members_that_are_links_encrypted_or_bombs_are_refused_before_unpacking():
    link = zipfile.ZipInfo("notes/link.txt")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(link, "/etc/passwd")
    with pytest.raises(UploadError, match=r"^x.zip: the archive entry 'notes/link.txt' is a symbolic link"):
        plan_archive(zipfile.ZipFile(buffer), shown="x.zip", compressed_bytes=100, limits=LIMITS)

    secret = archive_of({"a.txt": b"text"})
    secret.infolist()[0].flag_bits |= 0x1
    with pytest.raises(UploadError, match=r"^x.zip: the archive entry 'a.txt' is encrypted"):
        plan_archive(secret, shown="x.zip", compressed_bytes=100, limits=LIMITS)

    bomb = archive_of({"zeros.txt": b"0" * (4 * 1024 * 1024)})
    with pytest.raises(UploadError, match=r"^x.zip: the archive entry 'zeros.txt' unpacks [0-9,]+ times"):
        plan_archive(bomb, shown="x.zip", compressed_bytes=10**6, limits=LIMITS)

    spread = archive_of({f"z{i}.txt": b"0" * (512 * 1024) for i in range(8)})
    with pytest.raises(UploadError, match=r"^x.zip: unpacks to 4,194,304 bytes, [0-9,]+ times its size"):
        plan_archive(spread, shown="x.zip", compressed_bytes=8 * 600, limits=LIMITS)


def test_small_repetitive_members_are_not_bombs_and_one_top_folder_is_dropped():
    archive = archive_of({"dev/a.ann": b"", "dev/b.ann": b"T" * 50_000, "dev/": b"", "__MACOSX/dev/._a.ann": b"x",
                          "dev/.DS_Store": b"\x00\x01"})
    plan = plan_archive(archive, shown="x.zip", compressed_bytes=300, limits=LIMITS)
    assert [str(item.relative) for item in plan] == ["a.ann", "b.ann"]
    assert [item.shown for item in plan] == ["x.zip: dev/a.ann", "x.zip: dev/b.ann"]


def test_declared_entries_reads_the_end_record_and_its_zip64_form():
    archive = archive_of({f"{i}.txt": b"x" for i in range(7)})
    assert declared_entries(archive.fp) == 7
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as big:
        for i in range(70_000):  # past 0xFFFF: only the ZIP64 record holds the count
            big.writestr(zipfile.ZipInfo(f"{i}"), b"")
    assert declared_entries(buffer) == 70_000
    assert declared_entries(io.BytesIO(b"not a zip at all")) is None


@pytest.mark.parametrize("chunks, line", [
    ([b"ok\nok\n", b"bad \xff here\n"], 3),
    ([b"ok\n", b"\x00\x00 utf-16\n"], 2),
    ([b"one\ntwo \xc3", b"\x28 three"], 2),  # a split sequence that turns out invalid
    ([b"\xfe\xffB\x00O\x00M"], 1),
])
def test_text_check_names_the_line_of_the_first_bad_byte(chunks, line):
    check = TextCheck("x.zip: a.txt")
    with pytest.raises(UploadError) as raised:
        for chunk in chunks:
            check.feed(chunk)
        check.feed(b"", final=True)
    assert str(raised.value) == f"x.zip: a.txt, line {line}: is not UTF-8 text (binary file?)"


def test_text_check_accepts_utf8_split_across_chunks():
    check = TextCheck("a.txt")
    data = "Paciente María Núñez, 45 años.\n".encode("utf-8")
    for index in range(len(data)):
        check.feed(data[index:index + 1])
    check.feed(b"", final=True)
    assert check.line == 2
