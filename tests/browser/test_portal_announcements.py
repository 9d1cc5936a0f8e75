"""What a keyboard or screen-reader user meets after an action, and in a wide table on a phone.

The message an action leaves ("Write ... approved", "Nothing was changed") is in the page the
redirect opens, so its role="status" or "alert" is not a change a screen reader is bound to
announce: portal/messages.js focuses it. A table wider than a 375 px screen scrolls sideways
inside a wrapper that Chromium makes a tab stop: it needs a name, and the portal's ring.
"""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from memory_core.models import DeletionOperation
from tests.browser.conftest import log_in, new_page
from tests.browser.test_portal_flows import PASSWORD, World, pending_sensitive_write

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUSED = """() => {
  const el = document.activeElement;
  return el ? {tag: el.tagName, cls: el.className, inMain: !!el.closest("main")} : null;
}"""

# The portal's ring: yellow between dark rings (an outline over a 7 px dark shadow).
RING = """el => {
  const s = getComputedStyle(el);
  return [s.outlineStyle, s.outlineWidth, s.boxShadow.includes("0px 0px 0px 7px")];
}"""

# Every element that scrolls sideways now: its role, tabindex and id (for a locator).
SCROLLERS = """() => [...document.querySelectorAll("main *")]
  .filter(el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX)
                && el.scrollWidth > el.clientWidth)
  .map((el, i) => {
    el.dataset.scroller = String(i);
    return {i: String(i), role: el.getAttribute("role"), tabindex: el.getAttribute("tabindex")};
  })"""


@pytest.fixture
def world(live_server):
    return World()


def test_a_decisions_message_is_focused_on_the_page_that_follows(page, world):
    result = pending_sensitive_write(world)
    log_in(page, "reviewer", PASSWORD)
    # No message, no focus moved: the page starts where it always did.
    assert page.evaluate(FOCUSED)["tag"] == "BODY"
    item = page.locator(f"#item-{result.review_item.pk}")
    item.get_by_label("Reason").fill("Confirmed with the user by phone")
    item.get_by_role("button", name="Approve").click()
    message = page.get_by_role("status").filter(has_text=re.compile("approved: it is now active"))
    expect(message).to_be_visible()
    area = page.locator("[data-announce-on-load]")
    expect(area).to_be_focused()
    expect(area).to_contain_text("approved: it is now active")
    # Ringed like every other focus in the portal, however the action was taken.
    assert area.evaluate(RING) == ["solid", "3px", True]
    # Tab goes on into the page's content, not back to the header.
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED)["inMain"], page.evaluate(FOCUSED)


def test_an_actions_error_is_focused_as_an_alert(page, world):
    """Alice opens Revoke in one tab, revokes in another, then confirms in the first."""
    log_in(page, "alice", PASSWORD)
    revoke = f"/portal/memories/{world.alice_memory.pk}/revoke/"
    page.goto(revoke)
    other = page.context.new_page()
    other.goto(revoke)
    other.get_by_role("button", name="Revoke this preference").click()
    expect(other.get_by_text("Revoked. Agents will no longer use it.")).to_be_visible()
    page.get_by_role("button", name="Revoke this preference").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Nothing was changed.")
    expect(page.locator("[data-announce-on-load]")).to_be_focused()


def test_a_refused_forms_own_focus_is_kept(page, world):
    """A page that focuses its first error (autofocus) keeps that focus."""
    log_in(page, "alice", PASSWORD)
    page.goto("/portal/?memory_type=balance")
    expect(page.get_by_label("Type")).to_be_focused()


def scrollers_are_named_tab_stops(page) -> int:
    """Check every element of the page's content that scrolls sideways; return how many."""
    found = page.evaluate(SCROLLERS)
    for scroller in found:
        assert scroller["role"] == "region", (page.url, scroller)
        assert scroller["tabindex"] == "0", (page.url, scroller)
        region = page.locator(f'[data-scroller="{scroller["i"]}"]')
        expect(region).to_have_accessible_name(re.compile(r"\w"))
    return len(found)


def tab_to(page, locator, *, presses: int = 40) -> None:
    """Press Tab until ``locator`` has focus, as a keyboard user would reach it."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if locator.evaluate("el => el === document.activeElement"):
            return
    raise AssertionError(f"Tab never reached {locator}")


def test_every_table_that_scrolls_on_a_phone_is_a_named_tab_stop(browser, live_server, world):
    now = timezone.now()
    DeletionOperation.objects.create(
        tenant=world.tenant,
        subject=world.alice_subject,
        target="memory",
        status="completed",
        requested_at=now - timedelta(seconds=3),
        completed_at=now,
    )
    with new_page(browser, live_server, width=375, height=800) as phone:
        log_in(phone, "alice", PASSWORD)
        phone.goto("/portal/deletions/")
        assert scrollers_are_named_tab_stops(phone) == 1
        # The keyboard reaches the table, scrolls it, and the ring shows where it is.
        table = phone.get_by_role("region", name="Deletion history")
        tab_to(phone, table)
        assert table.evaluate(RING) == ["solid", "3px", True]
        phone.keyboard.press("ArrowRight")
        phone.wait_for_function("() => document.activeElement.scrollLeft > 0", timeout=5_000)
        phone.goto(f"/portal/memories/{world.alice_memory.pk}/")
        assert scrollers_are_named_tab_stops(phone) == 1
        expect(phone.get_by_role("region", name="Table of events")).to_be_visible()

    with new_page(browser, live_server, width=375, height=800) as phone:
        log_in(phone, "reviewer", PASSWORD)
        phone.goto("/portal/review/health/")
        for details in phone.locator("details.data-table").all():
            details.locator("summary").click()
        scrollers_are_named_tab_stops(phone)
