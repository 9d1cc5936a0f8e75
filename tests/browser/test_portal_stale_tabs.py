"""Portal pages in a real browser, a correction or a confirmation sent from a tab opened before
the memory changed in another tab (corrected, revoked, deleted there): the answer said what
the memory was when the POST began, not what it is now (stop 55's audit of the portal)."""

import pytest
from playwright.sync_api import expect

from memory_core.models import Memory
from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.browser.conftest import log_in, new_page
from tests.browser.test_portal_flows import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(live_server):
    return World()


def currently_remembered(page) -> str:
    """What the correction page calls currently remembered: its label and quote."""
    return page.evaluate(
        """() => {
          const label = [...document.querySelectorAll('main p')]
            .find(p => p.textContent.startsWith('Currently remembered'));
          if (!label) { return ''; }
          const quote = label.nextElementSibling;
          return label.textContent + ' ' + (quote ? quote.textContent : '');
        }"""
    )


def test_a_correction_refused_after_another_tab_corrected_it_does_not_show_the_old_version(
    browser, live_server, world
):
    """Refused because another tab had saved version 2, the form came back under "Currently
    remembered (version 1):" with version 1's text, read as the POST began (stop 55's audit
    of the portal): it links the newest version instead."""
    with new_page(browser, live_server, width=1280, height=900) as page:
        log_in(page, "alice", PASSWORD)
        page.goto(f"/portal/memories/{world.alice_memory.pk}/correct/")
        other = page.context.new_page()
        other.goto(f"/portal/memories/{world.alice_memory.pk}/correct/")
        other.get_by_label("Corrected memory").fill("User prefers Go for data scripts.")
        other.get_by_role("button", name="Save correction").click()
        expect(other.get_by_text("Saved version 2")).to_be_visible()
        head = Memory.objects.get(supersedes=world.alice_memory)

        page.get_by_label("Corrected memory").fill("User prefers Rust for data scripts.")
        page.get_by_role("button", name="Save correction").click()
        expect(page.get_by_text("This memory changed after you opened this page")).to_be_visible()
        shown = currently_remembered(page)
        # Version 1 is superseded: the page must not present it as what is remembered now.
        assert "Python" not in shown, shown
        assert "(version 1)" not in shown, shown
        assert head.status == "active"
        page.get_by_role("link", name="version 2").click()
        expect(page).to_have_url(f"{live_server.url}/portal/memories/{head.pk}/")


def test_a_correction_refused_after_another_tab_deleted_it_does_not_say_it_is_remembered(
    browser, live_server, world
):
    """Refused because another tab had deleted the memory, the form came back with
    "Currently remembered (version 1):" over an empty quote, and advised correcting that
    version if it was still wrong (stop 55's audit of the portal)."""
    with new_page(browser, live_server, width=1280, height=900) as page:
        log_in(page, "alice", PASSWORD)
        page.goto(f"/portal/memories/{world.alice_memory.pk}/correct/")
        other = page.context.new_page()
        other.goto(f"/portal/memories/{world.alice_memory.pk}/delete/")
        other.get_by_label("I understand this cannot be undone.").check()
        other.get_by_role("button", name="Delete this memory").click()
        expect(other.get_by_text("Deletion started")).to_be_visible()

        page.get_by_label("Corrected memory").fill("User prefers Rust for data scripts.")
        page.get_by_role("button", name="Save correction").click()
        expect(page.get_by_text("so your correction was not saved")).to_be_visible()
        main = page.locator("main").inner_text()
        # Nothing is remembered any more: no "Currently remembered" over an empty quote, and
        # no advice to correct a version that no longer exists.
        assert currently_remembered(page) == "", currently_remembered(page)
        assert "correct that version if it is still wrong" not in main, main
        assert "This memory is deleted" in main, main
        expect(page.get_by_label("Corrected memory")).to_have_value(
            "User prefers Rust for data scripts."
        )
        assert Memory.objects.get(pk=world.alice_memory.pk).status == "deleted"


def inferred(world):
    (memory,) = memory_store_many(
        drafts=[
            MemoryDraft(
                subject=world.alice_subject,
                memory_type="user_preference",
                memory_key="editor.theme",
                content="User likes a dark editor theme.",
                authority="model_inference",
                source_type="model_inference",
                confidence=0.7,
            )
        ],
        principal=SystemPrincipal(tenant_id=world.tenant.id),
    )
    return memory


def revoke_there(other, memory):
    other.goto(f"/portal/memories/{memory.pk}/revoke/")
    other.get_by_role("button", name="Revoke this preference").click()
    expect(other.get_by_text("Revoked. Agents will no longer use it.")).to_be_visible()


def delete_there(other, memory):
    other.goto(f"/portal/memories/{memory.pk}/delete/")
    other.get_by_label("I understand this cannot be undone.").check()
    other.get_by_role("button", name="Delete this memory").click()
    expect(other.get_by_text("Deletion started")).to_be_visible()


