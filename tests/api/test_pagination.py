"""The memory list's cursor pages (``?pagination=cursor``, ``?cursor=``) beside its offset pages:
every row once and in order, ties, inserts between pages, filters, bad tokens, other tenants."""

import base64
import json
import uuid
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core import signing
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from api.pagination import cursor_decode, cursor_encode
from memory_core.models import Memory, MemoryClass, MemoryType
from memory_core.selectors.memories import ListPosition, memory_list, memory_list_page
from tests.factories import MemoryFactory, SubjectFactory, pending_write_on

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"
T0 = timezone.now().replace(microsecond=0) - timedelta(days=1)
# Seconds before T0 of each row: three rows share T0 and two share T0 - 2 s (ties broken by id).
AGES = [0, 0, 0, 1, 2, 2, 3, 5, 8]


def newest_first(ids) -> list[str]:
    """Return ``ids`` in the list's order: created_at, then id, both descending."""
    rows = Memory.objects.filter(pk__in=ids).values_list("created_at", "id")
    return [str(pk) for _, pk in sorted(rows, reverse=True)]


@pytest.fixture
def rows(subject):
    return [
        str(MemoryFactory(subject=subject, created_at=T0 - timedelta(seconds=age)).pk)
        for age in AGES
    ]


def get(client, url=URL, **params):
    response = client.get(url, params)
    assert response.status_code == 200, response.json()
    return response.json()


def walk(client, page, link="next") -> list[list[str]]:
    """Follow ``link`` from ``page`` to its end; return every page's ids, in order read."""
    pages = [[row["id"] for row in page["results"]]]
    while page[link]:
        page = get(client, page[link])
        pages.append([row["id"] for row in page["results"]])
    return pages


def cursor_of(link: str) -> str:
    return parse_qs(urlsplit(link).query)["cursor"][0]


def test_the_first_page_has_links_and_no_count(api_client, rows):
    page = get(api_client, pagination="cursor", limit=4)
    assert set(page) == {"next", "previous", "results"}
    assert [row["id"] for row in page["results"]] == newest_first(rows)[:4]
    assert page["previous"] is None
    query = parse_qs(urlsplit(page["next"]).query)
    assert query["limit"] == ["4"] and "pagination" not in query and "offset" not in query


def test_next_pages_give_every_row_once_in_order_and_previous_goes_back(api_client, rows):
    first = get(api_client, pagination="cursor", limit=2)
    pages = walk(api_client, first)
    assert [pk for page in pages for pk in page] == newest_first(rows)
    assert [len(page) for page in pages] == [2, 2, 2, 2, 1]  # ties split across pages
    # From the last page, previous links walk back over the same pages.
    last = get(api_client, URL, cursor=cursor_of(get_last_link(api_client, first)), limit=2)
    assert walk(api_client, last, link="previous") == pages[::-1]


def test_a_backward_page_emptied_since_links_back_to_the_older_rows(api_client, rows):
    """Every row of the page a previous link leads to was revoked under status=active: the
    page answered both links null, and the rows it came from were out of reach (stop 47's
    audit). Its next link leads back to them."""
    order = newest_first(rows)
    first = get(api_client, pagination="cursor", limit=2, status="active")
    second = get(api_client, first["next"])
    assert [row["id"] for row in second["results"]] == order[2:4]
    Memory.objects.filter(pk__in=order[:2]).update(status="revoked")
    emptied = get(api_client, second["previous"])
    assert (emptied["results"], emptied["previous"]) == ([], None)
    assert emptied["next"] is not None
    back = walk(api_client, get(api_client, emptied["next"]))
    assert [pk for page in back for pk in page] == order[2:]


def test_a_forward_page_emptied_since_links_back_to_the_newer_rows(api_client, rows):
    """The mirror of the test above: every row a next link leads to was revoked under
    status=active. The page answered both links null (stop 54's audit of reads); its previous
    link leads back to the rows it came from."""
    order = newest_first(rows)
    first = get(api_client, pagination="cursor", limit=2, status="active")
    Memory.objects.filter(pk__in=order[2:]).update(status="revoked")
    emptied = get(api_client, first["next"])
    assert (emptied["results"], emptied["next"]) == ([], None)
    assert emptied["previous"] is not None
    back = get(api_client, emptied["previous"])
    assert [row["id"] for row in back["results"]] == order[:2]


