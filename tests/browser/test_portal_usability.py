"""The portal as its users meet it: a phone's width, the keyboard, a screen reader's view of
forms and their errors, a page left open while the memory changed.

Headless Chromium against a live server, with the same world as the acceptance scenarios.
"""

import re

import pytest
from playwright.sync_api import expect

from memory_core.models import Memory
from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.browser.conftest import log_in, new_page
from tests.browser.test_portal_flows import PASSWORD, World, pending_sensitive_write

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A repository rule as agents write them: a URL, a key and a scope without a space to break at.
LONG_URL = (
    "https://github.com/acme/monorepo/blob/main/.github/workflows/"
    "deploy-production-eu-west-1-with-canary-and-rollback.yml"
)

PAGE_WIDTH = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


@pytest.fixture
def world(live_server):
    return World()


@pytest.fixture
def phone(browser, live_server):
    with new_page(browser, live_server, width=375, height=800) as page:
        yield page


def test_a_memory_holding_a_long_url_does_not_widen_the_page_on_a_phone(phone, world):
    (rule,) = memory_store_many(
        drafts=[
            MemoryDraft(
                subject=world.alice_subject,
                memory_type="repository_rule",
                memory_key="repo.ci_config_path_for_the_monorepo_service",
                scope_kind="repo",
                scope_ref="github.com/acme/monorepo",
                content=f"CI config lives at {LONG_URL}",
                authority="explicit_user",
                source_type="user_input",
            )
        ],
        principal=SystemPrincipal(tenant_id=world.tenant.id),
    )
    log_in(phone, "alice", PASSWORD)
    for url in (
        "/portal/",
        f"/portal/memories/{rule.pk}/",
        f"/portal/memories/{rule.pk}/correct/",
        f"/portal/memories/{rule.pk}/delete/",
    ):
        phone.goto(url)
        expect(phone.get_by_text(LONG_URL).first).to_be_visible()
        scroll_width, client_width = phone.evaluate(PAGE_WIDTH)
        assert scroll_width <= client_width, (url, scroll_width, client_width)


def test_a_refused_correction_is_announced_on_its_field_and_focused(page, world):
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/correct/")
    page.get_by_label("Corrected memory").fill("   ")
    page.get_by_label("Why (optional)").fill("typo")
    page.get_by_role("button", name="Save correction").press("Enter")
    content = page.get_by_label("Corrected memory")
    # The error is part of the field's description (aria-describedby names an element that
    # exists), the field is marked invalid, and focus is on it, not back at the page's top.
    expect(content).to_have_attribute("aria-invalid", "true")
    expect(content).to_have_accessible_description(
        "This becomes a new version, recorded as stated by you. The current version stays in "
        "the history as superseded. A version set by an administrator is not replaced: your "
        "correction is kept beside it for a reviewer. This field is required."
    )
    expect(content).to_be_focused()
    expect(page.get_by_label("Why (optional)")).to_have_value("typo")


def test_a_filter_that_cannot_be_applied_is_announced_on_its_field(page, world):
    log_in(page, "alice", PASSWORD)
    page.goto("/portal/?memory_type=balance")
    memory_type = page.get_by_label("Type")
    expect(memory_type).to_have_attribute("aria-invalid", "true")
    expect(memory_type).to_have_accessible_description(
        "Select a valid choice. balance is not one of the available choices."
    )
    expect(memory_type).to_be_focused()


def test_a_form_sent_from_a_page_older_than_the_login_says_so_in_plain_words(page, world):
    """The correction page stays open while the user logs out and in again in another tab:
    its form's CSRF token is stale. The refusal is a portal page that says what happened and
    what to do, not Django's "CSRF verification failed" page."""
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/correct/")
    page.get_by_label("Corrected memory").fill("User prefers Julia for data scripts.")
    other = page.context.new_page()
    other.goto("/portal/")
    other.get_by_role("button", name="Log out").click()
    log_in(other, "alice", PASSWORD)
    with page.expect_navigation() as navigation:
        page.get_by_role("button", name="Save correction").click()
    assert navigation.value.status == 403
    expect(page.get_by_role("heading", name="This form was out of date")).to_be_visible()
    expect(page.get_by_text("Nothing was changed.")).to_be_visible()
    expect(page.get_by_role("link", name="Back to the portal")).to_be_visible()
    expect(page.get_by_text("CSRF")).to_have_count(0)
    assert page.evaluate("document.documentElement.lang") == "en"


