"""The portal's acceptance scenarios, in headless Chromium against a live server.

Each test seeds real rows (embedded with the real model), drives the pages like a person
would, then checks the outcome through the domain (the database, or the retrieval pipeline).
"""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from memory_core.models import DeletionOperation, Memory, PortalMembership, ReviewItem
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from memory_core.services.policy import policy_ensure
from tests.browser.conftest import log_in
from tests.factories import AgentFactory, SubjectFactory, TenantFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "browser-test-password"


class World:
    """A tenant with two end users, a reviewer and an agent, and a few memories."""

    def __init__(self):
        self.tenant = TenantFactory(slug="acme")
        policy_ensure(tenant=self.tenant)
        self.alice_subject = SubjectFactory(tenant=self.tenant, external_id="user-42")
        self.bob_subject = SubjectFactory(tenant=self.tenant, external_id="user-77")
        self.agent = AgentFactory(tenant=self.tenant, name="coder")
        users = get_user_model().objects
        for username, role, subject in (
            ("alice", "end_user", self.alice_subject),
            ("bob", "end_user", self.bob_subject),
            ("reviewer", "reviewer", None),
        ):
            user = users.create_user(username, password=PASSWORD)
            PortalMembership.objects.create(
                user=user, tenant=self.tenant, role=role, subject=subject
            )
        system = SystemPrincipal(tenant_id=self.tenant.id)
        self.alice_memory, self.bob_memory = memory_store_many(
            drafts=[
                MemoryDraft(
                    subject=self.alice_subject,
                    memory_type="user_preference",
                    memory_key="language.data_scripts",
                    content="User prefers Python for data scripts.",
                    authority="explicit_user",
                    source_type="user_input",
                    source_conversation_id="conv-1",
                    source_message_id="msg-4",
                ),
                MemoryDraft(
                    subject=self.bob_subject,
                    memory_type="user_preference",
                    memory_key="style.answers",
                    content="Answer iOS networking questions with long tutorials.",
                    authority="explicit_user",
                    source_type="user_input",
                ),
            ],
            principal=system,
        )

    @property
    def agent_principal(self):
        return AgentPrincipal.from_agent(self.agent)


@pytest.fixture
def world(live_server):
    return World()


def pending_sensitive_write(
    world,
    key="health.diet",
    content="User has a peanut allergy; suggest nut-free recipes.",
):
    """The agent's write of a sensitive preference on ``key`` (a health one by default): it
    waits for a reviewer."""
    from memory_core.services.writes import memory_write

    result = memory_write(
        principal=world.agent_principal,
        data={
            "subject": "user-42",
            "memory_type": "user_preference",
            "memory_key": key,
            "content": content,
            "scope": "global",
            "source": {"type": "user_input", "conversation_id": "conv-9", "message_id": "m-3"},
            "authority": "explicit_user",
            "consent": "explicit",
            "sensitivity": "sensitive",
        },
    )
    assert result.decision == "pending_approval", result.rule_codes
    return result


def retrieved_ids(world, query, **request):
    from memory_core.retrieval.pipeline import retrieve
    from memory_core.retrieval.types import RetrievalRequest

    result = retrieve(
        principal=world.agent_principal,
        request=RetrievalRequest(query=query, user_id="user-42", **request),
    )
    return result, {item.id for item in result.items}


