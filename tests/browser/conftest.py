"""Browser tests: Debian's Chromium driven by Playwright (sync API) against ``live_server``.

One browser per session keeps the suite fast; each test gets a fresh context (cookies).
"""

import os
import socket
import threading
import time
from contextlib import contextmanager

import pytest
from django.db import connections

from tests.celery_worker import celery_session_worker, celery_worker  # noqa: F401

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test
# body are still synchronous and safe.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = "/usr/bin/chromium"
# How long a test's end waits for the live server to answer what the test's pages had sent.
LIVE_SERVER_DRAIN_SECONDS = 30
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (make browser installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()
        # Between its calls Playwright leaves its event loop marked as running in this
        # thread, and Django then keeps the thread's connections apart from those it made
        # before the first browser test (asgiref's Local follows the context where a loop
        # runs): every test after it uses them, and once the loop is gone the session's
        # teardown no longer sees them. Close them while they are in sight.
        connections.close_all()


class ServerConnections:
    """The connections the live server is answering, from their accept to their close.

    Closing a browser context does not wait for the server: a request already sent (a page's
    load, a poll) goes on in a thread of the server's (``ThreadedWSGIServer``, daemon threads,
    joined by nobody until the session ends), in its request's transaction
    (``ATOMIC_REQUESTS``), holding its tables' locks. pytest-django's flush at the test's end,
    a ``TRUNCATE`` of every table, then waits for it or deadlocks with it (it once failed
    tests/browser/test_portal_stale_tabs.py in CI). A connection counts from the moment the
    server accepts it, before its request is read, to the moment its thread has closed it
    (and with it its database connection, ``ThreadedWSGIServer.close_request``).
    """

    def __init__(self, live_server):
        self.httpd = live_server.thread.httpd
        self.changed = threading.Condition()
        # connection -> (its number, in the order of accept; its client's address; what it
        # does). By connection, not address: a client may reuse the port of a connection the
        # server still answers (one it reset).
        self.open: dict[socket.socket, tuple[int, tuple, str]] = {}
        self.accepted = 0
        self.here = threading.local()  # the connection a server thread answers
        accept, answer, app = (
            self.httpd.process_request,
            self.httpd.process_request_thread,
            self.httpd.get_app(),
        )

        def accepted(request, address):  # on the server's thread, as it accepts
            with self.changed:
                self.open[request] = (self.accepted, address[:2], "connected")
                self.accepted += 1
                self.changed.notify_all()
            try:
                accept(request, address)  # starts the connection's thread
            except BaseException:
                self._forget(request)
                raise

        def answering(request, address):  # the connection's thread
            self.here.request = request
            try:
                answer(request, address)  # every request of the connection, then its close
            finally:
                self._forget(request)

        def described(environ, start_response):
            request = getattr(self.here, "request", None)  # None: accepted before counting
            with self.changed:
                if request in self.open:
                    number, address, _ = self.open[request]
                    doing = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}"
                    self.open[request] = (number, address, doing)
            return app(environ, start_response)

        # ThreadingMixIn looks both methods up on the server, so the instance's win.
        self.httpd.process_request = accepted
        self.httpd.process_request_thread = answering
        self.httpd.set_app(described)

    def _forget(self, request) -> None:
        with self.changed:
            self.open.pop(request, None)
            self.changed.notify_all()

    def mark(self) -> int:
        """Return the number the next connection accepted will have."""
        with self.changed:
            return self.accepted

    def wait_until_closed(self, since: int, timeout: float) -> list[str]:
        """Wait ``timeout`` seconds at most for the server to close every connection it has
        accepted from mark ``since`` on, and any it has not accepted yet; return what those
        still open are doing. Fail if the server accepts without counting."""
        deadline = time.monotonic() + timeout

        def left() -> list[str]:
            return sorted(doing for number, _, doing in self.open.values() if number >= since)

        # A connection the browser made before it closed may wait in the listening socket's
        # queue, not accepted yet. The queue is first in, first out: once the server has
        # accepted this one, it has accepted (and counted) those.
        with socket.create_connection(self.httpd.server_address[:2], timeout=timeout) as probe:
            mine = probe.getsockname()[:2]
            with self.changed:
                counted = self.changed.wait_for(
                    lambda: any(address == mine for _, address, _ in self.open.values()),
                    timeout=max(0, deadline - time.monotonic()),
                )
        if not counted:
            # The hooks above are on socketserver's and Django's internals: were they no
            # longer called, the wait would wait for nothing and pass.
            pytest.fail(
                f"the live server counted no connection in {timeout} s, not even this wait's"
                " own: its accepts no longer go through ServerConnections",
                pytrace=False,
            )
        # Closed, the probe is answered by an end of the connection.
        with self.changed:
            self.changed.wait_for(lambda: not left(), timeout=max(0, deadline - time.monotonic()))
            return left()


@pytest.fixture(scope="session")
def live_server_connections(live_server):
    return ServerConnections(live_server)


@pytest.fixture(autouse=True)
def _live_server_answered_all(request):
    """At a browser test's end, close its browser contexts, then wait until the live server
    has answered and closed every connection accepted during the test, before pytest-django's
    flush.

    Set up after the test database (``transactional_db``, which pytest-django's live server
    helper requests too), this is torn down before it: the flush starts when no request of
    the test's browser is left at the server (``ServerConnections``)."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    connections_ = request.getfixturevalue("live_server_connections")
    since = connections_.mark()
    yield
    if "browser" in request.fixturenames:
        # A context a test left open would keep polling; the page fixture's is closed.
        for context in request.getfixturevalue("browser").contexts:
            context.close()
    still = connections_.wait_until_closed(since, timeout=LIVE_SERVER_DRAIN_SECONDS)
    if still:
        pytest.fail(
            f"{len(still)} connection(s) of the test's browser still open at the live server"
            f" {LIVE_SERVER_DRAIN_SECONDS} s after its pages were closed, before the database's"
            f" flush: {'; '.join(still)}",
            pytrace=False,
        )


@contextmanager
def new_page(browser, live_server, *, width: int, height: int):
    """A page of a fresh browser context on the live server, ``width`` x ``height``."""
    context = browser.new_context(
        viewport={"width": width, "height": height}, base_url=live_server.url
    )
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def page(browser, live_server):
    with new_page(browser, live_server, width=1280, height=900) as page:
        yield page


def log_in(page, username, password):
    """Log in through the real login form."""
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()