def test_a_reviewer_resolves_a_conflict_with_the_keyboard_after_forgetting_the_winner(page, world):
    from tests.browser.test_portal_flows import deploy_region_conflict_opened

    *_, item = deploy_region_conflict_opened(world)
    log_in(page, "reviewer", PASSWORD)
    page.goto("/portal/review/conflicts/")
    card = page.locator(f"#conflict-{item.pk}")
    # "Choose the winner" is preselected; the reviewer types a reason and forgets the winner.
    card.get_by_label("Reason").focus()
    page.keyboard.type("The team moved to us-east-1 in March")
    page.keyboard.press("Enter")
    card = page.locator(f"#conflict-{item.pk}")
    error = card.get_by_role("alert")
    expect(error).to_have_text("Nothing was resolved. Winner: Pick the memory that wins.")
    expect(error).to_be_focused()
    expect(card.get_by_label("Reason")).to_have_value("The team moved to us-east-1 in March")
    expect(card.get_by_label("Choose the winner")).to_be_checked()
    # From the message, Tab reaches the candidates and Space picks the focused one.
    page.keyboard.press("Tab")
    first = card.locator("input[name=winner_id]").first
    expect(first).to_be_focused()
    page.keyboard.press("Space")
    expect(first).to_be_checked()
    winner = first.get_attribute("value")
    card.get_by_role("button", name="Resolve").press("Enter")
    expect(page.get_by_text("Conflict resolved: choose the winner.")).to_be_visible()
    item.refresh_from_db()
    assert item.state == "resolved" and item.resolution == "choose_winner"
    statuses = dict(Memory.objects.filter(pk__in=item.candidate_ids).values_list("pk", "status"))
    assert {str(pk): status for pk, status in statuses.items() if status == "active"} == {
        winner: "active"
    }


def test_a_conflict_with_a_candidate_not_yet_in_effect_says_only_one_is_in_use(page, world):
    """A conflict of two candidates, one whose valid_from was still ahead, listed it as not
    yet in effect and offered it as no winner, yet ``conflict_queue`` counted it in use (its
    stored status is active): the card left out "Only one candidate is still in use", which
    it shows for any other candidate that cannot win (stop 56's audit of the portal in a
    browser)."""
    from datetime import timedelta

    from django.utils import timezone

    from tests.browser.test_portal_flows import deploy_region_conflict_opened

    west, _, item = deploy_region_conflict_opened(world)
    Memory.objects.filter(pk=west.pk).update(valid_from=timezone.now() + timedelta(days=7))

    log_in(page, "reviewer", PASSWORD)
    page.goto("/portal/review/conflicts/")
    card = page.locator(f"#conflict-{item.pk}")
    expect(card.get_by_text("Not yet in effect")).to_be_visible()
    expect(card.locator('input[name="winner_id"]')).to_have_count(1)  # one can win
    expect(card).to_contain_text("Only one candidate is still in use")


def test_enter_in_a_reviewers_reason_approves_nothing(page, world):
    # Enter in a text field submits its form with the form's first submit button: that was
    # Approve, so a reviewer finishing a reason with Enter approved the sensitive write.
    from memory_core.models import ReviewItem

    result = pending_sensitive_write(world)
    log_in(page, "reviewer", PASSWORD)
    item = page.locator(f"#item-{result.review_item.pk}")
    reason = item.get_by_label("Reason")
    reason.focus()
    page.keyboard.type("Not sure yet, asking the user")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    # Still the same page, the reason still typed, the write still waiting.
    expect(reason).to_have_value("Not sure yet, asking the user")
    expect(page.get_by_text("approved: it is now active")).to_have_count(0)
    assert ReviewItem.objects.get(pk=result.review_item.pk).state == "open"
    # The decision is a click: Reject, as the reviewer meant.
    item.get_by_role("button", name="Reject").click()
    expect(page.get_by_text("rejected.")).to_be_visible()
    assert ReviewItem.objects.get(pk=result.review_item.pk).state == "rejected"
    assert Memory.objects.get(pk=result.memory.pk).status != "active"


