"""A queued deletion's page, followed in the browser until a worker makes it.

The page of a deletion queued for a worker (a whole subject's, or a key's) has no steps to
draw; once the worker has made the request (under the same id), the page puts in place what the
server renders for the operation it became, focuses its heading, says so in its live region,
and follows it. It reloaded itself then: a screen reader started again from the top of a page
whose change nothing announced. Without JavaScript it still reloads every 10 seconds.
"""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from memory_core.deletion.selectors import queued_deletion
from memory_core.deletion.services import queued_subject_deletion_run
from memory_core.models import DeletionOperation, Memory, Subject
from tests.browser.conftest import log_in
from tests.browser.test_portal_deletion_progress import assert_shows_what_a_reload_shows
from tests.browser.test_portal_flows import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(live_server):
    return World()


def queue(world, *, key: str):
    """Queue the deletion of alice's memories (on ``key``, or all of them) as an agent's
    request found too large does; return the operation it will be."""
    Subject.objects.filter(pk=world.alice_subject.pk).update(
        deletion_queued_at=timezone.now(),
        deletion_queued_key=key,
        deletion_queued_by_agent=world.agent,
    )
    return queued_deletion(Subject.objects.get(pk=world.alice_subject.pk))


@pytest.mark.parametrize("whole", [False, True], ids=["key", "subject"])
def test_a_queued_deletions_page_follows_the_operation_in_place_once_a_worker_makes_it(
    page, world, whole
):
    key = world.alice_memory.memory_key
    operation = queue(world, key="" if whole else key)
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/deletions/{operation.pk}/")
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_have_text(
        "Deleting everything about you" if whole else f"Deleting the memories on the key {key}"
    )
    expect(page.get_by_text("Requested by an agent on")).to_be_visible()
    expect(page.locator("#op-queued")).to_be_visible()
    expect(page.locator("#op-live")).to_have_text("")
    page.evaluate("() => { window.sameDocument = true; }")

    made = queued_subject_deletion_run(world.alice_subject.pk)  # what the worker does
    assert str(made.pk) == str(operation.pk)
    # The operation's own page, its memories counted and its steps drawn, in place: the same
    # document (no reload), its heading focused, the change said in the live region.
    expect(page.locator("#op-queued")).to_have_count(0, timeout=10_000)
    expect(heading).to_have_text("Deleting everything about you" if whole else "Deleting 1 memory")
    expect(heading).to_be_focused()
    expect(page.locator("#op-steps li").first).to_be_visible()
    expect(page.get_by_text("requested by an agent")).to_be_visible()
    total = made.steps.count()
    verified = made.steps.filter(status="verified").count()
    expect(page.get_by_role("status")).to_have_text(
        f"A worker has started this deletion. {verified} of {total} stores verified clean."
    )
    expect(page.locator("#op-refresh")).to_have_text("This page updates by itself every second.")
    assert page.evaluate("window.sameDocument === true")
    assert page.locator("#op-live").count() == 1
    assert_shows_what_a_reload_shows(page)


def test_without_javascript_a_queued_deletions_page_reloads_into_the_operation(
    browser, live_server, world
):
    operation = queue(world, key="")
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = context.new_page()
        log_in(page, "alice", PASSWORD)
        page.goto(f"/portal/deletions/{operation.pk}/")
        assert page.locator('meta[http-equiv="refresh"]').get_attribute("content") == "10"
        expect(page.locator("#op-queued")).to_be_visible()
        queued_subject_deletion_run(world.alice_subject.pk)
        page.get_by_role("link", name="Refresh status").click()
        expect(page.locator("#op-queued")).to_have_count(0)
        expect(page.locator("#op-steps li").first).to_be_visible()
        expect(page.locator("#op-refresh")).to_contain_text(
            "This page reloads by itself every 10 seconds."
        )
    finally:
        context.close()


@pytest.mark.parametrize(
    "whole", [True, False], ids=["everything-by-the-person", "key-by-an-agent"]
)
def test_a_memorys_page_says_its_deletion_is_queued_and_offers_no_change(page, world, whole):
    """Stop 57's audit of the portal in a browser found a memory's own page silent about a
    deletion queued for a worker that takes it (a person's "Delete everything" too large for
    a page's time, or an agent's deletion of its key): the list said no agent is given the
    memories and none of them can be changed, while the memory's page said "Expires: no end
    date: used until you correct or delete it" and offered Correct and Revoke, always refused
    (``BEING_DELETED``) once the person had typed their correction. The page now says, where
    its end would be, that it is queued for deletion, links the operation, and offers none of
    the changes."""
    if whole:
        fields = dict(deletion_queued_by=get_user_model().objects.get(username="alice").pk)
    else:
        fields = dict(
            deletion_queued_key=world.alice_memory.memory_key,
            deletion_queued_by_agent=world.agent,
        )
    Subject.objects.filter(pk=world.alice_subject.pk).update(
        deletion_queued_at=timezone.now(), **fields
    )
    operation = queued_deletion(Subject.objects.get(pk=world.alice_subject.pk))
    log_in(page, "alice", PASSWORD)
    expect(page.locator("#queued-deletion")).to_contain_text("none of them can be changed")
    page.goto(f"/portal/memories/{world.alice_memory.pk}/")
    main = page.locator("main")
    expect(main).not_to_contain_text("used until you correct or delete it")
    notice = main.locator("#queued-deletion")
    expect(notice).to_contain_text("Queued for deletion")
    expect(notice).to_contain_text("no agent is given it, and it cannot be changed")
    expect(main.locator(f'a[href="/portal/deletions/{operation.pk}/"]')).to_have_count(1)
    for action in ("This is right", "Correct", "Revoke", "Withdraw consent"):
        expect(page.get_by_role("link", name=action, exact=True)).to_have_count(0)
        expect(page.get_by_role("button", name=action, exact=True)).to_have_count(0)
    assert Memory.objects.get(pk=world.alice_memory.pk).status == "active"


def test_delete_everything_while_one_is_queued_says_nothing_new_was_started(page, world):
    """Stop 60's audit of the portal in a browser found that "Delete everything", pressed
    while an agent's deletion of everything was queued for a worker (20 minutes before),
    stored nothing new (the first request is kept) but answered in the words of a request
    queued just now: "... the deletion of everything is queued ... From now on, no agent is
    given your memories", as if this request had queued it. The message says a deletion of
    everything was already queued, when, and that nothing new was started, as one already
    under way does."""
    queued_at = timezone.now() - timedelta(minutes=20)
    Subject.objects.filter(pk=world.alice_subject.pk).update(
        deletion_queued_at=queued_at, deletion_queued_key="", deletion_queued_by_agent=world.agent
    )
    log_in(page, "alice", PASSWORD)
    page.goto("/portal/delete-everything/")
    page.get_by_label("I understand this cannot be undone.").check()
    page.get_by_role("button", name="Delete everything").click()
    message = page.locator(".messages")
    expect(message).to_contain_text("was already queued, on ")
    text = message.inner_text()
    subject = Subject.objects.get(pk=world.alice_subject.pk)
    assert subject.deletion_queued_at == queued_at  # the first request kept
    assert not DeletionOperation.objects.filter(subject=subject).exists()
    assert "nothing new was started" in text, text
    assert "From now on" not in text, text
