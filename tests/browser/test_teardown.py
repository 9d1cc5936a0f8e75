"""A browser test's teardown: the live server has answered every request of the test's browser
before pytest-django's flush truncates the tables (tests/browser/conftest.py).

``tests/browser/test_portal_stale_tabs.py`` once failed in CI at its teardown: the flush (a
``TRUNCATE ... CASCADE`` of every table) deadlocked with a request the live server was still
answering for the test's page, a poll or a load the browser had in flight when the body ended;
closing the browser context does not wait for the server's threads. Here a deletion's page
polls its status, the poll is held at the server by a table lock that a thread of the test
keeps for a second after the page is closed, and the flush's ``TRUNCATE`` is watched: no session
of this process but the flush's may be in a transaction when it starts. The wait's count of the
server's connections is tested on a live server of the test's own.
"""

import socket
import struct
import threading
import time

import pytest
from django.db import connections, transaction
from pytest_django.live_server_helper import LiveServer

from memory_core.models import DeletionOperation
from tests.browser.conftest import ServerConnections, log_in, new_page
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
    """A ``FlushWatch``; checked once the test using it, its teardown and its flush are over
    (a fixture of the function's scope is torn down before the flush). Keep that test the
    module's last: a module's fixtures are torn down at the teardown of its last test."""
    watch = FlushWatch()
    yield watch
    watch.disarm()
    if watch.holder is None:
        return  # never armed: the test failed before its lock, and says why
    watch.holder.outcome(30)
    assert watch.busy_at_flush is not None, "the flush's TRUNCATE was never seen"
    assert watch.busy_at_flush == [], (
        "the flush started while the live server was still answering the closed page's "
        f"request: {watch.busy_at_flush}"
    )


@pytest.fixture
def world(live_server):
    return World()


def test_the_wait_fails_when_the_live_servers_accepts_go_uncounted():
    """Were the server's accepts no longer counted (a socketserver or Django whose accept loop
    stopped calling ``process_request``, where ``ServerConnections`` counts), the wait would
    see no connection and pass after its timeout: every browser test 30 s slower, none
    protected. It fails instead."""
    server = LiveServer("localhost")
    try:
        counted = ServerConnections(server)
        since = counted.mark()
        del server.thread.httpd.process_request  # the accepts bypass the count
        with pytest.raises(pytest.fail.Exception, match="counted no connection"):
            counted.wait_until_closed(since, timeout=2)
    finally:
        server.stop()


def test_a_connection_still_answered_counts_when_a_new_one_comes_from_its_port():
    """The browser gives up on a request the server is still answering (its page closed or
    navigated, its socket reset) and opens another connection from the same port, which the
    kernel may hand out again at once: the server answers both, and the wait waits for both.
    Counted by client address, the second replaced the first, whose request then went on
    uncounted, while the flush ran, once the second had closed."""
    server = LiveServer("localhost")
    held, release = threading.Event(), threading.Event()

    def app(environ, start_response):  # the request the server is still answering
        held.set()
        release.wait(30)
        start_response("204 No Content", [])
        return [b""]

    def connection_from(port: int) -> socket.socket:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.connect(server.thread.httpd.server_address[:2])
        return sock

    try:
        server.thread.httpd.set_app(app)
        counted = ServerConnections(server)
        since = counted.mark()
        first = connection_from(0)
        port = first.getsockname()[1]
        first.sendall(b"GET /held HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert held.wait(10)
        first.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        first.close()  # reset: the port is free again at once
        with connection_from(port):
            with counted.changed:
                assert counted.changed.wait_for(lambda: counted.accepted == since + 2, 10)
        assert counted.wait_until_closed(since, timeout=1) == ["GET /held"]
        release.set()
        assert counted.wait_until_closed(since, timeout=10) == []
    finally:
        release.set()
        server.stop()


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
