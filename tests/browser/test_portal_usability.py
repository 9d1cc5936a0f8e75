"""The portal as its users meet it: a phone's width, the keyboard, a screen reader's view of
forms and their errors, a page left open while the memory changed.

Headless Chromium against a live server, with the same world as the acceptance scenarios.
"""

import pytest
from playwright.sync_api import expect

from memory_core.principals import SystemPrincipal
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.browser.conftest import log_in
from tests.browser.test_portal_flows import PASSWORD, World

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
    context = browser.new_context(viewport={"width": 375, "height": 800}, base_url=live_server.url)
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


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
