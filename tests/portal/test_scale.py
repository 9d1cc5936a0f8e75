"""The portal for a subject and a tenant at a real size: every long list comes a page at a
time, and no page's queries grow with what the subject or the tenant holds."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from memory_core.models import DeletionOperation, DeletionStep, Memory, MemoryEvent, ReviewItem
from memory_core.selectors.portal import PAGE_SIZE
from tests.factories import MemoryFactory, insert_memories

pytestmark = pytest.mark.django_db

CARD = 'class="memory card"'


def queries(client, url) -> tuple[int, str]:
    """Return how many queries a GET of ``url`` made, and the page."""
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured), response.content.decode()


def test_home_page_shows_one_page_of_a_big_subject(alice_client, alice_subject, bob_subject):
    insert_memories(alice_subject, 2 * PAGE_SIZE + 30)
    insert_memories(bob_subject, 10)
    home = reverse("portal:home")

    body = alice_client.get(home).content.decode()
    assert body.count(CARD) == PAGE_SIZE
    assert f"{2 * PAGE_SIZE + 30} active memories" in body
    assert f"this page shows 1–{PAGE_SIZE}" in body
    assert 'class="count">130<' in body  # the class's count is of every page
    assert "Page 1 of 3" in body and 'rel="next" href="?page=2"' in body
    # Newest first: row 1 of insert_memories is the newest.
    assert "User prefers option 1." in body and f"option {PAGE_SIZE + 1}." not in body

    last = alice_client.get(home, {"page": 3}).content.decode()
    assert last.count(CARD) == 30
    assert f"User prefers option {2 * PAGE_SIZE + 30}." in last
    assert 'rel="prev" href="?page=2"' in last and 'rel="next"' not in last
    # Past the last page is the last page; a page that is not a number is the first.
    assert alice_client.get(home, {"page": 99}).content.decode().count(CARD) == 30
    assert "Page 1 of 3" in alice_client.get(home, {"page": "x"}).content.decode()


def test_pages_keep_the_filters(alice_client, alice_subject):
    insert_memories(alice_subject, PAGE_SIZE + 5, content="Likes tea, note {n}.")
    insert_memories(alice_subject, 20, content="Prefers coffee {n}.")
    body = alice_client.get(reverse("portal:home"), {"q": "tea"}).content.decode()
    assert f"{PAGE_SIZE + 5} active memories match your filters" in body
    assert 'rel="next" href="?q=tea&amp;page=2"' in body
    second = alice_client.get(reverse("portal:home"), {"q": "tea", "page": 2}).content.decode()
    assert second.count(CARD) == 5 and "Prefers coffee" not in second


def test_home_page_queries_do_not_grow_with_the_subject(alice_client, alice_subject):
    insert_memories(alice_subject, 5)
    MemoryFactory(subject=alice_subject, status="pending_approval")
    MemoryFactory(subject=alice_subject, status="revoked")
    few, _ = queries(alice_client, reverse("portal:home"))
    insert_memories(alice_subject, 3 * PAGE_SIZE, age_seconds=10_000)
    many, body = queries(alice_client, reverse("portal:home"))
    assert body.count(CARD) == PAGE_SIZE
    assert many == few


def test_waiting_and_unused_lists_are_bounded_and_counted(alice_client, alice_subject):
    insert_memories(
        alice_subject, PAGE_SIZE + 7, status="pending_approval", sensitivity="sensitive"
    )
    insert_memories(alice_subject, PAGE_SIZE + 3, status="revoked", content="Gone {n}.")
    body = alice_client.get(reverse("portal:home")).content.decode()
    pending = body.split('id="pending-title"')[1].split("</section>")[0]
    assert f'class="count">{PAGE_SIZE + 7}<' in pending
    assert pending.count("<li>") == PAGE_SIZE
    assert f"Showing the latest {PAGE_SIZE} of {PAGE_SIZE + 7}." in pending
    unused = body.split('id="not-in-use-title"')[1].split("</section>")[0]
    assert f'class="count">{PAGE_SIZE + 3}<' in unused
    assert unused.count("<li>") == PAGE_SIZE


def chain(subject, length: int, key: str) -> list[Memory]:
    """Return a supersession chain of ``length`` versions, oldest first, with two events each."""
    links = []
    for version in range(1, length + 1):
        links.append(
            MemoryFactory(
                subject=subject,
                memory_key=key,
                content=f"Indent with {version} spaces.",
                version=version,
                supersedes=links[-1] if links else None,
                status="active" if version == length else "superseded",
            )
        )
    for link in links:
        for action in ("created", "admitted"):
            MemoryEvent.objects.create(
                tenant_id=subject.tenant_id, memory_id=link.id, action=action, actor_type="user"
            )
    return links


def test_memory_page_of_a_long_chain_makes_as_many_queries_as_a_short_one(
    alice_client, alice_subject
):
    short = chain(alice_subject, 2, "style.quotes")
    few, _ = queries(alice_client, reverse("portal:memory", args=[short[0].pk]))
    links = chain(alice_subject, 40, "style.indent")
    many, body = queries(alice_client, reverse("portal:memory", args=[links[10].pk]))
    assert many == few
    assert body.count('class="chain-link') == 40
    # Each event names its version (looked up once, not per event in the template).
    events = body.split('id="events-title"')[1]
    assert events.count("<td>v11</td>") == 2 and events.count("<td>v40</td>") == 2
    assert "a newer version exists" in body and "version 40" in body


def pending_items(subject, count: int) -> None:
    insert_memories(subject, count, status="pending_approval", sensitivity="sensitive")
    ReviewItem.objects.bulk_create(
        ReviewItem(
            tenant_id=subject.tenant_id,
            subject=subject,
            kind="sensitive_write",
            memory=memory,
            rule_codes=["sensitive.health"],
            created_at=memory.created_at,
        )
        for memory in Memory.objects.filter(subject=subject, status="pending_approval")
    )


def test_review_queue_shows_the_oldest_page_of_a_long_queue(
    reviewer_client, alice_subject, bob_subject
):
    pending_items(alice_subject, 3)
    few, _ = queries(reviewer_client, reverse("portal:review:queue"))
    pending_items(bob_subject, PAGE_SIZE + 12)
    many, body = queries(reviewer_client, reverse("portal:review:queue"))
    assert many == few
    assert body.count('class="card review-item"') == PAGE_SIZE
    assert f"{PAGE_SIZE + 15} writes waiting" in body and "Page 1 of 2" in body
    second = reviewer_client.get(reverse("portal:review:queue"), {"page": 2}).content.decode()
    assert second.count('class="card review-item"') == 15


def open_conflicts(subject, count: int, batch: str) -> None:
    """Open ``count`` conflicts of ``subject``, each between two memories of one key."""
    insert_memories(subject, 2 * count, memory_key=f"{batch}.{{n}}")
    rows = list(Memory.objects.filter(subject=subject, memory_key__startswith=f"{batch}."))
    ReviewItem.objects.bulk_create(
        ReviewItem(
            tenant_id=subject.tenant_id,
            subject=subject,
            kind="conflict",
            memory_key=f"{batch}.conflict.{i}",
            candidate_ids=[rows[2 * i].pk, rows[2 * i + 1].pk],
        )
        for i in range(count)
    )


def test_conflict_queue_is_paged(reviewer_client, alice_subject):
    open_conflicts(alice_subject, 2, "a")
    few, _ = queries(reviewer_client, reverse("portal:review:conflicts"))
    open_conflicts(alice_subject, PAGE_SIZE + 1, "b")
    many, body = queries(reviewer_client, reverse("portal:review:conflicts"))
    assert many == few
    assert body.count('class="card conflict"') == PAGE_SIZE
    assert f"{PAGE_SIZE + 3} conflicts" in body and "Page 1 of 2" in body
    second = reviewer_client.get(reverse("portal:review:conflicts"), {"page": 2}).content.decode()
    assert second.count('class="card conflict"') == 3


def test_deletions_page_is_paged_and_counts_ids_without_loading_them(alice_client, alice_subject):
    ids = [m.pk for m in MemoryFactory.create_batch(3, subject=alice_subject)]
    DeletionOperation.objects.bulk_create(
        DeletionOperation(
            tenant_id=alice_subject.tenant_id,
            subject=alice_subject,
            target="memory",
            memory_ids=ids,
            status="completed",
            completed_at=timezone.now(),
        )
        for _ in range(PAGE_SIZE + 4)
    )
    with CaptureQueriesContext(connection) as captured:
        body = alice_client.get(reverse("portal:deletions")).content.decode()
    assert body.count("3 memories") == PAGE_SIZE and "Page 1 of 2" in body
    listing = [q["sql"] for q in captured if 'FROM "memory_core_deletionoperation"' in q["sql"]]
    assert listing and not any(
        re.search(r'"memory_core_deletionoperation"\."memory_ids",', sql) for sql in listing
    )
    second = alice_client.get(reverse("portal:deletions"), {"page": 2}).content.decode()
    assert second.count("3 memories") == 4
    # A page of 50 made as many queries as one of 4: who asked read each row's subject.
    with CaptureQueriesContext(connection) as few:
        alice_client.get(reverse("portal:deletions"), {"page": 2})
    assert len(captured) == len(few)


def test_a_decision_on_a_later_page_comes_back_to_that_page(reviewer_client, alice_subject):
    pending_items(alice_subject, PAGE_SIZE + 5)
    second = reviewer_client.get(reverse("portal:review:queue"), {"page": 2}).content.decode()
    item = ReviewItem.objects.filter(kind="sensitive_write").order_by("-created_at", "-id")[0]
    approve = reverse("portal:review:approve", args=[item.pk])
    assert f'formaction="{approve}?page=2"' in second
    response = reviewer_client.post(f"{approve}?page=2", {"reason": "checked"})
    assert response.status_code == 302
    assert response["Location"] == reverse("portal:review:queue") + "?page=2"


def test_an_incomplete_resolution_on_a_later_page_shows_that_page(reviewer_client, alice_subject):
    open_conflicts(alice_subject, PAGE_SIZE + 2, "a")
    item = ReviewItem.objects.filter(kind="conflict").order_by("-created_at", "-id")[0]
    resolve = reverse("portal:review:resolve", args=[item.pk])
    second = reviewer_client.get(reverse("portal:review:conflicts"), {"page": 2}).content.decode()
    assert f'action="{resolve}?page=2"' in second
    body = reviewer_client.post(
        f"{resolve}?page=2", {"outcome": "choose_winner", "reason": "x"}
    ).content.decode()
    assert f'id="conflict-error-{item.pk}"' in body and "Page 2 of 2" in body
    conflicts = reverse("portal:review:conflicts")
    assert f'rel="prev" href="{conflicts}?page=1"' in body
    done = reviewer_client.post(f"{resolve}?page=2", {"outcome": "ask_user", "reason": "x"})
    assert done["Location"] == f"{conflicts}?page=2"


def running_deletion(subject, ids, *, target: str) -> DeletionOperation:
    """A running deletion of ``ids`` (memories of ``subject``) with three pending steps."""
    operation = DeletionOperation.objects.create(
        tenant_id=subject.tenant_id,
        subject=subject,
        target=target,
        memory_ids=ids,
        status="running",
    )
    DeletionStep.objects.bulk_create(
        DeletionStep(operation=operation, store=store, status="pending")
        for store in ("primary", "vectors", "exports")
    )
    return operation


def test_the_deletions_page_reads_no_steps(alice_client, alice_subject):
    """The page shows each operation's status and memory count, never its steps: it read
    every step of the page's 50 operations (ten each on a default install)."""
    ids = [m.pk for m in MemoryFactory.create_batch(2, subject=alice_subject)]

    def operations(count: int) -> None:
        for _ in range(count):
            running_deletion(alice_subject, ids, target="memory")

    operations(5)
    with CaptureQueriesContext(connection) as few:
        body = alice_client.get(reverse("portal:deletions")).content.decode()
    assert body.count("2 memories") == 5
    operations(PAGE_SIZE)
    with CaptureQueriesContext(connection) as many:
        body = alice_client.get(reverse("portal:deletions")).content.decode()
    assert body.count("2 memories") == PAGE_SIZE
    assert len(many) == len(few)
    assert not any("memory_core_deletionstep" in query["sql"] for query in many)


