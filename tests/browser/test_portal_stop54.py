"""Portal pages in a real browser, stop 54's audit: long unbreakable words (a key, a rule
code, a link, an agent's name, a file name) widened pages past a phone's screen, and the
login page, reached by Back after logging in, said the account could not open the page it
had just opened; and a correction or a revoke clicked twice while the first was saved was
answered as though nothing had been saved, or in the API's words. Stop 56's audit found two
more double clicks: a person's second correction of an administrator's memory, and an
export."""

import time
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

import portal.views
from memory_core.deletion.selectors import queued_deletion
from memory_core.models import Export, Memory, Subject
from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.browser.conftest import log_in, new_page
from tests.browser.test_portal_flows import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE_WIDTH = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
# 61 characters, a dotted key as agents write them (the policy allows 200).
KEY = "notifications.email.weekly_digest.marketing_newsletter_opt_in"


@pytest.fixture
def world(live_server):
    return World()


def test_the_export_page_does_not_scroll_sideways_on_a_phone_during_a_key_deletion(
    browser, live_server, world
):
    """An agent's deletion of the memories on a key, queued for a worker: the export page
    says "The deletion of your memories on the key <key> is queued ..." (``views.
    export_during_deletion``) as plain text in ``.message`` (portal.css: no overflow-wrap),
    so the key, one unbreakable word, runs out of the warning box and the whole page scrolls
    sideways on a 375 px phone (553 px wide), header included. The memory list, the deletion
    page and the deletions list name the same key in ``<code>`` (overflow-wrap: anywhere)
    and fit. docs/portal.md treats page-wide sideways scrolling at a phone's width as a
    fault (the header's links wrap "rather than scroll sideways out of sight"; what may be
    wider scrolls "inside a wrapper")."""
    Subject.objects.filter(pk=world.alice_subject.pk).update(
        deletion_queued_at=timezone.now(),
        deletion_queued_key=KEY,
        deletion_queued_by_agent=world.agent,
    )
    operation = queued_deletion(Subject.objects.get(pk=world.alice_subject.pk))
    with new_page(browser, live_server, width=375, height=800) as phone:
        log_in(phone, "alice", PASSWORD)
        for url in ("/portal/", f"/portal/deletions/{operation.pk}/", "/portal/deletions/"):
            phone.goto(url)
            scroll_width, client_width = phone.evaluate(PAGE_WIDTH)
            assert scroll_width <= client_width, (url, scroll_width, client_width)  # these fit
        phone.goto("/portal/export/")
        expect(phone.locator("#export-during-deletion")).to_contain_text(KEY)
        scroll_width, client_width = phone.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (scroll_width, client_width)


def test_a_correction_kept_beside_says_so_without_scrolling_sideways_at_320_px(
    browser, live_server, world
):
    """Same cause (``.message`` has no overflow-wrap): the message after a correction of an
    administrator's memory ends with its rule code, "(supersession.conflict_lower_authority)",
    one 39-character word that runs out of the message at 320 px (WCAG 1.4.10's reflow
    width), and the page is 349 px wide."""
    from memory_core.principals import SystemPrincipal
    from memory_core.services.memories import MemoryDraft, memory_store_many

    (admin,) = memory_store_many(
        drafts=[
            MemoryDraft(
                subject=world.alice_subject,
                memory_type="user_preference",
                memory_key="style.tone",
                content="Use a formal tone.",
                authority="explicit_admin",
                source_type="admin",
            )
        ],
        principal=SystemPrincipal(tenant_id=world.tenant.id),
    )
    with new_page(browser, live_server, width=320, height=800) as phone:
        log_in(phone, "alice", PASSWORD)
        phone.goto(f"/portal/memories/{admin.pk}/correct/")
        phone.get_by_label("Corrected memory").fill("Use a casual tone.")
        phone.get_by_role("button", name="Save correction").click()
        expect(phone.locator(".messages")).to_contain_text("supersession.conflict_lower_authority")
        scroll_width, client_width = phone.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (scroll_width, client_width)


URL = "https://drive.example.com/file/d/1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789/view?usp=sharing"


