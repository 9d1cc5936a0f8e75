"""The header at a phone's width: every link of the main navigation is on the screen.

The links used to sit in one row that scrolled sideways: at 375 px "Export" (and, for a
reviewer, "Rejected writes", "Dead letters" and "Health") lay past the screen's edge with
nothing to show they were there.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import log_in, new_page
from tests.browser.test_portal_flows import PASSWORD, World

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LINKS = {
    "alice": ["What is remembered", "Deletions", "Export"],
    "reviewer": ["Pending writes", "Conflicts", "Rejected writes", "Dead letters", "Health"],
}


@pytest.mark.parametrize("login", ["alice", "reviewer"])
def test_every_main_link_is_on_a_375_px_screen(browser, live_server, login):
    World()
    with new_page(browser, live_server, width=375, height=800) as phone:
        log_in(phone, login, PASSWORD)
        nav = phone.get_by_role("navigation", name="Main")
        width = phone.evaluate("document.documentElement.clientWidth")
        for name in LINKS[login]:
            link = nav.get_by_role("link", name=name, exact=True)
            expect(link).to_be_visible()
            box = link.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (name, box, width)
        scroll_width = phone.evaluate("document.documentElement.scrollWidth")
        assert scroll_width <= width
