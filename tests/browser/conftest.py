"""Browser tests: Debian's Chromium driven by Playwright (sync API) against ``live_server``.

One browser per session keeps the suite fast; each test gets a fresh context (cookies).
"""

import os
from contextlib import contextmanager

import pytest
from django.db import connections

from tests.celery_worker import celery_session_worker, celery_worker  # noqa: F401

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test
# body are still synchronous and safe.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = "/usr/bin/chromium"
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