@pytest.mark.parametrize("where", ["memory page", "delete page"])
def test_a_waiting_correction_holding_a_link_does_not_widen_the_page_on_a_phone(
    browser, live_server, world, where
):
    """A newer version of alice's memory waits for a reviewer and holds a link. Her memory's
    page lists it under "Waiting for a reviewer" (``ul.memory-list li a``: no overflow-wrap,
    where the list page's ``.memory-content`` has it) and its delete page in the warning
    ``.message`` (none either): the link, one unbreakable word, makes the page 712 / 767 px
    wide on a 375 px phone. Stop 53 fixed the same link on the list page
    (tests/browser/test_portal_usability.py, a long URL does not widen the page)."""
    from tests.factories import pending_write_on

    pending_write_on(world.alice_memory, f"User's data scripts guide is at {URL}")
    url = f"/portal/memories/{world.alice_memory.pk}/"
    if where == "delete page":
        url += "delete/"
    with new_page(browser, live_server, width=375, height=800) as phone:
        log_in(phone, "alice", PASSWORD)
        phone.goto(url)
        expect(phone.get_by_role("link", name=URL, exact=False)).to_be_visible()
        scroll_width, client_width = phone.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (scroll_width, client_width)


def test_the_review_queue_does_not_scroll_sideways_on_a_phone_with_a_long_agent_name(
    browser, live_server, world
):
    """A pending write by an agent named ``customer_support_assistant_production_v2`` (40
    characters; an agent's name may have 100): the queue card says "written by agent
    <strong>name</strong>" in ``.review-item .muted`` (no overflow-wrap; the end user's
    memory card wraps the same name, ``.meta dd``), the grid's ``1fr`` column takes the
    name's width and every card, and the page, is 444 px wide on a 375 px phone."""
    from memory_core.principals import AgentPrincipal
    from memory_core.services.writes import memory_write

    world.agent.name = "customer_support_assistant_production_v2"
    world.agent.save()
    result = memory_write(
        principal=AgentPrincipal.from_agent(world.agent),
        data={
            "subject": "user-42",
            "memory_type": "user_preference",
            "memory_key": "health.diet",
            "content": "User has a peanut allergy.",
            "scope": "global",
            "source": {"type": "user_input", "conversation_id": "c1", "message_id": "m1"},
            "authority": "explicit_user",
            "consent": "explicit",
            "sensitivity": "sensitive",
        },
    )
    assert result.decision == "pending_approval"
    with new_page(browser, live_server, width=375, height=800) as phone:
        log_in(phone, "reviewer", PASSWORD)
        expect(phone.get_by_text("customer_support_assistant_production_v2")).to_be_visible()
        scroll_width, client_width = phone.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (scroll_width, client_width)


def test_the_health_page_does_not_scroll_sideways_with_an_evaluation_files_name(
    browser, live_server, world, settings, evaluation
):
    """The latest evaluation's card names its results file (``overview.evaluation_file``,
    whatever ``eval_retrieval --json`` was given) as bare text in ``p.muted.small``
    (templates/portal/review/health.html; the dataset beside it is in ``<code>`` and wraps).
    A file named ``retrieval_evaluation_seed_examples_20261206.json`` is one unbreakable
    word: the page is 395 px wide on a 375 px phone. Stop 53 fixed the same page's figures
    table widening it (tests/browser/test_portal_usability.py, 390 px)."""
    (result,) = (Path(path) for path in settings.MEMLEDGER_EVALUATION_RESULTS)
    result = result.rename(result.with_name("retrieval_evaluation_seed_examples_20261206.json"))
    settings.MEMLEDGER_EVALUATION_RESULTS = [str(result)]
    with new_page(browser, live_server, width=375, height=800) as phone:
        log_in(phone, "reviewer", PASSWORD)
        phone.goto("/portal/review/health/")
        expect(phone.get_by_text(result.name)).to_be_visible()
        scroll_width, client_width = phone.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (scroll_width, client_width)


def test_the_review_queue_does_not_scroll_sideways_when_the_memory_written_on_holds_a_link(
    browser, live_server, world
):
    """A pending write on a memory whose text holds a link: the card says "Approved, it
    becomes the next version of <q>Allergy plan at https://...</q>" (``p.replaces``, no
    overflow-wrap; the write's own text, ``.memory-content``, wraps), and the page is 731 px
    wide on a 375 px phone."""
    from tests.factories import MemoryFactory, pending_write_on

    head = MemoryFactory(
        subject=world.alice_subject, memory_key="health.plan", content=f"Allergy plan at {URL}"
    )
    pending_write_on(head, "User has a peanut allergy.")
    with new_page(browser, live_server, width=375, height=800) as phone:
        log_in(phone, "reviewer", PASSWORD)
        expect(phone.get_by_text("Approved, it becomes the next version of")).to_be_visible()
        scroll_width, client_width = phone.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (scroll_width, client_width)


