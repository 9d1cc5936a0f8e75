"""What a keyboard or screen-reader user needs from the portal's markup: a named tab stop for
every table that scrolls sideways, a message area that portal/messages.js can focus, errors
tied to their fields, and names that tell repeated controls apart.

Wide tables (the deletions list, a memory's events, the health page's data tables, the
reviewer's lists) scroll inside a ``.table-wrap`` at a phone's width. Chromium makes such a
scroller a tab stop by itself, with no name: a screen reader said "group" or nothing at all.
"""

import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse
from django.utils import timezone

from memory_core.models import AdmissionDecision, DeletionOperation
from tests.portal.test_review import pending_write

pytestmark = pytest.mark.django_db

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text() for c in self.children]
        return " ".join(" ".join(parts).split())

    def walk(self):
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.walk()

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


class Tree(HTMLParser):
    """Just enough of a DOM to follow ``aria-labelledby`` and ask what holds a table."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#document", [], None)
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Node(tag, attrs, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)

    def by_id(self, element_id: str) -> Node | None:
        return next((n for n in self.root.walk() if n.attrs.get("id") == element_id), None)

    def name_of(self, node: Node) -> str:
        """The accessible name ``aria-labelledby`` or ``aria-label`` gives ``node``."""
        if node.attrs.get("aria-labelledby"):
            labels = [self.by_id(i) for i in node.attrs["aria-labelledby"].split()]
            return " ".join(label.text() for label in labels if label is not None).strip()
        return (node.attrs.get("aria-label") or "").strip()


def scroll_regions(html: str) -> tuple[Tree, list[Node]]:
    tree = Tree(html)
    tables = [n for n in tree.root.walk() if n.tag == "table"]
    assert tables, "the page shows no table to check"
    wraps = []
    for table in tables:
        wrap = next((a for a in table.ancestors() if "table-wrap" in a.classes), None)
        assert wrap is not None, "a table that can be wider than a phone scrolls in .table-wrap"
        wraps.append(wrap)
    return tree, wraps


def assert_named_tab_stops(html: str) -> list[str]:
    tree, wraps = scroll_regions(html)
    names = []
    for wrap in wraps:
        assert wrap.attrs.get("role") == "region", wrap.attrs
        assert wrap.attrs.get("tabindex") == "0", wrap.attrs
        name = tree.name_of(wrap)
        assert name, wrap.attrs
        names.append(name)
    # Two regions of one page named alike (a scroller and the section around it, say) could
    # not be told apart in a screen reader's list of regions.
    regions = [
        tree.name_of(n)
        for n in tree.root.walk()
        if n.attrs.get("role") == "region"
        or (n.tag == "section" and {"aria-label", "aria-labelledby"} & n.attrs.keys())
    ]
    assert len(set(regions)) == len(regions), regions
    return names


@pytest.fixture
def decided(alice_subject):
    item = pending_write(alice_subject, "Alice takes insulin daily.")
    item.state = "approved"
    item.resolved_at = timezone.now()
    item.reason = "Confirmed with Alice"
    item.save(update_fields=["state", "resolved_at", "reason"])
    return item


@pytest.fixture
def rejections(tenant):
    for code in ("injection.prompt", "authority.not_allowed"):
        AdmissionDecision.objects.create(tenant=tenant, outcome="rejected", rule_codes=[code])


def test_the_end_users_scrolling_tables_are_named_tab_stops(alice_client, alice_memory):
    deletions = alice_client.get(reverse("portal:deletions")).content.decode()
    assert assert_named_tab_stops(deletions) == ["Deletion history"]
    detail = alice_client.get(reverse("portal:memory", args=[alice_memory.pk])).content.decode()
    assert assert_named_tab_stops(detail) == ["Table of events"]


def test_the_reviewers_scrolling_tables_are_named_tab_stops(
    reviewer_client, decided, rejections, evaluation
):
    queue = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert assert_named_tab_stops(queue) == ["Table of recent decisions"]
    rejected = reviewer_client.get(reverse("portal:review:rejected")).content.decode()
    assert sorted(assert_named_tab_stops(rejected)) == [
        "Writes rejected by authority.not_allowed",
        "Writes rejected by injection.prompt",
    ]
    health = reviewer_client.get(reverse("portal:review:health")).content.decode()
    names = assert_named_tab_stops(health)
    assert "Figures of the latest evaluation" in names
    # Each chart's data table, named for its chart (six charts).
    assert len([n for n in names if n.startswith("Data table of ")]) >= 6, names


def test_the_message_area_is_focusable_and_its_script_loads_only_with_a_message(
    reviewer_client, alice_subject
):
    item = pending_write(alice_subject, "Alice takes insulin daily.")
    before = reviewer_client.get(reverse("portal:review:queue")).content.decode()
    assert "portal/messages.js" not in before
    response = reviewer_client.post(
        reverse("portal:review:approve", args=[item.pk]), {"reason": "Asked Alice"}, follow=True
    )
    tree = Tree(response.content.decode())
    (area,) = [n for n in tree.root.walk() if "data-announce-on-load" in n.attrs]
    assert area.attrs.get("tabindex") == "-1"
    assert "approved" in area.text()
    scripts = [n.attrs.get("src", "") for n in tree.root.walk() if n.tag == "script"]
    assert any(src.endswith("portal/messages.js") for src in scripts), scripts


def title_of(tree: Tree) -> str:
    (title,) = [n for n in tree.root.walk() if n.tag == "title"]
    return title.text()


def test_a_failed_login_marks_both_fields_and_ties_the_error_to_them(client, alice):
    fresh = Tree(client.get(reverse("login")).content.decode())
    assert title_of(fresh) == "Log in · memledger"
    for name in ("username", "password"):
        field = fresh.by_id(f"id_{name}")
        assert "aria-invalid" not in field.attrs and "aria-describedby" not in field.attrs

    response = client.post(reverse("login"), {"username": "alice", "password": "nope"})
    tree = Tree(response.content.decode())
    # The tab's title is the first thing a screen reader reads of the page that came back.
    assert title_of(tree) == "Error: Log in · memledger"
    for name in ("username", "password"):
        field = tree.by_id(f"id_{name}")
        assert field.attrs.get("aria-invalid") == "true", field.attrs
        error = tree.by_id(field.attrs.get("aria-describedby", ""))
        assert error is not None and "didn't match" in error.text(), field.attrs
    # Focus lands on Username, which now says what went wrong.
    assert "autofocus" in tree.by_id("id_username").attrs


def test_a_blank_decision_reason_comes_back_on_that_writes_field(reviewer_client, alice_subject):
    # Spaces pass the browser's ``required``; the form strips them and refuses the reason.
    first = pending_write(alice_subject, "Alice takes insulin daily.")
    second = pending_write(alice_subject, "Alice sees a cardiologist.")
    response = reviewer_client.post(
        reverse("portal:review:reject", args=[second.pk]), {"reason": "   "}
    )
    assert response.status_code == 200
    tree = Tree(response.content.decode())
    assert title_of(tree) == "Error: Pending writes · memledger"
    field = tree.by_id(f"reason-{second.pk}")
    assert field.attrs.get("aria-invalid") == "true" and "autofocus" in field.attrs
    described = [tree.by_id(i).text() for i in field.attrs["aria-describedby"].split()]
    assert described == [
        "Nothing was decided. Give a reason for the decision; it is kept with it.",
        "Alice sees a cardiologist.",
    ]
    other = tree.by_id(f"reason-{first.pk}")
    assert "aria-invalid" not in other.attrs and "autofocus" not in other.attrs
    second.refresh_from_db()
    assert second.state == "open"


def test_each_dead_letters_retry_is_named_for_its_deletion(reviewer_client, alice_subject):
    operations = [
        DeletionOperation.objects.create(
            tenant=alice_subject.tenant,
            subject=alice_subject,
            target="subject",
            status="failed",
            attempts=8,
            dead_lettered_at=timezone.now(),
        )
        for _ in range(2)
    ]
    tree = Tree(reviewer_client.get(reverse("portal:review:deletions")).content.decode())
    for operation in operations:
        action = reverse("portal:review:deletion-retry", args=[operation.pk])
        (form,) = [n for n in tree.root.walk() if n.attrs.get("action") == action]
        (button,) = [n for n in form.walk() if n.tag == "button"]
        # As the message after it says: "Deletion 1a2b3c4d retried: ...".
        assert button.text() == f"Retry deletion {str(operation.pk)[:8]}"


def test_each_chart_is_named_by_its_title_and_described_by_its_desc(reviewer_client):
    # Labelled by both, its name repeated the title inside a long sentence, and it had no
    # description of its own.
    tree = Tree(reviewer_client.get(reverse("portal:review:health")).content.decode())
    charts = [n for n in tree.root.walk() if n.tag == "svg" and n.attrs.get("role") == "img"]
    assert len(charts) >= 6
    for svg in charts:
        (title,) = [tree.by_id(i) for i in svg.attrs["aria-labelledby"].split()]
        assert title.tag == "h2"
        (desc,) = [tree.by_id(i) for i in svg.attrs["aria-describedby"].split()]
        assert desc.tag == "desc" and desc.parent is svg
        assert desc.text().startswith(f"{title.text()} per day")


MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
WHEN = re.compile(rf"\b(ago|just now)\b|\b\d{{1,2}} ({MONTHS})\b")


def untimed(html: str) -> list[str]:
    """Return the texts that say when ("3 hours ago", "2 Dec 2026") outside a
    ``<time datetime>``, which gives the moment itself to a browser or a screen reader."""
    tree = Tree(html)
    found = []
    for node in tree.root.walk():
        chain = [node, *node.ancestors()]
        if any(n.tag in ("svg", "title", "script") for n in chain):
            continue  # the page's <title>; a chart's drawn labels (its data table is checked)
        timed = any(n.tag == "time" and n.attrs.get("datetime") for n in chain)
        for child in node.children:
            if isinstance(child, str) and WHEN.search(child) and not timed:
                found.append(" ".join(child.split()))
    return found


def test_every_time_a_page_shows_is_a_time_element(alice_client, reviewer, alice_subject):
    from django.test import Client

    from tests.factories import MemoryFactory
    from tests.portal.test_review import conflict

    reviewer_client = Client()
    reviewer_client.force_login(reviewer)

    MemoryFactory(subject=alice_subject, content="Alice is waiting.", status="pending_approval")
    MemoryFactory(subject=alice_subject, content="Alice revoked this.", status="revoked")
    conflict(alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.")
    home = alice_client.get(reverse("portal:home")).content.decode()
    assert "Alice is waiting." in home and "Alice revoked this." in home
    assert untimed(home) == []
    conflicts = reviewer_client.get(reverse("portal:review:conflicts")).content.decode()
    assert "Deploy to us-east-1." in conflicts
    assert untimed(conflicts) == []
    health = reviewer_client.get(reverse("portal:review:health")).content.decode()
    assert untimed(health) == []


def test_a_page_shown_again_with_an_error_says_so_first_in_its_title(
    alice_client, alice_memory, reviewer, alice_subject
):
    # The title is what a screen reader reads first of a new page: it read as the page did
    # before the form was sent, as if all had gone well.
    from django.test import Client

    from tests.portal.test_review import conflict

    def title(response) -> str:
        assert response.status_code == 200
        return title_of(Tree(response.content.decode()))

    memory = alice_memory.pk
    assert title(alice_client.get(reverse("portal:memory-correct", args=[memory]))) == (
        "Correct a memory · memledger"
    )
    correct = alice_client.post(reverse("portal:memory-correct", args=[memory]), {"content": ""})
    assert title(correct) == "Error: Correct a memory · memledger"
    delete = alice_client.post(reverse("portal:memory-delete", args=[memory]), {})
    assert title(delete) == "Error: Delete a memory · memledger"
    everything = alice_client.post(reverse("portal:delete-everything"), {})
    assert title(everything) == "Error: Delete everything · memledger"
    search = alice_client.get(reverse("portal:home"), {"memory_type": "balance"})
    assert title(search) == "Error: What is remembered about you · memledger"

    reviewer_client = Client()
    reviewer_client.force_login(reviewer)
    item = conflict(alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.")
    resolve = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "reason": "eu is right"},
    )
    assert title(resolve) == "Error: Open conflicts · memledger"


def test_a_later_page_of_a_list_says_which_in_its_title(alice_client, alice_subject):
    from memory_core.selectors.portal import PAGE_SIZE
    from tests.factories import insert_memories

    insert_memories(alice_subject, PAGE_SIZE + 5)
    home = reverse("portal:home")
    first = Tree(alice_client.get(home).content.decode())
    assert title_of(first) == "What is remembered about you · memledger"
    second = Tree(alice_client.get(home, {"page": 2}).content.decode())
    assert title_of(second) == "What is remembered about you (page 2 of 2) · memledger"


def test_the_last_breadcrumb_is_the_current_page(alice_client, alice_memory):
    operation = DeletionOperation.objects.create(
        tenant=alice_memory.tenant, subject=alice_memory.subject, target="memory", status="running"
    )
    pk = alice_memory.pk
    for url in (
        reverse("portal:memory", args=[pk]),
        reverse("portal:memory-correct", args=[pk]),
        reverse("portal:memory-revoke", args=[pk]),
        reverse("portal:memory-delete", args=[pk]),
        reverse("portal:deletion", args=[operation.pk]),
    ):
        tree = Tree(alice_client.get(url).content.decode())
        (crumbs,) = [n for n in tree.root.walk() if n.attrs.get("aria-label") == "Breadcrumb"]
        shown = [n for n in crumbs.children if isinstance(n, Node) and "aria-hidden" not in n.attrs]
        assert [n.attrs.get("aria-current") for n in shown] == [None] * (len(shown) - 1) + [
            "page"
        ], url


def test_the_health_pages_current_window_is_the_current_page(reviewer_client):
    tree = Tree(reviewer_client.get(reverse("portal:review:health"), {"days": 7}).content.decode())
    (nav,) = [n for n in tree.root.walk() if n.attrs.get("aria-label") == "Time window"]
    current = {n.text(): n.attrs.get("aria-current") for n in nav.walk() if n.tag == "a"}
    assert current == {"7 days": "page", "14 days": None, "30 days": None}


def caption_of(table: Node) -> str:
    captions = [n for n in table.children if isinstance(n, Node) and n.tag == "caption"]
    return captions[0].text() if captions else ""


def test_the_deletion_history_and_rejected_tables_have_captions_and_rules_headings(
    alice_client, reviewer, alice_subject, rejections
):
    from django.test import Client

    DeletionOperation.objects.create(
        tenant=alice_subject.tenant, subject=alice_subject, target="memory", status="running"
    )
    tree = Tree(alice_client.get(reverse("portal:deletions")).content.decode())
    (table,) = [n for n in tree.root.walk() if n.tag == "table"]
    assert caption_of(table) == "Every deletion of memories about you, newest first"

    reviewer_client = Client()
    reviewer_client.force_login(reviewer)
    tree = Tree(reviewer_client.get(reverse("portal:review:rejected")).content.decode())
    groups = [n for n in tree.root.walk() if "rule-group" in n.classes]
    headings = [n for n in tree.root.walk() if n.tag == "h2"]
    assert len(groups) == len(headings) == 2
    for group, heading in zip(groups, headings, strict=True):
        (code,) = [n.text() for n in group.walk() if "rule" in n.classes]
        assert heading.text() == f"{code}: 1 rejected write"
        # Each heading comes just before its group.
        siblings = [n for n in group.parent.children if isinstance(n, Node)]
        assert siblings[siblings.index(group) - 1] is heading
        (table,) = [n for n in group.walk() if n.tag == "table"]
        assert caption_of(table) == f"The latest writes rejected by {code}, newest first"


def test_a_refused_revoke_reason_comes_back_on_its_field_with_the_text_kept(
    alice_client, alice_memory
):
    # It was a message on the memory's page: the reason typed was lost, tied to no field.
    reason = "x" * 501
    response = alice_client.post(
        reverse("portal:memory-revoke", args=[alice_memory.pk]), {"reason": reason}
    )
    assert response.status_code == 200
    tree = Tree(response.content.decode())
    assert title_of(tree) == "Error: Revoke this preference · memledger"
    field = tree.by_id("id_reason")
    assert field.attrs.get("value") == reason
    assert field.attrs.get("aria-invalid") == "true" and "autofocus" in field.attrs
    (error,) = [tree.by_id(i) for i in field.attrs["aria-describedby"].split()]
    assert error.text() == (
        "Nothing was changed. Ensure this value has at most 500 characters (it has 501)."
    )
    alice_memory.refresh_from_db()
    assert alice_memory.status == "active"


def test_a_list_shown_again_at_its_forms_url_is_still_the_current_page(
    reviewer_client, alice_subject
):
    # The queue or the conflicts page shown again with a form's error is at the form's own
    # URL (.../approve/, .../resolve/): the header's link to it was no longer the current one.
    from tests.portal.test_review import conflict

    def current(response) -> list[str]:
        tree = Tree(response.content.decode())
        (nav,) = [n for n in tree.root.walk() if n.attrs.get("aria-label") == "Main"]
        return [n.text() for n in nav.walk() if n.attrs.get("aria-current") == "page"]

    write = pending_write(alice_subject, "Alice takes insulin daily.")
    for name in ("portal:review:approve", "portal:review:reject"):
        refused = reviewer_client.post(reverse(name, args=[write.pk]), {"reason": " "})
        assert current(refused) == ["Pending writes"]
    item = conflict(alice_subject, "deploy.region", "Deploy to eu-west-1.", "Deploy to us-east-1.")
    refused = reviewer_client.post(
        reverse("portal:review:resolve", args=[item.pk]),
        {"outcome": "choose_winner", "reason": "eu is right"},
    )
    assert current(refused) == ["Conflicts"]
