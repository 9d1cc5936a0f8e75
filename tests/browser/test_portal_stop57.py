"""Portal pages in a real browser, stop 57's audit: what it checked that held and that no other
browser test covers. Every page names its controls, keeps its ids unique and its
descriptions pointing at something, and logs no script error; Back after an action or a
logout shows the memory as it is now, never a copy; "Delete everything" runs to its end; a
reviewer's decision or resolution clicked twice is answered as done once.

The two it found broken are tested beside the tests of their kind: a reason the injection
guard refuses (test_portal_usability.py) and a memory's page while a deletion that takes it
is queued (test_portal_queued_deletion.py).
"""

import time

import pytest
from playwright.sync_api import expect

import portal.review_views
from memory_core.models import Memory, ReviewItem
from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.browser.conftest import log_in
from tests.browser.test_portal_flows import (
    PASSWORD,
    World,
    deploy_region_conflict_opened,
    pending_sensitive_write,
)
from tests.browser.test_portal_stop54 import double_click

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Controls without an accessible name, ids used twice, aria-describedby naming no element.
PAGE_PROBLEMS = """() => {
  const unnamed = [];
  const controls = 'input:not([type=hidden]), select, textarea, button, a[href]';
  for (const el of document.querySelectorAll(controls)) {
    if (el.hidden || el.disabled) continue;
    let name = el.getAttribute('aria-label') || '';
    if (!name && el.labels && el.labels.length) {
      name = Array.from(el.labels).map(l => l.textContent).join(' ');
    }
    if (!name) name = (el.textContent || '').trim();
    if (!name) name = el.getAttribute('aria-labelledby') || '';
    if (!name) unnamed.push(el.outerHTML.slice(0, 150));
  }
  const ids = {};
  for (const el of document.querySelectorAll('[id]')) ids[el.id] = (ids[el.id] || 0) + 1;
  const duplicate = Object.entries(ids).filter(([k, v]) => v > 1).map(([k]) => k);
  const dangling = [];
  for (const el of document.querySelectorAll('[aria-describedby]')) {
    for (const id of el.getAttribute('aria-describedby').split(/\\s+/)) {
      if (id && !document.getElementById(id)) dangling.push(id);
    }
  }
  return {unnamed, duplicate, dangling};
}"""


@pytest.fixture
def world(live_server):
    return World()


def test_every_page_names_its_controls_and_logs_no_error(page, world):
    """Stop 57's audit of the portal in a browser opened every page of a person and of a
    reviewer, with a memory of each kind, a write waiting and a conflict: each answered, every
    control had a name, no id was used twice, every description named an element, and no
    script logged an error or a warning. This holds."""
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: message.type in ("error", "warning") and errors.append(message.text),
    )
    workflow, inferred = memory_store_many(
        drafts=[
            MemoryDraft(
                subject=world.alice_subject,
                memory_type="episode",
                content="Alice asked about the Lunest deploy on Tuesday.",
                authority="model_inference",
                source_type="model_inference",
                consent="workflow",
            ),
            MemoryDraft(
                subject=world.alice_subject,
                memory_type="user_preference",
                memory_key="style.tone",
                content="User likes a friendly tone.",
                authority="model_inference",
                source_type="model_inference",
                consent="workflow",
            ),
        ],
        principal=SystemPrincipal(tenant_id=world.tenant.id),
    )
    pending_sensitive_write(world)
    deploy_region_conflict_opened(world)
    memory = world.alice_memory.pk
    pages = {
        "alice": [
            "/portal/",
            "/portal/?q=python",
            f"/portal/memories/{memory}/",
            f"/portal/memories/{memory}/correct/",
            f"/portal/memories/{memory}/revoke/",
            f"/portal/memories/{memory}/delete/",
            f"/portal/memories/{workflow.pk}/",
            f"/portal/memories/{workflow.pk}/withdraw-consent/",
            f"/portal/memories/{inferred.pk}/",
            f"/portal/memories/{inferred.pk}/withdraw-consent/",
            "/portal/delete-everything/",
            "/portal/deletions/",
            "/portal/export/",
        ],
        "reviewer": [
            "/portal/review/",
            "/portal/review/conflicts/",
            "/portal/review/rejected/",
            "/portal/review/deletions/",
            "/portal/review/health/",
            "/portal/review/health/?days=7",
        ],
    }
    problems = []
    for login, urls in pages.items():
        page.context.clear_cookies()
        log_in(page, login, PASSWORD)
        for url in urls:
            response = page.goto(url)
            assert response.status < 500, (url, response.status)
            found = page.evaluate(PAGE_PROBLEMS)
            problems += [(url, kind, items) for kind, items in found.items() if items]
    assert not problems, problems
    assert not errors, errors


def test_back_after_a_correction_shows_the_version_superseded(page, world):
    """Stop 57's audit of the portal in a browser pressed Back twice after saving a
    correction: the memory's page came back fetched again (the portal's pages are not
    stored), its version called superseded, not the active copy the browser had shown. This
    holds."""
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/")
    page.get_by_role("link", name="Correct").click()
    page.get_by_label("Corrected memory").fill("User prefers Rust for data scripts.")
    page.get_by_role("button", name="Save correction").click()
    expect(page.get_by_text("Saved version 2")).to_be_visible()
    page.go_back()
    page.wait_for_load_state()
    page.go_back()
    page.wait_for_load_state()
    assert page.url.endswith(f"/portal/memories/{world.alice_memory.pk}/"), page.url
    expect(page.locator(".lede").first).to_contain_text("Superseded")


