"""The reviewer API over HTTP: only a reviewer's session, and the queue pages like every list."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from memory_core.models import PortalMembership
from tests.factories import SubjectFactory, write_body

pytestmark = pytest.mark.django_db

URL = "/api/v1/review/items"


@pytest.fixture
def pending(api_client):
    """Two sensitive writes waiting for a reviewer; return their review item ids."""
    ids = []
    for index in range(2):
        content = f"User is allergic to dust {index}."
        body = write_body(memory_key=f"health.{index}", content=content)
        response = api_client.post("/api/v1/memories", body, format="json")
        assert response.status_code == 202, response.json()
        ids.append(response.json()["review_item"])
    return ids


def test_a_page_of_the_queue_makes_as_many_queries_whatever_its_length(reviewer, pending):
    """Each item's memory names its subject: a query an item (58 for a page of 50)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for limit in (1, 2):
        with CaptureQueriesContext(connection) as captured:
            page = reviewer.get(URL, {"limit": limit})
        assert [item["memory"]["subject"] for item in page.json()["results"]] == ["user-1"] * limit
        counts.append(len(captured))
    assert counts[0] == counts[1]


def test_the_queue_pages_with_limit_and_offset_and_its_next_link_works(reviewer, pending):
    first = reviewer.get(URL, {"limit": 1})
    assert first.status_code == 200, first.json()
    page = first.json()
    assert page["count"] == 2 and [item["id"] for item in page["results"]] == pending[:1]
    assert "offset=1" in page["next"]
    second = reviewer.get(page["next"])
    assert second.status_code == 200, second.json()
    assert [item["id"] for item in second.json()["results"]] == pending[1:]
    assert second.json()["next"] is None
    filtered = reviewer.get(URL, {"state": "open", "kind": "sensitive_write", "offset": 1})
    assert [item["id"] for item in filtered.json()["results"]] == pending[1:]


@pytest.mark.parametrize(
    "query, field, code",
    [
        ({"limit": 0}, "limit", "min_value"),
        ({"limit": 101}, "limit", "max_value"),
        ({"offset": -1}, "offset", "min_value"),
        ({"limit": "abc"}, "limit", "invalid"),
        ({"page": 2}, "page", "unknown_field"),
    ],
)
def test_bad_paging_parameters_are_400(reviewer, query, field, code):
    response = reviewer.get(URL, query)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert [detail["code"] for detail in error["details"][field]] == [code]


def refusals(client, item_id) -> list[tuple[int, str]]:
    answers = [
        client.get(URL),
        client.get(f"{URL}/{item_id}"),
        client.post(f"{URL}/{item_id}/approve", {"reason": "ok"}, format="json"),
    ]
    return [(r.status_code, r.json()["error"]["code"]) for r in answers]


def test_without_a_reviewer_session_every_answer_is_403_forbidden(api_client, tenant, pending):
    forbidden = [(403, "forbidden")] * 3
    assert refusals(APIClient(), pending[0]) == forbidden  # no login at all
    assert refusals(api_client, pending[0]) == forbidden  # an agent's API key
    end_user = get_user_model().objects.create_user("end-user", password="pw-user-12345")
    PortalMembership.objects.create(
        user=end_user, tenant=tenant, role="end_user", subject=SubjectFactory(tenant=tenant)
    )
    client = APIClient()
    client.force_login(end_user)
    assert refusals(client, pending[0]) == forbidden  # a portal user who is no reviewer
    anonymous = APIClient().get(URL)
    assert "reviewer" in anonymous.json()["error"]["message"]
    assert "WWW-Authenticate" not in anonymous