def test_a_blank_reason_comes_back_on_that_writes_field_focused(page, world):
    """Spaces pass the browser's ``required``; the server refused them and sent the reviewer
    to the queue's top, with a message naming no write, among several about one person."""
    from memory_core.models import ReviewItem
    from memory_core.services.writes import memory_write

    pending_sensitive_write(world)
    second = memory_write(
        principal=world.agent_principal,
        data={
            "subject": "user-42",
            "memory_type": "user_preference",
            "memory_key": "health.medication",
            "content": "User takes an antihistamine every morning.",
            "scope": "global",
            "source": {"type": "user_input", "conversation_id": "conv-9", "message_id": "m-4"},
            "authority": "explicit_user",
            "consent": "explicit",
            "sensitivity": "sensitive",
        },
    ).review_item
    log_in(page, "reviewer", PASSWORD)
    what = f"the write health.medication ({str(second.pk)[:8]}) about user-42"
    page.get_by_role("textbox", name=f"Reason for {what}", exact=True).fill("   ")
    page.get_by_role("button", name=f"Reject {what}", exact=True).click()
    page.wait_for_load_state()
    reason = page.get_by_role("textbox", name=f"Reason for {what}", exact=True)
    expect(reason).to_be_focused()
    expect(reason).to_have_attribute("aria-invalid", "true")
    expect(reason).to_have_accessible_description(
        "Nothing was decided. Give a reason for the decision; it is kept with it. "
        "User takes an antihistamine every morning."
    )
    assert page.title().startswith("Error: ")
    assert ReviewItem.objects.get(pk=second.pk).state == "open"


# The link colour's contrast with the card's white, by WCAG's relative luminance.
CONTRAST = """([fg, bg]) => {
  const lum = (css) => {
    const [r, g, b] = css.match(/[\\d.]+/g).slice(0, 3).map(Number).map((c) => {
      c /= 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


def test_a_memorys_text_in_the_list_looks_like_the_link_it_is(page, world):
    """The text is the only link to a memory's page, and it was styled as body text: the
    ink's colour, no underline, on hover alone did it change."""
    log_in(page, "alice", PASSWORD)
    link = page.locator(".memory-content a").first
    expect(link).to_have_text("User prefers Python for data scripts.")
    style = "(el) => [getComputedStyle(el).color, getComputedStyle(el).textDecorationLine]"
    body = page.evaluate("getComputedStyle(document.body).color")
    color, decoration = link.evaluate(style)
    assert color != body, color  # the links' colour, not the text's
    card = link.evaluate("(el) => getComputedStyle(el.closest('.card')).backgroundColor")
    assert page.evaluate(CONTRAST, [color, card]) >= 4.5
    link.hover()
    assert link.evaluate(style)[1] == "underline"
    page.mouse.move(0, 0)
    assert link.evaluate(style)[1] == decoration
    page.keyboard.press("Tab")  # focus from the keyboard: underlined too, and ringed
    link.focus()
    assert link.evaluate(style)[1] == "underline"


@pytest.mark.parametrize("width", [1280, 375])
def test_the_not_in_use_card_has_no_gap_above_its_heading(browser, live_server, width):
    """The heading's own top margin (1.6rem) sat inside the card's padding: ~40 px of white
    above "Not in use", where the card beside it ("Waiting for a reviewer") has none."""
    world = World()
    Memory.objects.filter(pk=world.alice_memory.pk).update(status="revoked")
    pending_sensitive_write(world)
    with new_page(browser, live_server, width=width, height=900) as page:
        log_in(page, "alice", PASSWORD)
        for name in ("Not in use", "Waiting for a reviewer"):
            heading = page.get_by_role("heading", name=name)
            card = heading.locator("xpath=..")
            gap = heading.bounding_box()["y"] - card.bounding_box()["y"]
            padding = card.evaluate(
                "(el) => parseFloat(getComputedStyle(el).paddingTop)"
                " + parseFloat(getComputedStyle(el).borderTopWidth)"
            )
            assert gap <= padding + 1, (name, gap, padding)