@pytest.mark.parametrize(
    ("elsewhere", "state"),
    [(revoke_there, "revoked"), (delete_there, "deleted")],
    ids=["revoked", "deleted"],
)
def test_this_is_right_after_another_tab_retired_the_memory_says_what_happened(
    browser, live_server, world, elsewhere, state
):
    """ "This is right" pressed after another tab revoked or deleted the memory was answered
    "this version is no longer the one in use, as it was confirmed or corrected meanwhile.
    The version in use is linked at the top of this page": nothing was confirmed or
    corrected, and no version was in use to link to (stop 55's audit of the portal)."""
    memory = inferred(world)
    with new_page(browser, live_server, width=1280, height=900) as page:
        log_in(page, "alice", PASSWORD)
        page.goto(f"/portal/memories/{memory.pk}/")
        confirm = page.get_by_role("button", name="This is right")
        expect(confirm).to_be_visible()
        elsewhere(page.context.new_page(), memory)

        confirm.click()
        page.wait_for_load_state()
        said = page.locator(".messages").inner_text()
        assert Memory.objects.get(pk=memory.pk).status == state
        assert not Memory.objects.filter(supersedes=memory).exists()  # nothing confirmed
        # It was neither confirmed nor corrected, and no version of it is in use to link to.
        assert "confirmed or corrected meanwhile" not in said, said
        assert "The version in use is linked" not in said, said
        assert f"This memory is {state}" in said, said


def test_a_revoke_after_another_tab_corrected_the_preference_points_at_the_version_in_use(
    browser, live_server, world
):
    """Stop 60's audit of the portal in a browser found that Revoke, pressed in a tab opened
    before another tab saved version 2 of the preference, was answered "Nothing was changed.
    This memory is superseded, so agents do not use it and there is nothing to revoke."
    (``MemoryRevokeView.unavailable``): the person, who meant to stop agents using the
    preference, was told agents did not use it, while version 2 was given to every agent, and
    the message, which takes the focus, never said so. Nothing is revoked, and the message
    says version 2 is the one in use, so that she revokes that one."""
    memory = world.alice_memory
    with new_page(browser, live_server, width=1280, height=900) as page:
        log_in(page, "alice", PASSWORD)
        page.goto(f"/portal/memories/{memory.pk}/revoke/")
        other = page.context.new_page()
        other.goto(f"/portal/memories/{memory.pk}/correct/")
        other.get_by_label("Corrected memory").fill("User prefers Go for data scripts.")
        other.get_by_role("button", name="Save correction").click()
        expect(other.get_by_text("Saved version 2")).to_be_visible()
        head = Memory.objects.get(supersedes=memory)

        page.get_by_role("button", name="Revoke this preference").click()
        message = page.locator(".messages")
        expect(message).to_contain_text("Nothing was changed")
        head.refresh_from_db()
        assert head.status == "active"  # version 2 is still given to agents
        text = message.inner_text()
        assert "replaced by version 2, which agents use now" in text, text
        assert "agents do not use it" not in text, text


def test_back_to_a_delete_page_whose_memory_changed_does_not_keep_the_tick(
    browser, live_server, world
):
    """Stop 60's review found that its ``autocomplete="off"`` was on the reviewer's forms
    only, not the end user's delete confirmation (``templates/portal/_confirm_form.html``).
    A person who
    ticked "delete" on version 1 (then in use: "its history goes with it"), left by Cancel,
    and came Back after version 1 was corrected elsewhere (now superseded: only it goes, the
    newer version stays) gets the page re-fetched (no-store) with the new text and
    ``shown_status=superseded``, but Chromium restores the tick: one press deletes under a
    confirmation given for another state, which is exactly what ``changed_since_shown`` and
    the form's "asks for the tick again" rule exist to prevent (the server cannot tell,
    ``shown_status`` being the new one). The tick is never restored by Back now."""
    memory = world.alice_memory
    with new_page(browser, live_server, width=1280, height=900) as page:
        log_in(page, "alice", PASSWORD)
        page.goto(f"/portal/memories/{memory.pk}/delete/")
        page.locator("#id_confirm").check()
        page.locator("main").get_by_role("link", name="Cancel").click()
        page.wait_for_load_state()
        other = page.context.new_page()
        other.goto(f"/portal/memories/{memory.pk}/correct/")
        other.get_by_label("Corrected memory").fill("User prefers Go for data scripts.")
        other.get_by_role("button", name="Save correction").click()
        expect(other.get_by_text("Saved version 2")).to_be_visible()
        assert Memory.objects.get(pk=memory.pk).status == "superseded"
        page.go_back()
        page.wait_for_load_state()
        expect(page.locator("#newer-versions")).to_be_visible()  # the page as it is now
        restored = page.locator("#id_confirm").is_checked()
        if restored:  # what one press does with the tick given for version 1 in use
            page.get_by_role("button", name="Delete this memory").click()
            page.wait_for_load_state()
        assert not restored, (
            "the tick given for version 1 in use came back on its page as superseded; one "
            f"press deleted it: status {Memory.objects.get(pk=memory.pk).status}"
        )