def test_a_reviewer_post_without_csrf_token_is_403_forbidden(reviewer, pending):
    response = reviewer.post(f"{URL}/{pending[0]}/approve", {"reason": "ok"}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    assert "CSRF" in response.json()["error"]["message"]


def test_a_deleted_tenants_reviewer_reads_no_queue(reviewer, pending, tenant):
    """Until the identities step removes the login, the session still exists: it must act
    for nobody from the moment the tenant's deletion is requested."""
    from memory_core.deletion.services import tenant_deletion_request

    assert reviewer.get(URL).status_code == 200
    tenant_deletion_request(tenant_id=tenant.id)
    response = reviewer.get(URL)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_a_conflict_says_where_it_stands_and_a_sensitive_write_does_not(
    reviewer, api_client, pending
):
    def write(content, source_type):
        source = {"type": source_type, "conversation_id": "c", "message_id": content[:20]}
        body = write_body(memory_type="project_constraint", memory_key="backend.language",
                          scope="project:atlas", environment="Staging", content=content,
                          source=source)  # fmt: skip
        return api_client.post("/api/v1/memories", body, format="json").json()

    write("Atlas's backend is written in Python.", "user_input")
    conflict = write("Atlas's backend is written in Ruby.", "model_inference")
    item = reviewer.get(f"{URL}/{conflict['conflict_review_item']}").json()
    assert (item["kind"], item["scope"], item["environment"]) == (
        "conflict", "project:atlas", "staging",
    )  # fmt: skip
    sensitive = reviewer.get(f"{URL}/{pending[0]}").json()
    assert (sensitive["kind"], sensitive["scope"], sensitive["environment"]) == (
        "sensitive_write", "", "",
    )  # fmt: skip


def test_approving_a_conflict_says_where_conflicts_are_resolved(reviewer, api_client):
    """The answer said "resolve it with the conflict resolution", which names nothing a
    reviewer can find: conflicts are resolved on the portal's conflicts page, which the API
    names (the domain's message names the action only, memory_core knowing no portal page)."""
    writes = (("Atlas uses Go.", "user_input"), ("Atlas uses Zig.", "model_inference"))
    for content, source_type in writes:
        source = {"type": source_type, "conversation_id": "c", "message_id": content}
        body = write_body(memory_type="project_constraint", memory_key="atlas.lang",
                          scope="project:atlas", content=content, source=source)  # fmt: skip
        answer = api_client.post("/api/v1/memories", body, format="json").json()
    item_id = answer["conflict_review_item"]
    token = "a" * 32  # any well-formed token, sent as the cookie and the header
    reviewer.cookies["csrftoken"] = token
    for decision in ("approve", "reject"):
        url = f"{URL}/{item_id}/{decision}"
        response = reviewer.post(url, {"reason": "x"}, format="json", HTTP_X_CSRFTOKEN=token)
        assert response.status_code == 409, response.json()
        error = response.json()["error"]
        assert error["code"] == "not_a_sensitive_write"
        assert error["message"] == (
            "This item is a conflict between memories, not a write waiting for approval: "
            "resolve the conflict by choosing its outcome (approve and reject are for "
            "sensitive writes). Choose it on /portal/review/conflicts/, the portal's conflicts "
            "page."
        )


def test_nothing_is_decided_about_a_subject_whose_deletion_is_queued(api_client, pending, tenant):
    """A reviewer's approval made a pending write active (superseding the key's head) while
    the person's whole deletion waited for a worker, and the portal had told them nothing
    would change meanwhile; a rejection, and a conflict's winner (which revokes the others),
    changed rows too. Each is refused now, as a revoke and a write are."""
    from django.utils import timezone

    from memory_core.exceptions import SubjectBeingDeleted
    from memory_core.models import Memory, ReviewItem, Subject
    from memory_core.principals import ReviewerPrincipal
    from memory_core.services.conflicts import conflict_resolve
    from memory_core.services.reviews import review_approve, review_reject

    writes = (("Atlas uses Go.", "user_input"), ("Atlas uses Zig.", "model_inference"))
    for content, source_type in writes:
        source = {"type": source_type, "conversation_id": "c", "message_id": content}
        body = write_body(memory_type="project_constraint", memory_key="atlas.lang",
                          scope="project:atlas", content=content, source=source)  # fmt: skip
        conflict = api_client.post("/api/v1/memories", body, format="json").json()
    conflict = ReviewItem.objects.get(pk=conflict["conflict_review_item"])
    Subject.objects.filter(external_id="user-1").update(
        deletion_queued_at=timezone.now(), deletion_queued_by=1
    )
    user = get_user_model().objects.create_user("decider")
    principal = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)
    for decide in (review_approve, review_reject):
        with pytest.raises(SubjectBeingDeleted):
            decide(principal=principal, item_id=pending[0], reason="x")
    winner = conflict.candidate_ids[0]
    with pytest.raises(SubjectBeingDeleted):
        conflict_resolve(principal=principal, item_id=conflict.pk, outcome="choose_winner",
                         winner_id=winner, reason="x")  # fmt: skip
    assert set(Memory.objects.filter(memory_key__startswith="health.").values_list(
        "status", flat=True)) == {"pending_approval"}  # fmt: skip
    assert set(Memory.objects.filter(memory_key="atlas.lang").values_list(
        "status", flat=True)) == {"active"}  # fmt: skip
    assert ReviewItem.objects.filter(state="open").count() == 3