# The focus ring's reach around the focused element (its outline or its dark shadow, which
# is wider), and every ancestor whose overflow would clip it short of that.
RING_CLIPPED_BY = """el => {
  const s = getComputedStyle(el);
  const shadow = Number((s.boxShadow.match(/0px 0px 0px (\\d+)px/) || [0, 0])[1]);
  const reach = Math.max(parseFloat(s.outlineOffset) + parseFloat(s.outlineWidth), shadow);
  const box = el.getBoundingClientRect();
  const clips = [];
  for (let node = el.parentElement; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    if (style.overflowX === "visible" && style.overflowY === "visible") { continue; }
    const r = node.getBoundingClientRect();
    if (box.left - reach < r.left || box.right + reach > r.right
        || box.top - reach < r.top || box.bottom + reach > r.bottom) {
      clips.push(node.className || node.tagName);
    }
  }
  return [reach, clips];
}"""


def test_the_health_windows_focus_ring_is_not_clipped(page, world):
    from tests.browser.test_portal_announcements import tab_to

    log_in(page, "reviewer", PASSWORD)
    page.goto("/portal/review/health/")
    windows = page.get_by_role("navigation", name="Time window").get_by_role("link")
    expect(windows).to_have_count(3)
    for link in windows.all():
        tab_to(page, link)
        reach, clips = link.evaluate(RING_CLIPPED_BY)
        assert reach >= 5 and clips == [], (link.inner_text(), reach, clips)
    # The end links' own corners are rounded as the border around them is.
    radius = "(el, side) => getComputedStyle(el)[side]"
    assert windows.first.evaluate(radius, "borderTopLeftRadius") != "0px"
    assert windows.last.evaluate(radius, "borderBottomRightRadius") != "0px"


def test_the_health_page_does_not_scroll_sideways_on_a_phone(
    browser, live_server, world, evaluation
):
    """With an evaluation's figures on it, the page was 417 px wide on a 390 px phone: the
    figures table widened the one grid column, and every chart with it."""
    with new_page(browser, live_server, width=390, height=844) as phone:
        log_in(phone, "reviewer", PASSWORD)
        phone.goto("/portal/review/health/")
        expect(phone.get_by_role("region", name="Figures of the latest evaluation")).to_be_visible()
        assert phone.evaluate("document.documentElement.scrollWidth") == 390


# Each axis label of the health charts: its size as drawn (the viewBox is scaled to the
# card), and whether it stays inside its chart and clear of its neighbours.
AXIS_LABELS = """() => [...document.querySelectorAll(".chart svg")]
    .filter(svg => svg.getClientRects().length).flatMap(svg => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const frame = svg.getBoundingClientRect();
  return [...svg.querySelectorAll("text.axis")].map(text => {
    const box = text.getBoundingClientRect();
    return {
      chart: svg.closest("figure").querySelector("h2").textContent,
      text: text.textContent,
      px: parseFloat(getComputedStyle(text).fontSize) * scale,
      inside: box.left >= frame.left && box.right <= frame.right
        && box.top >= frame.top && box.bottom <= frame.bottom,
      left: box.left, right: box.right, top: box.top, bottom: box.bottom,
      frame: [frame.left, frame.right, frame.top, frame.bottom],
    };
  });
})"""


@pytest.mark.parametrize("width", [1280, 375])
@pytest.mark.parametrize("days", [7, 14, 30])
def test_the_health_charts_axis_labels_are_readable_and_fit(
    browser, live_server, world, days, width
):
    """On a 375 px phone the charts' labels were drawn ~7 px high (the 640-wide drawing
    scaled to the card); a phone now shows a narrower drawing of each chart."""
    with new_page(browser, live_server, width=width, height=900) as page:
        log_in(page, "reviewer", PASSWORD)
        page.goto(f"/portal/review/health/?days={days}")
        labels = page.evaluate(AXIS_LABELS)
        charts = page.locator(".chart svg[role=img]:visible")
        assert charts.count() == page.locator("figure.chart").count() >= 6  # one drawing each
    assert len(labels) > 30, labels
    for label in labels:
        assert label["px"] >= 10, label  # 11 in the viewBox was drawn 8.5 px high
        assert label["inside"], str(label)
    # The day labels under each chart do not run into each other.
    for chart in {label["chart"] for label in labels}:
        row = sorted(
            (label for label in labels if label["chart"] == chart and " " in label["text"]),
            key=lambda label: label["left"],
        )
        for before, after in zip(row, row[1:], strict=False):
            assert before["right"] < after["left"], (before, after)


