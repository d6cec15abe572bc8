"""Archives from outside (an LMS download, a student's upload inside it), read as hostile input.

Members are streamed one at a time, never read whole: memory stays flat whatever an archive holds. What is written
is capped (bytes, members, bytes per byte of archive read), and no member is written outside its folder: absolute
paths, `..` and links (symbolic, hard, devices) are refused.
"""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

ZIP = (".zip",)
TAR = (".tar.gz", ".tgz", ".gz")
CHUNK = 1 << 20  # written at a time
READ = 64 << 10  # read from the archive at a time
# What zipfile, tarfile, gzip and zlib raise on a damaged or truncated archive.
UNREADABLE = (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, ValueError, zlib.error)


class ArchiveError(Exception):
    """An archive (or one of its members) that cannot be taken in; the message says why, in one line."""


@dataclass(frozen=True)
class Caps:
    """What one extraction may write."""

    bytes: int = 64 << 20  # in all
    members: int = 10_000  # per archive
    ratio: float = 200.0  # bytes of a member written per byte of archive read (at least READ) for it


def is_archive(name: str) -> bool:
    """Whether a file name is one of the archive kinds read here (.zip, .tar.gz, .tgz, .gz)."""
    return name.lower().endswith(ZIP + TAR)


def archive_stem(name: str) -> str:
    """'alice_1_upload.tar.gz' -> 'alice_1_upload': the folder a nested archive is extracted into."""
    lowered = name.lower()
    for suffix in sorted(ZIP + TAR, key=len, reverse=True):
        if lowered.endswith(suffix):
            return name[: -len(suffix)]
    return name


class Budget:
    """Bytes written so far against the caps; raises ArchiveError when one is passed."""

    def __init__(self, caps: Caps) -> None:
        self.caps, self.written = caps, 0

    def spend(self, count: int, written_here: int, read_here: int) -> None:
        """`count` more bytes written; `written_here` and `read_here`: by and for the current member so far."""
        self.written += count
        if self.written > self.caps.bytes:
            raise ArchiveError(f"more than {self.caps.bytes >> 20} MiB once extracted")
        if written_here > self.caps.ratio * max(read_here, READ):
            raise ArchiveError(_bomb(self.caps))


class _Counted(io.RawIOBase):
    """A binary file that counts the bytes read from it (what an archive reader consumed)."""

    def __init__(self, file: BinaryIO) -> None:
        self.file, self.count = file, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self.file.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.file.seek(offset, whence)

    def tell(self) -> int:
        return self.file.tell()

    def readinto(self, buffer) -> int:
        count = self.file.readinto(buffer)
        self.count += count or 0
        return count


@dataclass
class Member:
    """One archive member: its name, why it may not be taken in ('' if it may), and a stream of its bytes (valid
    only until the next member)."""

    name: str
    problem: str
    stream: BinaryIO | None
    consumed: Callable[[], int]  # bytes of the archive read for this member so far (or an upper bound)

    def save(self, target: Path, budget: Budget) -> None:
        """Write the member to `target`, charging `budget` as the bytes come."""
        written = 0
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            out = target.open("wb")
        except OSError as error:
            raise ArchiveError(f"{self.name!r} cannot be written ({error.strerror})") from None
        with out:
            while True:
                with _readable():
                    chunk = self.stream.read(CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                written += len(chunk)
                budget.spend(len(chunk), written, self.consumed())


def path_problem(name: str) -> str:
    """Why a member's path would not stay inside the folder it is extracted into ('' if it would)."""
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if not name.isprintable():
        return f"{name!r} has control characters in its name"
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return f"{name!r} is an absolute path"
    if ".." in parts:
        return f"{name!r} leaves its folder ('..')"
    return ""


def members(archive: Path, caps: Caps) -> Iterator[Member]:
    """The members of a .zip or .tar(.gz) archive, in order, folders passed over; a link or an unsafe path comes
    with its problem and no stream. ArchiveError for an archive that cannot be read or has more members than the
    caps allow."""
    with archive.open("rb") as raw, _readable():
        counted = _Counted(raw)
        if archive.name.lower().endswith(ZIP):
            yield from _zip_members(counted, caps)
        else:
            yield from _tar_members(counted, caps)


@contextmanager
def _readable() -> Iterator[None]:
    """Whatever a damaged archive makes the readers raise, as one ArchiveError."""
    try:
        yield
    except UNREADABLE as error:
        raise ArchiveError(f"not a readable archive ({type(error).__name__}: {error})") from None


def _zip_members(counted: _Counted, caps: Caps) -> Iterator[Member]:
    with zipfile.ZipFile(io.BufferedReader(counted, READ)) as zipped:
        infos = zipped.infolist()
        if len(infos) > caps.members:
            raise ArchiveError(f"more than {caps.members} members")
        for info in infos:
            kind = stat.S_IFMT(info.external_attr >> 16)  # 0: no Unix mode recorded, a plain file
            if info.is_dir() and not path_problem(info.filename):
                continue
            # zipfile reads at most compress_size bytes for a member: an upper bound on what it consumed.
            declared, consumed = info.file_size / max(info.compress_size, 1), lambda size=info.compress_size: size
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                yield Member(info.filename, f"{info.filename!r} is a link or special file", None, consumed)
            elif problem := path_problem(info.filename):
                yield Member(info.filename, problem, None, consumed)
            elif info.file_size > READ and declared > caps.ratio:
                yield Member(info.filename, _bomb(caps), None, consumed)
            else:
                with zipped.open(info) as stream:
                    yield Member(info.filename, "", stream, consumed)


def _tar_members(counted: _Counted, caps: Caps) -> Iterator[Member]:
    # "r|*": a stream, read front to back once, whatever the compression.
    with tarfile.open(fileobj=io.BufferedReader(counted, READ), mode="r|*") as tarred:
        for number, info in enumerate(tarred, start=1):
            if number > caps.members:
                raise ArchiveError(f"more than {caps.members} members")
            if info.isdir() and not path_problem(info.name):
                continue
            start = counted.count
            consumed = lambda start=start: counted.count - start  # noqa: E731 - one per member
            if not (info.isfile() or info.isdir()):
                yield Member(info.name, f"{info.name!r} is a link or special file", None, consumed)
            elif problem := path_problem(info.name):
                yield Member(info.name, problem, None, consumed)
            else:
                yield Member(info.name, "", tarred.extractfile(info), consumed)


def _bomb(caps: Caps) -> str:
    return f"a member compressed more than {caps.ratio:g} to 1 (a zip bomb?)"
