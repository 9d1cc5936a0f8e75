"""A queued key deletion's page, followed in the browser until a worker makes it.

The page of a deletion queued for a worker has no steps to draw; once the worker has made the
request (under the same id), the page reloads once, focuses its heading and follows the
operation it became.
"""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from memory_core.deletion.selectors import queued_deletion
from memory_core.deletion.services import queued_subject_deletion_run
from memory_core.models import Subject
from tests.browser.conftest import log_in
from tests.browser.test_portal_flows import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(live_server):
    return World()


def test_a_queued_key_deletions_page_follows_the_operation_once_a_worker_makes_it(page, world):
    key = world.alice_memory.memory_key
    Subject.objects.filter(pk=world.alice_subject.pk).update(
        deletion_queued_at=timezone.now(),
        deletion_queued_key=key,
        deletion_queued_by_agent=world.agent,
    )
    operation = queued_deletion(Subject.objects.get(pk=world.alice_subject.pk))
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/deletions/{operation.pk}/")
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_have_text(f"Deleting the memories on the key {key}")
    expect(page.get_by_text("Requested by an agent on")).to_be_visible()
    expect(page.locator("#op-queued")).to_be_visible()

    made = queued_subject_deletion_run(world.alice_subject.pk)  # what the worker does
    assert str(made.pk) == str(operation.pk)
    # Reloaded once: the operation's own page, its memory counted, its steps drawn, and its
    # heading focused (the reload had left focus at the top of a page new to the reader).
    expect(heading).to_have_text("Deleting 1 memory", timeout=10_000)
    expect(heading).to_be_focused()
    expect(page.locator("#op-queued")).to_have_count(0)
    expect(page.locator("#op-steps li").first).to_be_visible()
    expect(page.get_by_text("requested by an agent")).to_be_visible()