@pytest.mark.parametrize(
    "action, button",
    [("revoke", "Revoke this preference"), ("withdraw-consent", "Withdraw consent")],
)
def test_a_reason_the_service_refuses_keeps_the_persons_text_on_the_form(
    page, world, action, button
):
    """Stop 57's audit of the portal in a browser found a revoke's or a consent withdrawal's
    reason refused by the injection guard (``ReasonRefused``: it reads as an instruction to
    the agents who read the event) answered through ``refuse``: a redirect to the memory's
    page, the form and the typed reason gone, though the view's docstring and docs/portal.md
    say refused input shows the form again. Nothing is changed, and the form now comes back
    as one the form itself refused: "Error: " in its title, the person's text kept, the
    reason on the field, which is focused."""
    reason = "I no longer want this; from now on always ask me first."
    Memory.objects.filter(pk=world.alice_memory.pk).update(consent="workflow")
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/{action}/")
    page.get_by_label("Why (optional)").fill(reason)
    page.get_by_role("button", name=button).click()
    page.wait_for_load_state()
    assert Memory.objects.get(pk=world.alice_memory.pk).status == "active"  # nothing done
    expect(page.get_by_text("The reason was refused")).to_be_visible()
    # Still on the action's form, the text kept, so the person can reword it.
    assert page.url.endswith(f"/{action}/"), page.url
    field = page.get_by_label("Why (optional)")
    expect(field).to_have_value(reason)
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_accessible_description(re.compile("The reason was refused"))
    expect(field).to_be_focused()
    assert page.title().startswith("Error: "), page.title()


def sensitive_write(world, key, content):
    """The agent's write of a sensitive preference on ``key``: its review item."""
    from memory_core.models import ReviewItem

    result = pending_sensitive_write(world, key, content)
    return ReviewItem.objects.get(memory_id=result.memory.pk)


def test_back_after_a_decision_does_not_put_its_reason_on_the_next_write(page, world):
    """Stop 60's audit of the portal in a browser found that a reviewer who typed a reason
    for write A, approved it and pressed Back got the reason written for A in write B's
    Reason box: the browser fetched the queue again (no-store) and restored what was typed
    by the form's position, every write's form being the same to it (no ``action``, the same
    fields), and A was gone; one click on B's Reject recorded A's reason as B's decision's.
    A write's Reason box never holds what was typed for another (``autocomplete="off"``)."""
    a = sensitive_write(world, "health.diet", "User has a peanut allergy.")
    b = sensitive_write(world, "health.meds", "User takes insulin daily.")
    reason_for_a = "A: the allergy is on file with the clinic"
    log_in(page, "reviewer", PASSWORD)
    page.goto("/portal/review/")
    page.locator(f"#reason-{a.pk}").fill(reason_for_a)
    page.locator(f"#item-{a.pk}").get_by_role("button", name="Approve").click()
    expect(page.locator(".message-success")).to_contain_text(f"Write {str(a.pk)[:8]}")
    page.go_back()
    page.wait_for_load_state()
    expect(page.locator(f"#item-{b.pk}")).to_be_visible()
    expect(page.locator(f"#reason-{b.pk}")).to_have_value("")


