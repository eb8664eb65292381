"""The one way LeakLens writes a file, and the check that runs before any work: no output may land on an input.

Writing: every file goes to a temporary file beside its target, is flushed and fsynced, then moved over the
target with ``os.replace``. A crash, a full disk or a cancelled run leaves the previous file whole (or no
file), never a truncated one; the temporary file is removed on failure.

Checking: a command first names its inputs (datasets, training sources, the results store, index and model
folders) and then claims each file it will write. A claim is refused, before anything is loaded or scored,
when the target resolves (symlinks and ``..`` followed, hard links caught by ``os.path.samefile``) to an
input, lies inside an input folder, repeats another output of the same command, is an existing folder, sits
below a file, or sits on a read-only file system. Environment faults become one plain sentence naming the
path and the cause ("no space left on the device"), never a traceback.
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from core.errors import OutputError

_CAUSES = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder, not a file",
    errno.ELOOP: "the path runs in a symlink loop",
    errno.ENAMETOOLONG: "the name is too long",
    errno.ENOENT: "its folder does not exist",
    errno.EFBIG: "the file is too large for the file system",
    errno.EIO: "the device reported an input/output error",
}


def os_error_cause(exc: OSError) -> str:
    """The cause of an OS error in plain words (the system's own text for rarer ones)."""
    return _CAUSES.get(exc.errno or 0) or (exc.strerror or str(exc)).rstrip(".").lower()


def write_failure(path: str | os.PathLike[str], exc: OSError) -> OutputError:
    """The error a failed write raises: the path and the cause in one sentence."""
    return OutputError(f"Could not write {path}: {os_error_cause(exc)}. Nothing there was changed.")


def resolved(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute with ``~``, ``..`` and symlinks followed; a symlink loop is an ``OutputError``."""
    try:
        return Path(path).expanduser().resolve(strict=False)
    except (RuntimeError, OSError) as exc:  # Python 3.11 raises RuntimeError on a loop, later versions OSError
        raise OutputError(f"Cannot use {path}: the path runs in a symlink loop. Choose another path.") from exc


def same_file(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` name one file: the same resolved path, or one inode (a hard link)."""
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def is_inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@dataclass(frozen=True)
class Input:
    """Something a command reads, which nothing it writes may replace."""

    role: str
    """What it is to the user: 'dataset', 'results store', 'training source of index corpus', ..."""
    path: Path
    """Resolved."""
    folder: bool = False
    """True for a folder (an index, a model checkpoint): nothing may be written inside it."""


@dataclass(frozen=True)
class Output:
    role: str
    path: Path


class OutputPlan:
    """The inputs of one command and the files it will write, checked before the command does any work."""

    def __init__(self) -> None:
        self.inputs: list[Input] = []
        self.outputs: list[Output] = []

    def add_input(self, role: str, path: str | os.PathLike[str] | None, *, folder: bool = False) -> None:
        """Record an input; a missing path is skipped (the loader reports it in its own words)."""
        if path is None or str(path).strip() == "":
            return
        item = Input(role, resolved(path), folder)
        self.inputs.append(item)
        for output in self.outputs:  # an input named after an output was claimed is checked all the same
            _refuse_clash(output.path, output.role, output.path, item)

    def add_inputs(self, entries: Iterable[tuple[str, str | os.PathLike[str] | None]]) -> None:
        for role, path in entries:
            self.add_input(role, path)

    def claim(self, path: str | os.PathLike[str], role: str) -> Path:
        """Check that ``path`` may be written as this command's ``role`` and reserve it; returns it resolved.

        Raises ``OutputError`` (one sentence naming both paths) when it is an input, inside an input folder,
        another output of this command, an existing folder, or not writable where it is; also when the name
        itself cannot be a file (``''``, ``-``, a trailing ``/``) or names a device or this process's own
        output (``/dev/stdout``: the atomic rename would replace the user's log file)."""
        _refuse_unusable_name(path, role)
        target = resolved(path)
        _refuse_own_streams(target, role, path)
        for item in self.inputs:
            _refuse_clash(target, role, path, item)
        for other in self.outputs:
            if same_file(target, other.path):
                raise OutputError(f"The {role} {path} is also the {other.role}: give them different paths.")
        check_writable(target, role)
        self.outputs.append(Output(role, target))
        return target

    def claim_folder(self, path: str | os.PathLike[str], role: str) -> Path:
        """Check a folder the command will write files into: not a file, not an input, and writable."""
        folder = resolved(path)
        if folder.exists() and not folder.is_dir():
            raise OutputError(f"The {role} {path} is a file, not a folder. Choose a folder.")
        for item in self.inputs:
            if (item.folder and is_inside(folder, item.path)) or (not item.folder and same_file(folder, item.path)):
                raise OutputError(f"The {role} {path} is inside the {item.role} {item.path}. Choose another folder.")
        _check_folder(folder, role, path)
        return folder


DEVICE_FOLDERS = ("/dev", "/proc")
"""Paths below these are devices or a process's own descriptors, never files to replace."""


def _refuse_unusable_name(path: str | os.PathLike[str], role: str) -> None:
    text = os.fspath(path)
    if not text.strip():
        raise OutputError(f"The {role} is an empty path: give a file name.")
    if text.strip() == "-":
        raise OutputError(f"The {role} '-' would be a file named '-': this option writes a file; give its name.")
    if text.endswith(("/", os.sep)):
        raise OutputError(f"The {role} {text} ends in '/', so it names a folder: give a file name inside it.")
    absolute = Path(text).expanduser().absolute()
    if any(is_inside(absolute, Path(folder)) for folder in DEVICE_FOLDERS):
        raise OutputError(
            f"The {role} {text} is a device or a process's own stream, not a file: give a file name "
            "(LeakLens replaces a file whole, which would replace whatever that stream points at)."
        )


def _refuse_own_streams(target: Path, role: str, named: str | os.PathLike[str]) -> None:
    """A target that is where this process's output already goes (stdout or stderr redirected to it)."""
    for fd, name in ((1, "standard output"), (2, "standard error")):
        try:
            stream = os.fstat(fd)
            here = os.stat(target)
        except OSError:
            continue
        if (stream.st_dev, stream.st_ino) == (here.st_dev, here.st_ino):
            raise OutputError(f"The {role} {named} is where this command's {name} goes: choose another file.")


def _refuse_clash(target: Path, role: str, named: str | os.PathLike[str], item: Input) -> None:
    clash = is_inside(target, item.path) if item.folder else same_file(target, item.path)
    if clash:
        where = "inside the" if item.folder and target != item.path else "the"
        raise OutputError(
            f"The {role} {named} is {where} {item.role} {item.path}: writing it would destroy an input of this "
            "command. Choose another path."
        )


def check_writable(target: Path, role: str = "output file") -> None:
    """Refuse, before any work, a target that is a folder or a special file, or whose folder cannot be made
    or written (a file on the way, a read-only file system, no permission)."""
    if target.is_dir():
        raise OutputError(f"The {role} {target} is an existing folder. Name a file inside it instead.")
    if target.exists() and not target.is_file():
        raise OutputError(f"The {role} {target} is not a regular file. Name a file instead.")
    _check_folder(target.parent, role, target)


def _check_folder(folder: Path, role: str, named: str | os.PathLike[str]) -> None:
    """The nearest existing folder at or above ``folder`` must be a folder that this process can write."""
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"Cannot write the {role} {named}: {existing} is a file, not a folder.")
    try:
        read_only = bool(os.statvfs(existing).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if read_only:
        raise OutputError(f"Cannot write the {role} {named}: {existing} is on a read-only file system.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"Cannot write the {role} {named}: permission denied in {existing}.")


@contextmanager
def atomic_output(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO[Any]]:
    """A handle whose content replaces ``path`` only when the ``with`` block ends without an error.

    The folder is created when missing. Symlinks are followed: a link to a file gets the file rewritten. An
    existing file keeps its permissions; a new one gets the usual ones (0666 less the umask)."""
    target = resolved(path)
    tmp = target.parent / f".{target.name}.{secrets.token_hex(4)}.part"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode & 0o7777 if target.is_file() else 0o666
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except OSError as exc:
        raise write_failure(path, exc) from exc
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if target.is_file():
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        _discard(tmp)
        raise write_failure(path, exc) from exc
    except BaseException:
        _discard(tmp)
        raise
    _sync_folder(target.parent)


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through ``atomic_output``; returns the resolved path."""
    with atomic_output(path, binary=isinstance(data, bytes)) as handle:
        handle.write(data)
    return resolved(path)


def _discard(tmp: Path) -> None:
    try:
        tmp.unlink()
    except OSError:
        pass


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable; best effort (some file systems refuse to open a folder for sync)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