def test_back_after_a_revoke_shows_the_memory_revoked(page, world):
    """Stop 57's audit of the portal in a browser pressed Back twice after revoking a
    preference: its page came back revoked, not the active copy with its Revoke button. This
    holds."""
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/")
    page.get_by_role("link", name="Revoke").click()
    page.get_by_role("button", name="Revoke this preference").click()
    expect(page.get_by_text("Revoked.")).to_be_visible()
    page.go_back()
    page.wait_for_load_state()
    page.go_back()
    page.wait_for_load_state()
    expect(page.locator(".lede").first).to_contain_text("Revoked")
    expect(page.get_by_role("link", name="Revoke", exact=True)).to_have_count(0)


def test_back_after_logging_out_shows_nothing_remembered(page, world):
    """Stop 57's audit of the portal in a browser pressed Back after logging out from a
    memory's page: the login page came back, not the memory (a shared computer's next user
    would have read it). This holds."""
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/")
    expect(page.get_by_text("User prefers Python for data scripts.").first).to_be_visible()
    page.get_by_role("button", name="Log out").click()
    page.wait_for_load_state()
    page.go_back()
    page.wait_for_load_state()
    expect(page.get_by_text("User prefers Python for data scripts.")).to_have_count(0)


def test_delete_everything_runs_to_its_end(page, world, celery_worker):
    """Stop 57's audit of the portal in a browser deleted everything about a person with a
    write of theirs waiting for a reviewer: the operation's page followed it to completed,
    the list then said nothing is remembered and nothing waits, and the reviewer's queue no
    longer held the write. This holds."""
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    pending = pending_sensitive_write(world)
    log_in(page, "alice", PASSWORD)
    page.goto("/portal/")
    page.get_by_role("link", name="Delete everything").click()
    page.get_by_label("I understand this cannot be undone.").check()
    page.get_by_role("button", name="Delete everything").click()
    expect(page.locator("#op-status")).to_have_text("Completed", timeout=60_000)
    expect(page.get_by_role("heading", name="Everything about you is deleted")).to_be_visible()
    page.goto("/portal/")
    expect(page.get_by_text("Nothing is remembered about you right now.")).to_be_visible()
    expect(page.locator(".pending")).to_have_count(0)
    assert not Memory.objects.filter(subject=world.alice_subject).exclude(status="deleted")
    page.context.clear_cookies()
    log_in(page, "reviewer", PASSWORD)
    expect(page.locator(f"#item-{pending.review_item.pk}")).to_have_count(0)
    assert not errors, errors


def slowed(monkeypatch, name: str) -> None:
    """Make ``portal.review_views.<name>`` take a second, as a busy server does: the second
    click is sent while the first request still runs."""
    real = getattr(portal.review_views, name)

    def slow(*args, **kwargs):
        time.sleep(1.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(portal.review_views, name, slow)


@pytest.mark.parametrize("button, state", [("Approve", "approved"), ("Reject", "rejected")])
def test_a_decision_clicked_twice_is_answered_as_made_once(page, world, monkeypatch, button, state):
    """Stop 57's audit of the portal in a browser clicked a reviewer's Approve (and Reject)
    twice while the first was being decided: the write was decided once, and the page said
    so, or that it was already decided, never the service's "not pending". This holds."""
    result = pending_sensitive_write(world)
    slowed(monkeypatch, f"review_{button.lower()}")
    log_in(page, "reviewer", PASSWORD)
    item = page.locator(f"#item-{result.review_item.pk}")
    item.get_by_label("Reason").fill("Confirmed with the user by phone")
    double_click(page, item.get_by_role("button", name=button))
    assert ReviewItem.objects.get(pk=result.review_item.pk).state == state
    said = page.locator(".messages").inner_text()
    assert "not pending" not in said, said
    assert state in said, said


def test_a_resolution_clicked_twice_is_answered_as_made_once(page, world, monkeypatch):
    """Stop 57's audit of the portal in a browser clicked a conflict's Resolve twice while the
    first was being resolved: the page said it was resolved, or that the reviewer had
    resolved it already. This holds."""
    *_, item = deploy_region_conflict_opened(world)
    slowed(monkeypatch, "conflict_resolve")
    log_in(page, "reviewer", PASSWORD)
    page.goto("/portal/review/conflicts/")
    card = page.locator(f"#conflict-{item.pk}")
    card.get_by_label("us-east-1", exact=False).check()
    card.get_by_label("Reason").fill("The team moved to us-east-1 in March")
    double_click(page, card.get_by_role("button", name="Resolve"))
    said = page.locator(".messages").inner_text()
    assert "Conflict resolved" in said or "you resolved it already" in said, said
    assert ReviewItem.objects.get(pk=item.pk).state != "open"
