"""Reading and writing the files a spec, a manifest or a command line names.

Such a name can be a FIFO (opening or reading it blocks forever), a device such as
``/dev/zero`` (reading never ends), a huge file, or a symlink planted where mcpgen
is about to write. So files are read only when they are regular files, up to a
size limit, and written through a fresh temporary file in the same folder and a
rename, which replaces a symlink at the target instead of following it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "MAX_MANIFEST_BYTES",
    "MAX_SPEC_BYTES",
    "UnsafeFile",
    "is_inside",
    "outside_reason",
    "read_regular",
    "replace_file",
]

MAX_SPEC_BYTES = 16 * 1024 * 1024
"""Largest spec or referenced schema file read (16 MiB; real specs are kilobytes)."""

MAX_MANIFEST_BYTES = 1024 * 1024
"""Largest ``.mcpgen-manifest.json`` read (1 MiB; a 1,000-tool build writes ~2 KiB)."""

_CHUNK = 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO must not wait for a writer
_BINARY = getattr(os, "O_BINARY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafeFile(OSError):
    """A file mcpgen will not read: not a regular file, a symlink where none may be,
    or larger than the limit. ``str()`` says which, naming the path."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"{os.fspath(path)} {reason}")
        self.reason = reason
        self.filename = os.fspath(path)

    def __str__(self) -> str:
        return str(self.args[0])


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _check(path: str | os.PathLike[str], info: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile(path, f"is not a regular file ({_kind(info.st_mode)})")
    if info.st_size > limit:
        raise UnsafeFile(path, f"is larger than {limit:,} bytes ({info.st_size:,})")


def read_regular(
    path: str | os.PathLike[str], *, limit: int, follow_symlinks: bool = True
) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    Raises ``UnsafeFile`` for anything else (a FIFO, a device, a socket, a
    directory, a larger file, or with ``follow_symlinks=False`` a symlink) without
    ever blocking or reading past ``limit``; other ``OSError``s (a missing file,
    no permission) pass through. The file is looked at before it is opened (so a
    device is never even opened) and again once open (so a swap in between is seen).
    """
    try:
        before = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError:
        before = None  # let open() raise the precise error
    if before is not None:
        _check(path, before, limit)
    flags = os.O_RDONLY | _NONBLOCK | _BINARY | _CLOEXEC | (0 if follow_symlinks else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_symlinks and exc.errno in (errno.ELOOP, errno.EMLINK):
            raise UnsafeFile(path, "is not a regular file (a symbolic link)") from None
        raise
    try:
        _check(path, os.fstat(fd), limit)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew after the size check
                raise UnsafeFile(path, f"is larger than {limit:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def replace_file(target: Path, data: bytes) -> None:
    """Write ``target`` through a new temporary file beside it and an atomic rename.

    A reader never sees half a file, and a symlink planted at ``target`` is replaced,
    never followed. The temporary is created exclusively under a random name
    (``O_EXCL``, ``O_NOFOLLOW``), so nothing planted can stand in for it. A regular
    file replaced keeps its permission bits and, where the OS lets this process set
    them, its owner and group (a 0600 host file holding tokens stays 0600); a new
    file gets the usual ``0o666`` less the umask.
    """
    try:
        previous: os.stat_result | None = os.lstat(target)
    except OSError:
        previous = None
    if previous is not None and not stat.S_ISREG(previous.st_mode):
        previous = None  # a symlink or anything else is replaced, never copied from
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY | _CLOEXEC
    # a private file's replacement is never readable by others, even for a moment
    mode = stat.S_IMODE(previous.st_mode) & 0o777 if previous is not None else 0o666
    while True:
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.mcpgen-tmp")
        try:
            fd = os.open(temporary, flags, mode & 0o600 if previous is not None else mode)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as handle:
            if previous is not None:
                _keep_owner_and_mode(handle.fileno(), previous)
            handle.write(data)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _keep_owner_and_mode(fd: int, previous: os.stat_result) -> None:
    """Give the open file ``fd`` the owner, group and mode of ``previous``: the owner
    first (changing it may clear set-id bits), each only where permitted."""
    if hasattr(os, "fchown"):
        for uid, gid in ((previous.st_uid, previous.st_gid), (-1, previous.st_gid)):
            try:
                os.fchown(fd, uid, gid)
                break
            except OSError:  # not permitted: keep what we may
                continue
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(previous.st_mode))


def outside_reason(root: Path, declared: str) -> str | None:
    """Why the directory ``declared`` (relative to ``root``) is not inside ``root``'s
    tree once ``..`` and symlinks are resolved, or None when it is."""
    if Path(declared).is_absolute():
        return f"{declared!r} is an absolute path"
    target = root / declared
    if is_inside(target, root):
        return None
    try:
        shown = str(target.resolve())
    except (OSError, RuntimeError, ValueError):
        shown = str(target)
    return f"{declared!r} leaves the spec's directory tree (it resolves to {shown})"


def is_inside(path: Path, root: Path) -> bool:
    """Does ``path`` stay inside ``root`` once ``..`` and symlinks are resolved?"""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte
        return False
