"""The default cache without Redis: Django's file cache, with counters that lose no counts.

Django's ``FileBasedCache`` implements ``add`` as "has the key? else set" and ``incr`` as a
get and a set (which also resets the entry's timeout to the default): two processes adding to
one counter at once lose one of the additions. The per-key rate limits and write quotas
(``api/throttling.py``) count in the default cache, so with several web processes a flood
could pass a limit. ``LockingFileBasedCache`` serializes ``add``, ``set``, ``incr`` and
``decr`` of one key across the processes of a host with an exclusive ``flock`` on one of a
fixed set of lock files (chosen by the key's file name, so the folder does not grow with the
keys), and keeps an entry's expiry when it is incremented. Several web hosts each have their
own file cache and so their own counts: they need Redis (``REDIS_URL``).

Culling (``MAX_ENTRIES``) first removes the entries that have expired, and only then, if the
cache is still full, Django's random third: the counters of the current windows are not
thrown away while expired ones remain. With the option ``CULL_LIVE`` false (the failed
logins' cache) it never throws a live one away: a guesser posting logins under fresh
usernames culled the window of the account it guessed at, and got past its bound (stop 54's
review). That cache grows past ``MAX_ENTRIES`` then, for as long as its entries live (a
window's length), bounded by the password checks a host makes in it.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import tempfile
import time
import zlib
from contextlib import contextmanager
from pathlib import Path

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache

LOCK_STRIPES = 64
# A cache that never culls a live entry looks for expired ones at most this often when full.
SWEEP_PAUSE_SECONDS = 10


# What reading an empty, truncated or corrupt cache file raises (a crash as it was replaced
# leaves one empty): such an entry is missing, as Django's file cache reads an empty file as
# expired (``FileBasedCache._is_expired``).
UNREADABLE = (EOFError, pickle.UnpicklingError, zlib.error)


# The cache's own files, written by this class or Django's, which unpickles them the same way.
def read_expiry(handle) -> float | None:
    """Return the expiry an open cache file starts with (None: it never expires)."""
    return pickle.load(handle)  # noqa: S301


def read_value(handle):
    """Return the value that follows the expiry in an open cache file."""
    return pickle.loads(zlib.decompress(handle.read()))  # noqa: S301


class LockingFileBasedCache(FileBasedCache):
    """``FileBasedCache`` whose add, set, incr and decr of one key are atomic on one host."""

    def __init__(self, dir, params):
        options = dict(params.get("OPTIONS", {}))
        self._cull_live = bool(options.pop("CULL_LIVE", True))
        self._swept_at = 0.0
        super().__init__(dir, {**params, "OPTIONS": options})

    @contextmanager
    def _locked(self, fname: str):
        """Hold the exclusive lock of ``fname``'s stripe while the block runs.

        Never nested: a second ``flock`` from this process on another descriptor of the same
        file would wait for the first for ever.
        """
        folder = Path(self._dir) / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        stripe = int(Path(fname).name[:8], 16) % LOCK_STRIPES  # the name is an md5 in hex
        descriptor = os.open(folder / f"{stripe:02d}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # releases the lock

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        fname = self._key_to_file(key, version)
        with self._locked(fname):
            if self._read(fname) is not None:  # an unreadable file is removed: missing
                return False
            super().set(key, value, timeout, version)
            return True

    def get(self, key, default=None, version=None):
        """Django's ``get``, an unreadable file read as missing (and removed) as ``_read``
        does: the counters of a window's earlier slices are read so (``get_many``), and one
        left corrupt by a crash answered 503 for every write of its key for the rest of the
        window (stop 59's review of its rate-limit fixes)."""
        try:
            return super().get(key, default, version)
        except UNREADABLE:
            with self._locked(self._key_to_file(key, version)):
                entry = self._read(self._key_to_file(key, version))
            return default if entry is None else entry[1]

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        with self._locked(self._key_to_file(key, version)):
            super().set(key, value, timeout, version)

    def incr(self, key, delta=1, version=None):
        fname = self._key_to_file(key, version)
        with self._locked(fname):
            entry = self._read(fname)
            if entry is None:
                raise ValueError(f"Key '{key}' not found")
            expiry, value = entry
            value += delta
            self._write(fname, expiry, value)
        return value

    def decr(self, key, delta=1, version=None):
        return self.incr(key, -delta, version)

    def _read(self, fname: str) -> tuple[float | None, object] | None:
        """Return ``(expiry, value)`` of the entry in ``fname``; None if missing, expired or
        unreadable. Called under ``fname``'s stripe lock.

        An unreadable file is removed, so ``add`` recreates the entry: raised, it read as the
        cache being down, and the readiness probe said not ready for ever (its counter's key
        is fixed), a key's writes answered 503 for the rest of a quota's slice (stop 59's
        audit of rate limits).
        """
        try:
            with open(fname, "rb") as handle:
                expiry = read_expiry(handle)
                if expiry is not None and expiry < time.time():
                    return None
                return expiry, read_value(handle)
        except FileNotFoundError:
            return None
        except UNREADABLE:
            self._delete(fname)
            return None

    def _write(self, fname: str, expiry: float | None, value) -> None:
        """Replace the entry in ``fname`` with ``value``, keeping ``expiry`` (atomic rename)."""
        descriptor, temporary = tempfile.mkstemp(dir=self._dir)
        try:
            with open(descriptor, "wb") as handle:
                handle.write(pickle.dumps(expiry, self.pickle_protocol))
                handle.write(zlib.compress(pickle.dumps(value, self.pickle_protocol)))
            os.replace(temporary, fname)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def _cull(self):
        now = time.time()
        if not self._cull_live and now - self._swept_at < SWEEP_PAUSE_SECONDS:
            return  # full of live entries a moment ago: every set would read every file
        if len(self._list_cache_files()) < self._max_entries:
            return
        self._swept_at = now
        for fname in self._list_cache_files():
            try:
                with open(fname, "rb") as handle:
                    expiry = read_expiry(handle)
            except (OSError, *UNREADABLE):
                continue
            if expiry is not None and expiry < now:
                self._delete(fname)
        if self._cull_live:
            super()._cull()  # still full: Django's random third


# The cache the per-key rate limits count in (api/throttling.py): an alias of its own, which
# nothing else fills, so culling never drops a live counter (config/settings/base.py).
THROTTLE_CACHE_ALIAS = "throttle"
# The cache the failed logins count in (config/login.py): apart from the rate limits', since
# anyone may post logins under fresh usernames, and a full cache culls a random third of its
# entries: the API keys' live counters went with them (stop 54's audit of access).
LOGINS_CACHE_ALIAS = "logins"


def counter_cache_alias(alias: str = THROTTLE_CACHE_ALIAS) -> str:
    """Return the alias counters of ``alias`` live in: itself, or ``default`` where the
    settings define no such alias (a test's one-cache override, say)."""
    from django.conf import settings

    return alias if alias in settings.CACHES else "default"