def get_last_link(client, page) -> str:
    """Return the link that led to the last page."""
    link = None
    while page["next"]:
        link = page["next"]
        page = get(client, link)
    return link


def test_ties_on_created_at_are_ordered_by_id(api_client, subject):
    ids = [str(MemoryFactory(subject=subject, created_at=T0).pk) for _ in range(5)]
    pages = walk(api_client, get(api_client, pagination="cursor", limit=1))
    assert [pk for page in pages for pk in page] == sorted(ids, reverse=True)


def test_rows_written_between_pages_neither_repeat_nor_push_rows_out(api_client, subject, rows):
    first = get(api_client, pagination="cursor", limit=3)
    newest = MemoryFactory(subject=subject)  # now: newer than every row already listed
    rest = walk(api_client, get(api_client, first["next"]))
    seen = [row["id"] for row in first["results"]] + [pk for page in rest for pk in page]
    assert seen == newest_first(rows)
    # Offset pages, for contrast, show the third row again on page two.
    second = get(api_client, limit=3, offset=3)["results"]
    assert second[0]["id"] == first["results"][2]["id"]
    # The new row is there for a client that starts again.
    assert get(api_client, pagination="cursor")["results"][0]["id"] == str(newest.pk)


def test_rows_deleted_or_corrected_between_pages_are_still_listed_once(api_client, rows):
    """A deleted row stays as a tombstone and a corrected one as its superseded version, so a
    walk begun before either still lists every row it began with, once and in order (stop
    51's audit of lists under change)."""
    order = newest_first(rows)
    first = get(api_client, pagination="cursor", limit=2)
    assert api_client.delete(f"{URL}/{order[3]}").status_code == 202
    source = {"type": "user_input", "conversation_id": "c", "message_id": "m"}
    corrected = api_client.post(
        f"{URL}/{order[5]}/supersede",
        {"content": "User prefers bullet lists.", "source": source},
        format="json",
    )
    assert corrected.status_code == 201, corrected.content
    rest = walk(api_client, get(api_client, first["next"]))
    assert [row["id"] for row in first["results"]] + [pk for page in rest for pk in page] == order


def test_filters_apply_to_every_cursor_page(api_client, tenant, subject, rows):
    other = SubjectFactory(tenant=tenant, external_id="user-77")
    episodes = [
        str(
            MemoryFactory(
                subject=other, memory_type=MemoryType.EPISODE, memory_class=MemoryClass.EPISODIC
            ).pk
        )
        for _ in range(3)
    ]
    first = get(api_client, pagination="cursor", limit=2, subject="user-77", type="episode")
    assert "subject=user-77" in first["next"] and "type=episode" in first["next"]
    pages = walk(api_client, first)
    assert [pk for page in pages for pk in page] == newest_first(episodes)
    by_subject = walk(api_client, get(api_client, pagination="cursor", subject=subject.external_id))
    assert by_subject == [newest_first(rows)]


def signed(payload) -> str:
    return signing.dumps(payload, salt="memledger.api.memory-list-cursor")


GOOD = {"v": 1, "t": T0.isoformat(), "i": str(uuid.uuid4()), "d": "o"}
BAD_TOKENS = {
    "garbage": "not-a-cursor",
    "empty": "",
    "too long": "a" * 600,
    "unsigned json": base64.urlsafe_b64encode(json.dumps(GOOD).encode()).decode(),
    "another salt": signing.dumps(GOOD, salt="another"),
    "not a dict": signed([1, 2]),
    "another version": signed({**GOOD, "v": 2}),
    "no direction": signed({**GOOD, "d": "sideways"}),
    "a number for the time": signed({**GOOD, "t": 1700000000}),
    "not a time": signed({**GOOD, "t": "yesterday"}),
    "a naive time": signed({**GOOD, "t": "2026-01-01T00:00:00"}),
    "not a uuid": signed({**GOOD, "i": "42"}),
    "no id": signed({key: value for key, value in GOOD.items() if key != "i"}),
}