def test_back_after_logging_in_does_not_say_the_account_cannot_open_the_page(page, world):
    """Alice opens her memory's link while logged out (a bookmark, or her session ended):
    the login page (``?next=`` the memory) logs her in and opens the memory. She presses
    Back: the login page, never cached, is fetched again, and since she is logged in and it
    has a ``next``, templates/registration/login.html says "Your account can't open that
    page. Log in with another account." Her account has just opened it. The portal never
    sends a logged-in account to the login page for a page it may not open (docs/portal.md:
    "a login with the wrong role gets a 403 page that says why"), so the warning is only ever
    shown to an account that can open the page: here, and after an action sent after the
    session ended (its ``next``, then Back)."""
    memory_url = f"/portal/memories/{world.alice_memory.pk}/"
    page.goto(memory_url)
    assert "/accounts/login/?next=" in page.url
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("User prefers Python for data scripts.").first).to_be_visible()
    assert page.url.endswith(memory_url)

    page.go_back()
    page.wait_for_load_state()
    assert "/accounts/login/" in page.url  # the history entry of the login page
    expect(page.locator("main")).not_to_contain_text("can't open that page")


def test_a_correction_clicked_twice_is_not_said_to_be_unsaved(page, world, monkeypatch):
    """The server takes a moment to save (embedding the new text): the person clicks Save
    again 300 ms later. Chromium sends both POSTs and shows the second one's answer. The
    first saved version 2; the second finds version 1 superseded (``not_chain_head``) and
    ``MemoryCorrectView.refusal`` answers "This memory changed after you opened this page:
    version 1 is now active, so your correction was not saved" (the memory read before the
    first committed). The portal handles a double click of a sensitive or kept-beside
    correction (docs/portal.md: "sent again ... nothing new is saved and the memory's page
    says ..."); a plain one must not tell the person their saved correction was lost."""
    real = portal.views.memory_correct

    def slow_correct(*args, **kwargs):
        time.sleep(1.0)  # a slower server: the embedding of the new text, a busy database
        return real(*args, **kwargs)

    monkeypatch.setattr(portal.views, "memory_correct", slow_correct)
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/correct/")
    page.get_by_label("Corrected memory").fill("User prefers Rust for data scripts.")
    button = page.get_by_role("button", name="Save correction")
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    page.wait_for_timeout(300)
    page.mouse.click(box["x"] + 5, box["y"] + 5)  # the impatient second click
    page.wait_for_timeout(3_500)
    page.wait_for_load_state()
    assert sum(url.endswith("/correct/") for url in posts) == 2  # both clicks were sent

    saved = Memory.objects.filter(supersedes=world.alice_memory)
    assert saved.count() == 1 and saved.get().status == "active"  # saved once, in use
    # What the person is shown must not say the opposite of what happened.
    text = page.locator("main").inner_text()
    assert "your correction was not saved" not in text, text[:600]
    assert not page.title().startswith("Error: "), page.title()


def test_a_revoke_clicked_twice_answers_in_the_portals_words(page, world, monkeypatch):
    """The same second click on "Revoke this preference". The second POST read the memory
    before the first committed, so ``_MemoryActionView.post`` finds it available and calls
    ``memory_revoke``, whose Conflict is shown as it is by ``PortalAccessMixin.refuse``: a red
    alert "Memory 64c29959-0277-424d-8249-820174454f8f is revoked." (the API's words, the
    memory's whole uuid), and the first click's "Revoked. Agents will no longer use it." is
    never shown. docs/portal.md: every action ends with a message "in the words of that
    action", and a revoke of a memory not in use "sends GET and POST back to the memory with
    the reason" ("Nothing was changed. This memory is revoked, so agents do not use it and
    there is nothing to revoke.", ``MemoryRevokeView.unavailable``)."""
    import portal.views as views

    real = views.MemoryRevokeView.call

    def slow_call(self, data):
        time.sleep(1.0)
        return real(self, data)

    monkeypatch.setattr(views.MemoryRevokeView, "call", slow_call)
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/revoke/")
    button = page.get_by_role("button", name="Revoke this preference")
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    page.wait_for_timeout(300)
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    page.wait_for_timeout(3_500)
    page.wait_for_load_state()
    assert sum(url.endswith("/revoke/") for url in posts) == 2
    assert Memory.objects.get(pk=world.alice_memory.pk).status == "revoked"

    said = page.locator(".messages").inner_text()
    assert str(world.alice_memory.pk) not in said, said  # not the API's "Memory <uuid> is ..."
    assert "Revoked" in said or "Nothing was changed" in said, said


