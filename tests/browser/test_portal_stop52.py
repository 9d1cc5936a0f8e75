"""The portal in a real browser, on what stop 52's audit found (each test failed on the code
before): a time shown as plain text, a delete page that kept its tick after the memory
changed, a deletion's page that went on claiming to update after its session ended."""

import re

import pytest
from playwright.sync_api import expect

from memory_core.models import DeletionOperation
from tests.browser.conftest import log_in
from tests.browser.test_portal_flows import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(live_server):
    return World()


def _delete_bobs_memory(page, world):
    """Log in as bob and delete his memory: its operation waits (no worker in these tests)."""
    log_in(page, "bob", PASSWORD)
    expect(page.get_by_role("heading", name="What is remembered about you")).to_be_visible()
    page.goto(f"/portal/memories/{world.bob_memory.pk}/delete/")
    page.get_by_label("I understand this cannot be undone.").check()
    page.get_by_role("button", name="Delete this memory").click()
    expect(page.get_by_text("Deletion started")).to_be_visible()


def test_health_pages_oldest_unfinished_deletion_age_is_a_time_element(page, world):
    """docs/portal.md: "every time or date shown, "3 hours ago" too, is a <time datetime>
    holding the moment itself". The health page's deletion chart says how long ago the oldest
    unfinished deletion was requested ("the oldest requested 5 minutes ago"), as plain text."""
    _delete_bobs_memory(page, world)
    operation = DeletionOperation.objects.get()
    assert operation.status != "completed"  # no worker in this test: it waits
    page.get_by_role("button", name="Log out").click()

    log_in(page, "reviewer", PASSWORD)
    page.goto("/portal/review/health/")
    note = page.get_by_text(re.compile(r"the oldest requested .* ago"))
    expect(note).to_be_visible()
    # The "... ago" is a <time> whose datetime is the oldest request's moment.
    ago = note.locator("time", has_text="ago")
    expect(ago).to_have_count(1)
    moment = ago.get_attribute("datetime")
    assert (
        moment
        and abs(
            page.evaluate("d => Date.parse(d)", moment) / 1000 - operation.requested_at.timestamp()
        )
        < 1
    )


def test_a_delete_page_shown_again_because_the_memory_changed_asks_for_the_tick_again(page, world):
    """docs/portal.md, delete: a delete page opened before the memory changed "deletes
    nothing: it is shown again as the memory is now, to confirm again" (the confirmation
    being the required tick box). The page comes back with the tick still ticked, so one more
    press of the same button (a double click's second press) deletes what the person never
    confirmed: the superseded version, not the one they read."""
    log_in(page, "bob", PASSWORD)
    expect(page.get_by_role("heading", name="What is remembered about you")).to_be_visible()
    page.goto(f"/portal/memories/{world.bob_memory.pk}/delete/")
    other = page.context.new_page()  # corrected in another tab meanwhile
    other.goto(f"/portal/memories/{world.bob_memory.pk}/correct/")
    other.get_by_label("Corrected memory").fill("Answer iOS networking questions briefly.")
    other.get_by_role("button", name="Save correction").click()
    expect(other.get_by_text("Saved version 2")).to_be_visible()

    page.get_by_label("I understand this cannot be undone.").check()
    page.get_by_role("button", name="Delete this memory").click()
    expect(page.get_by_text("This memory changed after you opened this page")).to_be_visible()
    assert not DeletionOperation.objects.exists()
    # To confirm again, the person ticks the box again.
    expect(page.get_by_label("I understand this cannot be undone.")).not_to_be_checked()


def test_a_deletions_page_whose_session_ended_does_not_keep_claiming_to_update(page, world):
    """docs/portal.md, /portal/deletions/<id>/: deletion.js polls the status every second
    and shows what changed; its page says "This page updates by itself every second." Once
    the login's session ends (logged out in another tab, expired), every poll gets the login
    page instead of JSON; the script swallows the error and retries for ever, and the page
    goes on saying it updates itself while it shows nothing new (a queued deletion's page
    reloads into the login page in that case, deletion.js ``follow``)."""
    _delete_bobs_memory(page, world)
    expect(page.locator("#op-refresh")).to_have_text("This page updates by itself every second.")
    other = page.context.new_page()
    other.goto("/portal/")
    other.get_by_role("button", name="Log out").click()
    expect(other.get_by_role("heading", name="Log in")).to_be_visible()
    # The operation moves on meanwhile; this page can no longer follow it.
    DeletionOperation.objects.update(status="running")
    page.wait_for_timeout(8000)
    on_login = "/accounts/login/" in page.url
    claims = page.locator("#op-refresh").count() and page.locator("#op-refresh").inner_text()
    assert on_login or claims != "This page updates by itself every second.", (
        page.url,
        claims,
        page.locator("#op-status").inner_text(),
    )