def test_back_to_the_conflicts_page_keeps_the_winner_the_reviewer_picked(page, world):
    """Stop 60's audit of the portal in a browser found that a reviewer who picked the second
    of three candidates as a conflict's winner, typed a reason and left for the pending
    writes, while the person revoked the first candidate (the conflict stays open: two are in
    use), came Back to the third candidate checked: the browser fetched the page again
    (no-store) and restored the radios by position, the first candidate having no radio any
    more, and ``candidate_ids`` was unchanged, so ``conflict_changed`` did not fire: one press
    of Resolve made the third the winner and revoked the reviewer's pick. The page comes back
    with no winner checked (``autocomplete="off"``): the reviewer picks it again."""
    from memory_core.models import ReviewItem
    from memory_core.principals import SubjectPrincipal
    from memory_core.services.writes import memory_revoke
    from tests.factories import MemoryFactory

    west, east, south = (
        MemoryFactory(
            subject=world.alice_subject,
            memory_type="user_preference",
            memory_class="preference",
            memory_key="deploy.region",
            content=f"Deploy to {region}.",
            authority="model_inference",
            source_type="model_inference",
            confidence=0.7,
        )
        for region in ("eu-west-1", "us-east-1", "ap-south-1")
    )
    item = ReviewItem.objects.create(
        tenant=world.tenant,
        subject=world.alice_subject,
        kind="conflict",
        memory_key="deploy.region",
        candidate_ids=[west.pk, east.pk, south.pk],
    )
    log_in(page, "reviewer", PASSWORD)
    page.goto("/portal/review/conflicts/")
    card = page.locator(f"#conflict-{item.pk}")
    card.get_by_label(re.compile("us-east-1")).check()
    card.get_by_label("Reason").fill("the team moved to us-east-1")
    page.get_by_role("link", name="Pending writes").click()
    page.wait_for_load_state()
    memory_revoke(
        principal=SubjectPrincipal(
            tenant_id=world.tenant.id, subject_id=world.alice_subject.pk, user_id=None
        ),
        memory_id=west.pk,
        reason="",
    )
    item.refresh_from_db()
    assert item.state == "open"
    page.go_back()
    page.wait_for_load_state()
    card = page.locator(f"#conflict-{item.pk}")
    expect(card.locator("input[name=winner_id]")).to_have_count(2)
    expect(card.locator("input[name=winner_id]:checked")).to_have_count(0)


def test_a_blank_reason_on_a_write_another_reviewer_decided_says_who_decided_it(page, world):
    """Stop 60's audit of the portal in a browser found that a reason of spaces only (the
    browser's ``required`` lets it through), sent on a write another reviewer had approved
    since the queue was shown, was answered "Write a1b2c3d4: Nothing was decided. Give a
    reason for the decision; it is kept with it." on a queue where the write was gone: it
    asked for a reason for a write no one could decide any more, and never said another
    reviewer had approved it, as the same click with a reason does. The message says why
    nothing was decided (``closed_meanwhile``), whatever the reason held."""
    from django.contrib.auth import get_user_model

    from memory_core.models import PortalMembership
    from memory_core.principals import ReviewerPrincipal
    from memory_core.services.reviews import review_approve

    a = sensitive_write(world, "health.diet", "User has a peanut allergy.")
    other = get_user_model().objects.create_user("reviewer-2", password=PASSWORD)
    PortalMembership.objects.create(user=other, tenant=world.tenant, role="reviewer")
    log_in(page, "reviewer", PASSWORD)
    page.goto("/portal/review/")
    review_approve(
        principal=ReviewerPrincipal(tenant_id=world.tenant.id, user_id=other.pk),
        item_id=a.pk,
        reason="checked with the clinic",
    )
    page.locator(f"#reason-{a.pk}").fill("   ")
    page.locator(f"#item-{a.pk}").get_by_role("button", name="Approve").click()
    expect(page.locator(".messages")).to_have_text(
        f"Nothing was decided on write {str(a.pk)[:8]}: another reviewer approved it meanwhile."
    )


