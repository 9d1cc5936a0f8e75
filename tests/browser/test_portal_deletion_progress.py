"""A deletion's progress page as a screen reader meets it: followed in place, said once.

portal/static/portal/deletion.js polls the operation's status every second. It wrote the live
status on every poll (a screen reader may repeat it each second), rebuilt every step's node
(a reader's place in the list was lost each second), and reloaded the page 400 ms after the
end (the announcement cut off, focus dropped to the page's top). The operation here is moved
along by the test, through the database, with no worker: each state is held as long as needed.
"""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from memory_core.models import DeletionOperation
from tests.browser.conftest import log_in
from tests.browser.test_portal_flows import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STORES = ("primary", "embeddings", "exports")

# Mark the document and its step nodes, and record every change the script makes to the
# status, the live region, the steps and the progress bar (a screen reader may say its value).
WATCH = """() => {
  window.sameDocument = true;
  document.querySelectorAll("#op-steps li").forEach(li => { li.original = true; });
  window.changes = [];
  const observer = new MutationObserver(records => records.forEach(r => {
    const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    const li = el.closest("li");
    window.changes.push(li ? li.dataset.store : el.closest("[id]").id);
  }));
  for (const id of ["op-status", "op-live", "op-steps", "op-progress"]) {
    const node = document.getElementById(id);
    if (node) {
      const all = {subtree: true, childList: true, characterData: true, attributes: true};
      observer.observe(node, all);
    }
  }
}"""


@pytest.fixture
def world(live_server):
    return World()


def running_deletion(world) -> DeletionOperation:
    operation = DeletionOperation.objects.create(
        tenant=world.tenant,
        subject=world.alice_subject,
        target="memory",
        memory_ids=[world.alice_memory.pk],
        status="running",
        requested_by_type="user",
        started_at=timezone.now(),
        attempts=1,
    )
    operation.steps.create(store="primary", status="verified", verified_at=timezone.now())
    operation.steps.create(store="embeddings", status="running", attempts=1)
    operation.steps.create(store="exports", status="pending")
    return operation


def words(text: str) -> str:
    return " ".join(text.split())


def shown(page) -> str:
    """The progress card's text, without what the live region said (a reload says nothing)."""
    said = page.locator("#op-live").inner_text()
    return words(page.locator("#deletion").inner_text().replace(said, "", 1))


def assert_shows_what_a_reload_shows(page):
    """The page drawn in place reads as the page the server renders now."""
    drawn = shown(page)
    page.reload()
    assert page.locator("#op-live").inner_text() == ""
    assert shown(page) == drawn


def test_a_deletion_is_followed_in_place_and_its_end_said_once(page, world):
    operation = running_deletion(world)
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/deletions/{operation.pk}/")
    expect(page.locator("#op-refresh")).to_have_text("This page updates by itself every second.")
    page.evaluate(WATCH)
    # Several polls of a state that does not change: nothing is written.
    page.wait_for_timeout(3_000)
    assert page.evaluate("window.changes") == []

    # One step changes: only its node (and the progress it makes) is touched, and the other
    # steps are the same nodes.
    operation.steps.filter(store="embeddings").update(
        status="verified", verified_at=timezone.now(), attempts=2
    )
    embeddings = page.locator('#op-steps li[data-store="embeddings"]')
    expect(embeddings).to_have_class(re.compile("step-verified"))
    expect(embeddings).to_contain_text("2 attempts")
    assert set(page.evaluate("window.changes")) == {"embeddings", "op-progress"}
    assert page.evaluate("[...document.querySelectorAll('#op-steps li')].every(li => li.original)")
    expect(page.locator("#op-live")).to_have_text("")

    # A keyboard user is on the breadcrumb when the deletion ends.
    crumb = page.get_by_role("navigation", name="Breadcrumb").get_by_role("link")
    crumb.focus()
    operation.steps.filter(store="exports").update(status="verified", verified_at=timezone.now())
    DeletionOperation.objects.filter(pk=operation.pk).update(
        status="completed", completed_at=timezone.now()
    )
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_have_text("Deleted and verified")
    expect(page.get_by_role("status")).to_have_text(
        "Deleted and verified. 3 of 3 stores verified clean."
    )
    expect(page.locator("#op-status")).to_have_text("Completed")
    expect(page.locator("#op-completed")).to_be_visible()
    expect(page.locator("#op-refresh")).to_have_text("This operation is finished.")
    # No reload: the announcement is not cut off and focus stays where it was.
    page.wait_for_timeout(1_500)
    assert page.evaluate("window.sameDocument === true")
    expect(crumb).to_be_focused()
    assert page.evaluate("[...document.querySelectorAll('#op-steps li')].every(li => li.original)")
    assert_shows_what_a_reload_shows(page)


def test_a_deletion_that_stops_says_so_in_place(page, world):
    operation = running_deletion(world)
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/deletions/{operation.pk}/")
    expect(page.locator("#op-stopped")).to_be_hidden()
    page.evaluate(WATCH)
    operation.steps.filter(store="embeddings").update(status="failed", attempts=8)
    DeletionOperation.objects.filter(pk=operation.pk).update(
        status="failed", attempts=8, dead_lettered_at=timezone.now()
    )
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Deletion stopped: some copies may remain"
    )
    expect(page.get_by_role("status")).to_have_text(
        "Deletion stopped: some copies may remain. 1 of 3 stores verified clean."
    )
    expect(page.locator("#op-stopped")).to_be_visible()
    expect(page.locator("#op-stopped")).to_contain_text("but after 8 tries some copies")
    expect(page.locator("#op-refresh")).to_have_text("This deletion has stopped.")
    assert page.evaluate("window.sameDocument === true")
    assert_shows_what_a_reload_shows(page)


def test_without_javascript_the_page_says_how_often_it_reloads(browser, live_server, world):
    operation = running_deletion(world)
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = context.new_page()
        log_in(page, "alice", PASSWORD)
        page.goto(f"/portal/deletions/{operation.pk}/")
        refresh = page.locator('meta[http-equiv="refresh"]')
        assert refresh.get_attribute("content") == "10"
        expect(page.locator("#op-refresh")).to_contain_text(
            "This page reloads by itself every 10 seconds."
        )
        link = page.get_by_role("link", name="Refresh status")
        assert link.get_attribute("href") == f"/portal/deletions/{operation.pk}/"
    finally:
        context.close()