def test_a_deletions_progress_counts_its_ids_in_the_database_and_reads_its_steps_once(
    alice_client, alice_subject
):
    """The progress page, and its status polled every second, read the operation's every
    memory id (tens of thousands for a whole subject) to say how many it deletes."""
    ids = [m.pk for m in MemoryFactory.create_batch(3, subject=alice_subject)]
    operation = running_deletion(alice_subject, ids, target="memory_key")
    for name in ("portal:deletion", "portal:deletion-status"):
        with CaptureQueriesContext(connection) as captured:
            response = alice_client.get(reverse(name, args=[operation.pk]))
        assert "Deleting 3 memories" in response.content.decode(), name
        sql = [query["sql"] for query in captured]
        assert not any('"memory_core_deletionoperation"."memory_ids",' in q for q in sql), name
        assert sum('FROM "memory_core_deletionstep"' in q for q in sql) == 1, name


def dead_letters(subject, count: int) -> None:
    """``count`` dead-lettered deletions of ``subject``, each with a failed exports step."""
    operations = DeletionOperation.objects.bulk_create(
        DeletionOperation(
            tenant_id=subject.tenant_id,
            subject=subject,
            target="memory",
            status="failed",
            attempts=5,
            last_error="export volume read-only",
            dead_lettered_at=timezone.now(),
        )
        for _ in range(count)
    )
    DeletionStep.objects.bulk_create(
        DeletionStep(operation=operation, store="exports", status="failed", attempts=5)
        for operation in operations
    )