@pytest.mark.parametrize("name", sorted(BAD_TOKENS))
def test_a_bad_cursor_is_a_400_with_one_code(api_client, rows, name):
    response = api_client.get(URL, {"cursor": BAD_TOKENS[name]})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    [detail] = error["details"]["cursor"]
    assert detail["code"] == "invalid_cursor" and "pagination=cursor" in detail["message"]


def test_an_altered_cursor_is_refused(api_client, rows):
    token = cursor_of(get(api_client, pagination="cursor", limit=2)["next"])
    signature = token.rsplit(":", 1)[1]
    other = cursor_encode(ListPosition(created_at=T0, pk=uuid.uuid4()), older=True)
    last_changed = token[:-1] + ("A" if token[-1] != "A" else "B")
    signature_moved = other.rsplit(":", 1)[0] + ":" + signature
    for altered in (last_changed, signature_moved):
        response = api_client.get(URL, {"cursor": altered})
        assert response.json()["error"]["details"]["cursor"][0]["code"] == "invalid_cursor"


def test_a_cursor_round_trips_its_position():
    position = ListPosition(created_at=T0.replace(microsecond=123456), pk=uuid.uuid4())
    assert cursor_decode(cursor_encode(position, older=False)) == (position, False)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pagination": "cursor", "offset": 0}, "offset"),
        ({"cursor": "CURSOR", "offset": 10}, "offset"),
        ({"cursor": "CURSOR", "pagination": "offset"}, "pagination"),
    ],
)
def test_cursor_and_offset_do_not_mix(api_client, rows, params, field):
    token = cursor_of(get(api_client, pagination="cursor", limit=2)["next"])
    params = {k: token if v == "CURSOR" else v for k, v in params.items()}
    response = api_client.get(URL, params)
    assert response.status_code == 400
    assert response.json()["error"]["details"][field][0]["code"] == "offset_with_cursor"


@pytest.mark.parametrize(
    ("query", "other"),
    [
        ({"pagination": "cursor", "offset": "5", "limit": "500"}, "limit"),
        ({"pagination": "cursor", "offset": "5", "type": "preference"}, "type"),
    ],
)
def test_offset_with_cursor_is_named_with_the_query_strings_other_mistakes(
    api_client, query, other
):
    """The mix was checked in ``validate``, which DRF runs only once every field passed: a
    query with another mistake heard of ``offset_with_cursor`` in a second round (stop 54's
    audit of reads; docs/api.md: one answer names every mistake it can find)."""
    response = api_client.get(URL, query)
    assert response.status_code == 400
    details = response.json()["error"]["details"]
    assert other in details
    assert [e["code"] for e in details["offset"]] == ["offset_with_cursor"]


def test_another_tenants_cursor_shows_only_the_callers_rows(
    api_client, other_api_client, other_tenant, rows
):
    # The other tenant's rows interleave with ours in time.
    theirs = SubjectFactory(tenant=other_tenant)
    for age in (0.5, 1.5, 2.5, 4):
        MemoryFactory(subject=theirs, created_at=T0 - timedelta(seconds=age), content="CANARY")
    their_next = get(other_api_client, pagination="cursor", limit=2)["next"]
    position, _ = cursor_decode(cursor_of(their_next))
    page = get(api_client, cursor=cursor_of(their_next), limit=100)
    ours_older = [
        pk
        for pk in newest_first(rows)
        if Memory.objects.get(pk=pk).created_at < position.created_at
    ]
    assert [row["id"] for row in page["results"]] == ours_older
    assert "CANARY" not in json.dumps(page)


@pytest.mark.parametrize("limit", [0, 101, -1, "x"])
def test_limit_bounds_hold_in_cursor_mode(api_client, rows, limit):
    response = api_client.get(URL, {"pagination": "cursor", "limit": limit})
    assert response.status_code == 400
    assert "limit" in response.json()["error"]["details"]


def test_limit_defaults_to_50_and_reaches_100(api_client, subject):
    for age in range(120):
        MemoryFactory(subject=subject, created_at=T0 - timedelta(seconds=age))
    assert len(get(api_client, pagination="cursor")["results"]) == 50
    page = get(api_client, pagination="cursor", limit=100)
    assert len(page["results"]) == 100
    assert len(get(api_client, page["next"])["results"]) == 20