def test_editing_the_url_to_another_subjects_memory_is_404(page, world):
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_role("heading", name="What is remembered about you")).to_be_visible()
    expect(page.get_by_text("User prefers Python for data scripts.")).to_be_visible()
    expect(page.get_by_text("long tutorials")).to_have_count(0)
    response = page.goto(f"/portal/memories/{world.bob_memory.pk}/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.get_by_text("long tutorials")).to_have_count(0)
    response = page.goto(f"/portal/memories/{world.alice_memory.pk}/")
    assert response.status == 200


def test_user_corrects_a_memory_and_sees_both_versions(page, world):
    log_in(page, "alice", PASSWORD)
    page.get_by_role("link", name="User prefers Python for data scripts.").click()
    page.get_by_role("link", name="Correct").click()
    page.get_by_label("Corrected memory").fill("User prefers Rust for data scripts.")
    page.get_by_label("Why (optional)").fill("switched languages")
    page.get_by_role("button", name="Save correction").click()
    expect(page.get_by_text("Saved version 2")).to_be_visible()
    history = page.locator("ol.chain")
    expect(history.locator("li")).to_have_count(2)
    expect(history.locator("li").nth(0)).to_contain_text("User prefers Python for data scripts.")
    expect(history.locator("li").nth(0)).to_contain_text("Superseded")
    expect(history.locator("li").nth(1)).to_contain_text("User prefers Rust for data scripts.")
    expect(history.locator("li").nth(1)).to_contain_text("Active")
    new = Memory.objects.get(supersedes=world.alice_memory)
    assert new.authority == "explicit_user" and new.version == 2
    assert page.url.endswith(f"/portal/memories/{new.pk}/")


def test_user_deletes_a_memory_and_watches_it_complete(page, world, celery_worker):
    log_in(page, "alice", PASSWORD)
    page.goto(f"/portal/memories/{world.alice_memory.pk}/")
    page.get_by_role("link", name="Delete").click()
    page.get_by_label("I understand this cannot be undone.").check()
    page.get_by_role("button", name="Delete this memory").click()
    expect(page.get_by_text("Deletion started")).to_be_visible()
    status = page.locator("#op-status")
    expect(status).to_have_text("Completed", timeout=60_000)
    # The page shows the final state in place (tests/browser/test_portal_deletion_progress.py).
    expect(page.get_by_role("heading", name="Deleted and verified")).to_be_visible()
    expect(page.locator("#op-steps li.step-verified")).to_have_count(
        page.locator("#op-steps li").count()
    )
    operation = DeletionOperation.objects.get(memory_ids__contains=[world.alice_memory.pk])
    assert operation.status == "completed"
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Deletions").click()
    expect(page.get_by_role("link", name=str(operation.pk))).to_be_visible()


def test_reviewer_approves_a_pending_write_and_it_becomes_retrievable(page, world):
    result = pending_sensitive_write(world)
    pending_id = str(result.memory.pk)
    _, before = retrieved_ids(world, "Suggest a recipe for dinner.", intent="load_preferences")
    assert pending_id not in before

    log_in(page, "reviewer", PASSWORD)
    expect(page.get_by_role("heading", name="Pending sensitive writes")).to_be_visible()
    item = page.locator(f"#item-{result.review_item.pk}")
    expect(item).to_contain_text("peanut allergy")
    item.get_by_label("Reason").fill("Confirmed with the user by phone")
    item.get_by_role("button", name="Approve").click()
    expect(page.get_by_text(re.compile("approved: it is now active"))).to_be_visible()
    expect(page.locator(f"#item-{result.review_item.pk}")).to_have_count(0)

    assert ReviewItem.objects.get(pk=result.review_item.pk).state == "approved"
    _, after = retrieved_ids(world, "Suggest a recipe for dinner.", intent="load_preferences")
    assert pending_id in after


def deploy_region_conflict(world):
    """Two inferred decisions on the high-impact key ``deploy.region``: a retrieval about it
    gets a clarification, and a conflict opens for the reviewer. Return both memories."""
    return memory_store_many(
        drafts=[
            MemoryDraft(
                subject=world.alice_subject,
                memory_type="previous_decision",
                memory_key="deploy.region",
                scope_kind="project",
                scope_ref="lunest",
                content=f"Deploy the Lunest API to {region}.",
                authority="model_inference",
                source_type="model_inference",
                confidence=confidence,
            )
            for region, confidence in (("eu-west-1", 0.7), ("us-east-1", 0.72))
        ],
        principal=SystemPrincipal(tenant_id=world.tenant.id),
    )


def deploy_region_conflict_opened(world):
    """``deploy_region_conflict``, then the retrieval about it that opens the conflict for
    the reviewer: both memories and the open item."""
    west, east = deploy_region_conflict(world)
    retrieved_ids(
        world,
        "Deploy the Lunest API to production.",
        intent="apply_project_rules",
        project_id="lunest",
    )
    item = ReviewItem.objects.get(kind="conflict", memory_key="deploy.region", state="open")
    return west, east, item


def test_reviewer_resolves_a_conflict_and_retrieval_returns_the_winner(page, world):
    west, east = deploy_region_conflict(world)
    query = dict(intent="apply_project_rules", project_id="lunest")
    first, ids = retrieved_ids(world, "Deploy the Lunest API to production.", **query)
    assert [c.memory_key for c in first.clarifications] == ["deploy.region"]
    assert not ids & {str(west.pk), str(east.pk)}
    item = ReviewItem.objects.get(kind="conflict", memory_key="deploy.region", state="open")

    log_in(page, "reviewer", PASSWORD)
    page.get_by_role("link", name="Conflicts").click()
    card = page.locator(f"#conflict-{item.pk}")
    card.get_by_label(re.compile("us-east-1")).check()
    card.get_by_label("Choose the winner").check()
    card.get_by_label("Reason").fill("The team moved to us-east-1 in March")
    card.get_by_role("button", name="Resolve").click()
    expect(page.get_by_text("Conflict resolved: choose the winner.")).to_be_visible()
    expect(page.locator(f"#conflict-{item.pk}")).to_have_count(0)

    second, ids = retrieved_ids(world, "Deploy the Lunest API to production.", **query)
    assert not second.clarifications
    assert str(east.pk) in ids and str(west.pk) not in ids