def double_click(page, button, *, gap_ms: int = 300, settle_ms: int = 3_500) -> None:
    """Click ``button``, then again ``gap_ms`` later (an impatient person), and wait for the
    page the browser shows at the end (the second request's answer)."""
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    page.wait_for_timeout(gap_ms)
    page.mouse.click(box["x"] + 5, box["y"] + 5)
    page.wait_for_timeout(settle_ms)
    page.wait_for_load_state()


def slowed(monkeypatch, name: str) -> None:
    """Make ``portal.views.<name>`` take a second, as a busy server does (an embedding, a
    lock): the second click is sent while the first request still runs."""
    real = getattr(portal.views, name)

    def slow(*args, **kwargs):
        time.sleep(1.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(portal.views, name, slow)


def test_a_second_correction_of_an_admins_memory_clicked_twice_is_not_said_to_be_unsaved(
    page, world, monkeypatch
):
    """A person's second correction of an administrator's memory, its Save clicked twice,
    was saved as version 2 of the person's own chain beside it, and the page said "This
    memory changed after you opened this page: version 1 is now active, so your correction
    was not saved": the second request found the person's first correction superseded
    (``not_chain_head``) and ``correction_saved_as`` looked for a successor of the
    administrator's memory, not of the person's own (stop 56's audit of the portal in a
    browser)."""
    (admin,) = memory_store_many(
        drafts=[
            MemoryDraft(
                subject=world.alice_subject,
                memory_type="user_preference",
                memory_key="locale.time_zone",
                content="User's time zone is Europe/Berlin.",
                authority="explicit_admin",
                source_type="admin",
            )
        ],
        principal=SystemPrincipal(tenant_id=world.tenant.id),
    )
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{admin.pk}/correct/")
    page.get_by_label("Corrected memory").fill("User's time zone is Europe/Paris.")
    page.get_by_role("button", name="Save correction").click()
    expect(page.locator(".messages")).to_contain_text("saved beside the current version")

    slowed(monkeypatch, "memory_correct")
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.goto(f"/portal/memories/{admin.pk}/correct/")
    page.get_by_label("Corrected memory").fill("User's time zone is Europe/Rome.")
    double_click(page, page.get_by_role("button", name="Save correction"))
    assert sum(url.endswith("/correct/") for url in posts) == 2  # both clicks were sent

    # Saved once: the person's own chain moved on to "Rome", beside the admin's memory.
    rome = Memory.objects.get(subject=world.alice_subject, content__contains="Rome")
    assert rome.status == "active" and rome.version == 2
    text = page.locator("main").inner_text()
    assert "your correction was not saved" not in text, text[:600]
    assert not page.title().startswith("Error: "), page.title()


def test_an_export_clicked_twice_makes_one_export(page, world, monkeypatch):
    """Download JSON clicked twice, the second click while the first request was writing the
    file, made two exports: two Export rows and two files holding everything remembered
    about the person, kept on our side for ``MEMLEDGER_EXPORT_RETENTION_HOURS``, for one
    download. Every other action of the portal answers a double click as one (stop 56's
    audit of the portal in a browser)."""
    slowed(monkeypatch, "export_create")
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    log_in(page, "alice", PASSWORD)
    page.goto("/portal/export/")
    double_click(page, page.get_by_role("button", name="Download JSON"))
    assert sum(url.endswith("/export/") for url in posts) == 2  # both clicks were sent
    assert Export.objects.filter(subject=world.alice_subject).count() == 1