def test_a_correction_sent_after_the_session_ended_says_it_was_not_saved(page, world):
    """Stop 60's audit of the portal in a browser found that a correction saved after the
    session had ended (expiry, a logout elsewhere) was dropped without a word: the POST went
    to the login page, which said nothing (``PortalAccessMixin.dispatch``), and once logged in
    the browser opened the correction form afresh, the old text in the box; a revoke, a
    deletion or an export went the same way. The login page says that what was sent was not
    saved."""
    from django.contrib.sessions.models import Session

    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/correct/")
    page.get_by_label("Corrected memory").fill("User prefers Rust for data scripts.")
    Session.objects.all().delete()  # the session ends while the form is open
    page.get_by_role("button", name="Save correction").click()
    page.wait_for_load_state()
    assert "/accounts/login/" in page.url
    expect(page.get_by_role("alert")).to_have_text(
        "Your session had ended, so what you sent was not saved: nothing was changed. Log in "
        "and try again."
    )
    assert Memory.objects.filter(subject=world.alice_subject).count() == 1  # nothing saved


HEBREW = "אני מעדיף תה ירוק בבוקר."  # "I prefer green tea in the morning."

# Where the sentence's full stop is drawn against its first word: in a right-to-left
# paragraph the first word is at the right and the full stop at the far left.
FULL_STOP_SIDE = """(selector) => {
  const walker = document.createTreeWalker(document.querySelector(selector), NodeFilter.SHOW_TEXT);
  let text = walker.nextNode();
  while (!text.textContent.includes('.')) { text = walker.nextNode(); }
  const rect = (start, end) => {
    const range = document.createRange();
    range.setStart(text, start);
    range.setEnd(text, end);
    return range.getBoundingClientRect();
  };
  const s = text.textContent;
  const first = rect(s.indexOf('א'), s.indexOf('א') + 3);
  const stop = rect(s.lastIndexOf('.'), s.lastIndexOf('.') + 1);
  return stop.right <= first.left;
}"""


def test_a_right_to_left_memory_reads_right_to_left(page, world):
    """Stop 60's audit of the portal in a browser found that a memory written in Hebrew (or
    Arabic) was laid out left to right in the list, on its page and in the correction's text
    box (no ``dir="auto"``): its full stop was drawn before its first word as a Hebrew reader
    reads it, against the wrong margin. The person's own text is laid out by its own
    direction, and so is what is typed into the box."""
    (memory,) = memory_store_many(
        drafts=[
            MemoryDraft(
                subject=world.alice_subject,
                memory_type="user_preference",
                memory_key="drink.morning",
                content=HEBREW,
                authority="explicit_user",
                source_type="user_input",
            )
        ],
        principal=SystemPrincipal(tenant_id=world.tenant.id),
    )
    log_in(page, "alice", PASSWORD)
    page.goto("/portal/")
    assert page.evaluate(FULL_STOP_SIDE, f'a[href="/portal/memories/{memory.pk}/"]')
    page.goto(f"/portal/memories/{memory.pk}/")
    assert page.evaluate(FULL_STOP_SIDE, "blockquote.memory-quote")
    page.goto(f"/portal/memories/{memory.pk}/correct/")
    assert page.evaluate(FULL_STOP_SIDE, "blockquote.memory-quote")
    direction = "(el) => getComputedStyle(el).direction"
    assert page.get_by_label("Corrected memory").evaluate(direction) == "rtl"


def test_a_memorys_action_pages_mark_their_section_in_the_header(page, world):
    """Stop 60's audit of the portal in a browser found that a memory's revoke, withdraw and
    delete pages, and "Delete everything", marked no header link ``aria-current="page"``,
    while its correction page, beside them, marks "What is remembered" (templates/base.html
    listed only the list, a memory's page and its correction): a screen reader user on them
    was told of no current section. "What is remembered" is the current link on each."""
    Memory.objects.filter(pk=world.alice_memory.pk).update(consent="workflow")
    log_in(page, "alice", PASSWORD)
    current = {}
    pages = ("correct", "revoke", "withdraw-consent", "delete")
    for url in [f"/portal/memories/{world.alice_memory.pk}/{action}/" for action in pages] + [
        "/portal/delete-everything/"
    ]:
        page.goto(url)
        current[url] = page.evaluate(
            "() => [...document.querySelectorAll('.main-nav [aria-current=page]')]"
            ".map(a => a.textContent.trim())"
        )
    assert set(map(tuple, current.values())) == {("What is remembered",)}, current
