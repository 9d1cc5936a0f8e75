"""Work on a thread of its own, as a second request or worker runs it: for the transactional
tests of what waits on whom.

Django gives each thread database connections of its own, which the thread must close when its
work ends: one left open outlives the test, and the session's teardown fails the run for it
(``tests/conftest.py``). ``InThread`` closes them, keeps what the work returned or raised, and
lets a test wait for that with a bound instead of a ``join`` whose timeout nobody checks.
"""

import threading
from collections.abc import Callable, Iterable
from typing import Any

from django.db import connections


class InThread(threading.Thread):
    """Run ``work()`` on a thread with database connections of its own, closed at the end.

    What the work returned is ``result``, what it raised ``error``. An error also sets every
    event of ``released``, so that a test waiting for one of them goes on and reports it.
    """

    def __init__(
        self,
        work: Callable[[], Any],
        *,
        name: str | None = None,
        released: Iterable[threading.Event] = (),
    ):
        super().__init__(name=name, daemon=True)
        self.work = work
        self.released = tuple(released)
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as exc:  # pytest.fail's too: kept for the test to report
            self.error = exc
            for event in self.released:
                event.set()
        finally:
            connections.close_all()  # this thread's, of every database

    def wait(self, timeout: float = 60) -> None:
        """Wait ``timeout`` seconds at most for the work to end; fail the test if it has not."""
        self.join(timeout)
        if self.is_alive():
            raise AssertionError(f"thread {self.name!r} still running after {timeout} s")

    def outcome(self, timeout: float = 60) -> Any:
        """Wait for the work (``wait``); return what it returned, or raise what it raised."""
        self.wait(timeout)
        if self.error is not None:
            raise self.error
        return self.result


def in_thread(
    work: Callable[[], Any],
    *,
    name: str | None = None,
    released: Iterable[threading.Event] = (),
) -> InThread:
    """Start ``work()`` on a thread of its own (``InThread``) and return the thread."""
    thread = InThread(work, name=name, released=released)
    thread.start()
    return thread


def errors_of(*threads: InThread, timeout: float = 60) -> list[BaseException]:
    """Wait for every thread (``InThread.wait``); return what they raised, in their order."""
    for thread in threads:
        thread.wait(timeout)
    return [thread.error for thread in threads if thread.error is not None]


def someone_waits_for_a_lock(kind: str | None = None, *, sessions: int = 1) -> bool:
    """Return whether ``sessions`` sessions of this database (or more) wait for a lock (of
    ``kind``: 'advisory', 'tuple', 'transactionid', ...; any without): how a race test knows
    the thread it started is blocked where it should be."""
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND (%s::text IS NULL OR wait_event = %s::text)",
            [kind, kind],
        )
        return cursor.fetchone()[0] >= sessions