def test_offset_pages_are_unchanged(api_client, rows):
    for params in ({}, {"pagination": "offset"}):
        page = get(api_client, limit=4, **params)
        assert set(page) == {"count", "next", "previous", "results"} and page["count"] == 9
        assert "offset=4" in page["next"]


def test_an_empty_list_has_no_links(api_client):
    assert get(api_client, pagination="cursor") == {"next": None, "previous": None, "results": []}


# As in test_memories.test_query_budgets: +3 for row-level security and the test transaction.
RLS = 3


def test_a_cursor_page_costs_one_query_less_than_an_offset_page(
    api_client, rows, django_assert_max_num_queries
):
    next_link = get(api_client, pagination="cursor", limit=2)["next"]
    with django_assert_max_num_queries(3 + RLS):  # key, page (no count)
        assert api_client.get(next_link).status_code == 200


@pytest.mark.parametrize("older", [True, False])
def test_the_bound_is_one_row_comparison(agent_principal, older):
    """The bound stays the row comparison PostgreSQL reads as a range of migration 0015's
    index (Django's fallback, an OR of comparisons, filters every row before the page)."""
    position = ListPosition(created_at=T0, pk=uuid.uuid4())
    with CaptureQueriesContext(connection) as captured:
        memory_list_page(
            memory_list(principal=agent_principal), position=position, older=older, size=5
        )
    [query] = captured.captured_queries
    columns = '("memory_core_memory"."created_at", "memory_core_memory"."id")'
    assert f"{columns} {'<' if older else '>'} (" in query["sql"]


def test_the_schema_documents_both_pagings(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    listed = schema["paths"]["/api/v1/memories"]["get"]
    names = {param["name"] for param in listed["parameters"]}
    assert {"pagination", "cursor", "limit", "offset"} <= names
    page = schema["components"]["schemas"]["PaginatedMemoryList"]
    assert page["required"] == ["results"] and "count" in page["properties"]
    reviews = schema["paths"]["/api/v1/review/items"]["get"]
    assert "cursor" not in {param["name"] for param in reviews["parameters"]}


# --- stop 50's audit ---------------------------------------------------------------------


def test_past_the_deepest_offset_the_next_link_turns_into_a_cursor_page(
    api_client, rows, monkeypatch
):
    """``offset`` stops at 1,000,000 (``MAX_LIST_OFFSET``), but the paginator linked to
    ``offset + limit`` past it: a client following ``next`` over a list of more than a million
    rows was answered 400 half way. There the link is the cursor page of the older rows (the
    bound is lowered to 2 here instead of writing a million rows)."""
    monkeypatch.setattr("api.pagination.MAX_LIST_OFFSET", 2)
    order = newest_first(rows)
    page = api_client.get(URL, {"limit": 2, "offset": 2}).json()
    assert [row["id"] for row in page["results"]] == order[2:4]
    link = page["next"]
    query = parse_qs(urlsplit(link).query)
    assert "offset" not in query and query["limit"] == ["2"] and "cursor" in query
    followed = api_client.get(link)
    assert followed.status_code == 200, followed.json()
    assert [row["id"] for row in followed.json()["results"]] == order[4:6]


def test_past_the_deepest_offset_a_list_without_cursor_pages_ends_its_links(
    reviewer, subject, monkeypatch
):
    """The review queue has offset pages only: its ``next`` past the bound is null, not a
    link it refuses (``count`` still says how many items there are)."""
    for index in range(3):
        head = MemoryFactory(subject=subject, memory_key=f"k{index}")
        pending_write_on(head, f"User moved to city number {index}.")
    monkeypatch.setattr("api.pagination.MAX_LIST_OFFSET", 1)
    page = reviewer.get("/api/v1/review/items", {"limit": 1, "offset": 1})
    assert page.status_code == 200, page.content
    assert page.json()["count"] == 3 and page.json()["next"] is None


@pytest.mark.parametrize("token", ["\x00", "abc\x00def"])
def test_a_cursor_holding_a_nul_is_invalid_cursor(api_client, rows, token):
    """``null_characters_not_allowed`` was answered, which a client checking for the one code
    of a bad cursor did not take for "start the walk again"."""
    response = api_client.get(URL, {"cursor": token})
    assert response.status_code == 400, response.content
    [detail] = response.json()["error"]["details"]["cursor"]
    assert detail["code"] == "invalid_cursor", detail