def test_the_dead_letters_page_is_paged(reviewer_client, alice_subject):
    """A broken store dead-letters every deletion that meets it: the page listed them all,
    each with its steps."""
    card = 'class="card" aria-labelledby="op-'
    dead_letters(alice_subject, 5)
    few, body = queries(reviewer_client, reverse("portal:review:deletions"))
    assert body.count(card) == 5 and "Page 1 of" not in body
    dead_letters(alice_subject, PAGE_SIZE)

    many, body = queries(reviewer_client, reverse("portal:review:deletions"))

    assert body.count(card) == PAGE_SIZE
    assert f"{PAGE_SIZE + 5} operations; this page shows the 1–{PAGE_SIZE} most recent" in body
    assert "Page 1 of 2" in body and 'rel="next" href="?page=2"' in body
    assert many == few
    _, second = queries(reviewer_client, reverse("portal:review:deletions") + "?page=2")
    assert second.count(card) == 5
    # A retry on the second page comes back to it.
    operation = DeletionOperation.objects.order_by("dead_lettered_at", "requested_at", "id")[0]
    retry = reverse("portal:review:deletion-retry", args=[operation.pk])
    assert f'action="{retry}?page=2"' in second
    response = reviewer_client.post(f"{retry}?page=2")
    assert response["Location"] == reverse("portal:review:deletions") + "?page=2"
