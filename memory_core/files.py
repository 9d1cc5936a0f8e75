"""Files the service rewrites in place: the new content goes to a file beside the old one,
which is fsynced and renamed over it, so a reader or a crash sees the old file or the new
one, never a part (exports, evaluation datasets, the deletion journal). A write that fails
removes its new file (``removed_on_failure``, which the model's graph cache and the
filesystem broker use for their own temporary names too)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

# The name a new file has until ``replacing`` renames it over the old one: a walk of its
# folder (the deletion's evaluation step) leaves it alone while it is written
# (``being_written``). Read as a dataset, another deletion rewrote it and put it back beside
# the dataset it had become: a second copy of every tenant's remaining cases (stop 49's audit).
NEW_FILE_PREFIX = ".memledger-new-"
# A new file untouched this long was left by a process that died while writing it: nothing
# will rename it, and a walk reads it as any other file (it may hold deleted words).
ABANDONED_SECONDS = 600


def being_written(path: Path, mtime: float) -> bool:
    """Whether ``path`` (last modified at ``mtime``) is a new file ``replacing`` is writing."""
    return path.name.startswith(NEW_FILE_PREFIX) and time.time() - mtime < ABANDONED_SECONDS


@contextlib.contextmanager
def removed_on_failure(path: str | os.PathLike):
    """Run a block that writes ``path``, a new file that no reader looks for until it is
    renamed into place; if the block fails, remove ``path`` and let the error through.

    A full disk fails a write half way, and the part written stayed under its temporary name,
    which nothing renames, reads or removes: one more with each process or retry that tried,
    on the disk that was already full (stop 63's audit of failure behaviour: the model's
    graph cache, ``embeddings._GraphCache``, and the filesystem broker's queue folder,
    ``config.broker``).
    """
    try:
        yield
    except BaseException:
        Path(path).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def replacing(path: Path):
    """Yield a binary handle on a new file beside ``path``; at the block's end the file is
    fsynced and renamed over ``path``, and the rename fsynced.

    The new file keeps ``path``'s permissions and, where the process may give it, its owner:
    mkstemp makes 0600 files (an evaluation job of another user could no longer read its
    dataset after a deletion), and a command run by root (cron) made root's files (the
    service could no longer append to the journal it pruned). It keeps ``path``'s
    modification time too: a file is as old as what it holds, and the retention sweep ages a
    leftover export by it (a deletion's rewrite made a day-old copy of a person's memories
    new again, kept another day: stop 53's audit of exports). A crash, a full disk or an
    error midway leaves ``path`` as it was (the new file is removed).

    A symbolic link is followed: the file is replaced where it lives, and the link stays. The
    deletion journal linked to storage apart from the database (docs/operations.md) was
    replaced by a file beside the link, which every later deletion's line was appended to,
    and the journal on that storage was never pruned (stop 54's audit of the commands).
    """
    kept_as = None
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=NEW_FILE_PREFIX, suffix=path.suffix)
    with removed_on_failure(tmp):
        with os.fdopen(fd, "wb") as handle:
            with contextlib.suppress(FileNotFoundError):
                kept_as = os.stat(path)
                os.fchmod(handle.fileno(), kept_as.st_mode & 0o7777)
                with contextlib.suppress(PermissionError):
                    os.fchown(handle.fileno(), kept_as.st_uid, kept_as.st_gid)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        if kept_as is not None:
            os.utime(path, ns=(kept_as.st_atime_ns, kept_as.st_mtime_ns))
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the rename too survives a crash: never the old file back
    finally:
        os.close(folder)
