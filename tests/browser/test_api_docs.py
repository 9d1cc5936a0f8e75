"""The interactive API docs render from the service's own files, on a machine without the
internet (this one): Swagger UI was loaded from a CDN and the page stayed blank."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db]


def test_the_api_docs_render_their_operations_without_the_internet(page, live_server):
    outside = []
    page.on(
        "request",
        lambda request: (
            outside.append(request.url) if not request.url.startswith(live_server.url) else None
        ),
    )
    page.goto("/api/docs/")
    write = page.locator(".opblock-summary-path", has_text="/api/v1/memories").first
    expect(write).to_be_visible()
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("memledger API")
    assert outside == []
