"""A browser test's teardown: the live server has answered every request of the test's browser
before pytest-django's flush truncates the tables (tests/browser/conftest.py).

``tests/browser/test_portal_stale_tabs.py`` once failed in CI at its teardown: the flush (a
``TRUNCATE ... CASCADE`` of every table) deadlocked with a request the live server was still
answering for the test's page, a poll or a load the browser had in flight when the body ended;
closing the browser context does not wait for the server's threads. Here a deletion's page
polls its status, the poll is held at the server by a table lock that a thread of the test
keeps for a second after the page is closed, and the flush's ``TRUNCATE`` is watched: no session
of this process but the flush's may be in a transaction when it starts.
"""

import threading
import time

import pytest
from django.db import connections, transaction

from memory_core.models import DeletionOperation
from tests.browser.conftest import log_in, new_page
from tests.browser.test_portal_deletion_progress import running_deletion
from tests.browser.test_portal_flows import PASSWORD, World
from tests.threads import in_thread, someone_waits_for_a_lock

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Whatever a session of the live server does once the flush starts (waits for a lock, runs,
# holds its transaction's locks): the flush's own session and the test's lock holder aside.
BUSY_SESSIONS = """
    SELECT pid, state, wait_event_type, left(query, 100) FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = %s
      AND pid <> pg_backend_pid() AND NOT (pid = ANY(%s)) AND state <> 'idle'
"""


class FlushWatch:
    """Record, as the flush's ``TRUNCATE`` starts on this thread's connection, the sessions of
    this process (the live server's threads) that are doing something."""

    def __init__(self):
        self.connection = connections["default"]
        self.excluded: list[int] = []
        self.busy_at_flush: list[tuple] | None = None
        self.holder = None

    def arm(self, *, excluded: list[int], holder) -> None:
        self.excluded = excluded
        self.holder = holder
        self.connection.execute_wrappers.append(self)

    def disarm(self) -> None:
        if self in self.connection.execute_wrappers:
            self.connection.execute_wrappers.remove(self)

    def __call__(self, execute, sql, params, many, context):
        if self.busy_at_flush is None and sql.lstrip().upper().startswith("TRUNCATE"):
            self.disarm()
            mine = self.connection.settings_dict["OPTIONS"]["application_name"]
            with self.connection.cursor() as cursor:
                cursor.execute(BUSY_SESSIONS, [mine, self.excluded])
                self.busy_at_flush = cursor.fetchall()
        return execute(sql, params, many, context)


@pytest.fixture(scope="module")
def flush_watch():
    """A ``FlushWatch``; checked once the module's test, its teardown and its flush are over
    (a fixture of the function's scope is torn down before the flush)."""
    watch = FlushWatch()
    yield watch
    watch.disarm()
    if watch.holder is not None:
        watch.holder.outcome(30)
    assert watch.busy_at_flush is not None, "the flush's TRUNCATE was never seen"
    assert watch.busy_at_flush == [], (
        "the flush started while the live server was still answering the closed page's "
        f"request: {watch.busy_at_flush}"
    )


@pytest.fixture
def world(live_server):
    return World()


def test_the_flush_waits_for_the_poll_the_closed_page_had_in_flight(
    browser, live_server, world, flush_watch
):
    """A status poll the deletion's page had sent before it was closed, held at the server, is
    answered before the flush starts: the flush waits for it, not the other way round."""
    operation = running_deletion(world)
    locked, closed = threading.Event(), threading.Event()
    holder_pid: list[int] = []

    def hold_the_operations_table():
        """Hold the operations' table until a second after the page is closed: the status poll
        waits for it at the server, in its request's transaction."""
        with transaction.atomic(), connections["default"].cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            holder_pid.append(cursor.fetchone()[0])
            cursor.execute(
                f"LOCK TABLE {DeletionOperation._meta.db_table} IN ACCESS EXCLUSIVE MODE"
            )
            locked.set()
            closed.wait(30)
            time.sleep(1)

    holder = None
    try:
        with new_page(browser, live_server, width=1280, height=900) as page:
            log_in(page, "alice", PASSWORD)
            page.goto(f"/portal/deletions/{operation.pk}/")
            with page.expect_response(lambda r: r.url.endswith("/status.json")):
                pass  # the page polls: its script runs
            holder = in_thread(hold_the_operations_table, name="lock holder", released=[locked])
            assert locked.wait(30)
            deadline = time.monotonic() + 15
            while not someone_waits_for_a_lock() and time.monotonic() < deadline:
                time.sleep(0.05)  # the next poll (every second) reaches the server and waits
            assert someone_waits_for_a_lock(), "no poll waited for the operations' table"
    finally:
        # The body ends now, the lock still held: released a second later, the poll goes on.
        closed.set()
        if holder is not None:
            flush_watch.arm(excluded=holder_pid, holder=holder)