def test_the_open_queue_leaves_out_a_write_deleted_while_it_waited(reviewer, pending, tenant):
    """A write deleted while it waited (its deletion's worker not run yet) left the portal's
    queue at once but stayed in this one, counted and labelled with the deleted write's key,
    though nothing can be decided on it (``review_closed``; stop 49's reviewer audit)."""
    from memory_core.deletion.services import deletion_request
    from memory_core.models import Memory, ReviewItem
    from memory_core.principals import SubjectPrincipal

    memory = Memory.objects.get(review_items__pk=pending[0])
    owner = SubjectPrincipal(tenant_id=tenant.id, subject_id=memory.subject_id, user_id=1)
    deletion_request(principal=owner, memory_id=memory.pk)  # the worker has not run
    page = reviewer.get(URL).json()
    assert (page["count"], [item["id"] for item in page["results"]]) == (1, [pending[1]])
    # The item itself is still open (the worker closes it), and the other states list it.
    assert ReviewItem.objects.get(pk=pending[0]).state == "open"


@pytest.mark.parametrize("path", ["/api/v1/review/items", "/api/v1/review/items/{id}"])
def test_the_reviewer_api_keeps_a_pending_write_out_of_every_cache(reviewer, pending, path):
    """The portal's pages are sent never_cache's headers (docs/portal.md), so that the back
    button after logout shows nothing; the reviewer API answered the same login's session
    the same pending sensitive writes, words included, with no Cache-Control at all, and a
    cookie keeps no shared cache off as an Authorization header does (stop 50's audit)."""
    response = reviewer.get(path.format(id=pending[0]))
    assert response.status_code == 200, response.content
    directives = {part.strip() for part in response["Cache-Control"].split(",")}
    assert {"no-cache", "no-store", "must-revalidate", "private"} <= directives


def test_an_agent_key_refused_by_the_reviewer_api_is_recorded_as_a_denial(api_client, agent):
    """An agent's request the API refused with 403 is counted on the health page
    (``AccessDenial``); the reviewer API's session-only views never read the key, and an
    agent probing the reviewer queue went uncounted (stop 55's audit of the reviewer API)."""
    from memory_core.models import AccessDenial
    from memory_core.rls import tenant_scope
    from tests.factories import write_body

    body = write_body(memory_key="health.allergy", content="User is allergic to dust.")
    item_id = api_client.post("/api/v1/memories", body, format="json").json()["review_item"]
    with tenant_scope(agent.tenant_id):
        assert not AccessDenial.objects.exists()

    listed = api_client.get(URL)
    approved = api_client.post(f"{URL}/{item_id}/approve", {"reason": "ok"}, format="json")
    assert (listed.status_code, approved.status_code) == (403, 403)
    assert approved.json()["error"]["code"] == "forbidden"

    with tenant_scope(agent.tenant_id):
        denials = list(
            AccessDenial.objects.order_by("created_at").values_list("agent_id", "code", "endpoint")
        )
    assert denials == [
        (agent.id, "forbidden", "review-items"),
        (agent.id, "forbidden", "review-approve"),
    ]


def test_a_second_or_crossed_decision_is_409_review_closed(api_client, reviewer):
    """Stop 57's audit of reviews found this held: a write decided once, approved again or
    rejected after its approval (and approved after its rejection), is answered 409
    ``review_closed``, never a 500."""
    token = "b" * 32

    def decide(item_id, decision):
        reviewer.cookies["csrftoken"] = token
        return reviewer.post(
            f"{URL}/{item_id}/{decision}",
            {"reason": "checked"},
            format="json",
            HTTP_X_CSRFTOKEN=token,
        )

    def waiting(key, content):
        body = write_body(memory_key=key, content=content)
        answer = api_client.post("/api/v1/memories", body, format="json")
        assert answer.status_code == 202, answer.json()
        return answer.json()["review_item"]

    first = waiting("health.diet", "User is allergic to peanuts.")
    assert decide(first, "approve").status_code == 200
    again = decide(first, "approve")
    assert again.status_code == 409 and again.json()["error"]["code"] == "review_closed"
    assert decide(first, "reject").status_code == 409
    second = waiting("health.sleep", "User is allergic to penicillin.")
    assert decide(second, "reject").status_code == 200
    crossed = decide(second, "approve")
    assert crossed.status_code == 409 and crossed.json()["error"]["code"] == "review_closed"
