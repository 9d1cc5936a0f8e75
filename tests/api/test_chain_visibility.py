"""An answer names another memory only when its caller may see that memory.

A memory's ``supersedes``, a chain link's, and its events' ``successor``, ``supersedes`` and
``winner`` are ids of other memories: of versions of its chain above the agent's maximum
sensitivity, of a conflict's winner private to another agent. Each such id is a 404 for the
agent everywhere else, so every answer (detail, list, revoke, write, correction, batch)
shows it as null, or leaves the event's key out, under ``visible_to``: the rules every read
applies. One query per answer for it, however long the chain or the page. Each test that
looks for a hidden id failed before (the ids were shown as stored); the others guard what
must still be shown (to an agent that may see it, to a reviewer).
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_core.models import Memory, MemoryEvent, ReviewItem, Status
from memory_core.principals import SystemPrincipal
from memory_core.services.events import event_record
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/memories"
SOURCE = {"type": "user_input", "conversation_id": "c-1", "message_id": "m-1"}


@pytest.fixture
def user_1(tenant):
    return SubjectFactory(tenant=tenant, external_id="user-1")


@pytest.fixture
def owner(tenant):
    """An agent that may read restricted memories (it sees the whole chain)."""
    return AgentFactory(tenant=tenant, max_sensitivity="restricted")


@pytest.fixture
def limited(tenant):
    """An agent of the same tenant up to ``sensitive``: the chain's first version is above it."""
    return AgentFactory(tenant=tenant, max_sensitivity="sensitive")


def _supersede(older: Memory, **fields) -> Memory:
    """Write the next version of ``older`` with the events ``memory_supersede`` records."""
    # Retired first: the chain's trigger refuses a successor of an active row.
    Memory.objects.filter(pk=older.pk).update(status=Status.SUPERSEDED)
    newer = MemoryFactory(
        subject=older.subject,
        memory_key=older.memory_key,
        supersedes=older,
        version=older.version + 1,
        **fields,
    )
    principal = SystemPrincipal(tenant_id=older.tenant_id)
    event_record(
        memory=older,
        action=MemoryEvent.Action.SUPERSEDED,
        principal=principal,
        details={"successor": str(newer.id)},
    )
    event_record(
        memory=newer,
        action=MemoryEvent.Action.CORRECTED,
        principal=principal,
        details={"supersedes": str(older.id)},
    )
    return newer


@pytest.fixture
def chain(user_1, owner):
    """A restricted first version, a personal head that corrects it, and a conflict the head
    lost against a memory private to ``owner`` (another chain on the key)."""
    hidden = MemoryFactory(
        subject=user_1,
        memory_key="k.chain",
        content="Restricted first version.",
        sensitivity="restricted",
    )
    head = _supersede(hidden, content="Current version.", sensitivity="personal")
    winner = MemoryFactory(
        subject=user_1,
        agent=owner,
        memory_key="k.chain",
        content="The owner's private winner.",
        authority="explicit_admin",
    )
    event_record(
        memory=head,
        action=MemoryEvent.Action.CONFLICT_RESOLVED,
        principal=SystemPrincipal(tenant_id=head.tenant_id),
        reason_code="choose_winner",
        details={"review_item": "00000000-0000-0000-0000-0000000000aa", "winner": str(winner.id)},
    )
    return {"hidden": hidden, "head": head, "winner": winner}


def _events(detail, memory) -> dict:
    return {e["action"]: e["details"] for e in detail["events"] if e["memory_id"] == str(memory.id)}


def test_the_detail_names_no_version_or_winner_the_agent_may_not_see(chain, limited):
    head, hidden, winner = chain["head"], chain["hidden"], chain["winner"]
    response = client_for(limited).get(f"{URL}/{head.id}")
    assert response.status_code == 200
    detail = response.json()
    assert detail["memory"]["supersedes"] is None
    assert [(link["id"], link["supersedes"]) for link in detail["chain"]] == [(str(head.id), None)]
    events = _events(detail, head)
    assert events["corrected"] == {}  # "supersedes" left out
    assert events["conflict_resolved"] == {"review_item": "00000000-0000-0000-0000-0000000000aa"}
    # Nowhere in the answer: each is a 404 for this agent.
    for other in (hidden, winner):
        assert str(other.id) not in response.content.decode()
        assert client_for(limited).get(f"{URL}/{other.id}").status_code == 404


def test_the_detail_names_what_the_agent_may_see(chain, owner):
    head, hidden, winner = chain["head"], chain["hidden"], chain["winner"]
    detail = client_for(owner).get(f"{URL}/{head.id}").json()
    assert detail["memory"]["supersedes"] == str(hidden.id)
    assert [(link["id"], link["supersedes"]) for link in detail["chain"]] == [
        (str(hidden.id), None),
        (str(head.id), str(hidden.id)),
    ]
    assert _events(detail, head)["corrected"] == {"supersedes": str(hidden.id)}
    assert _events(detail, head)["conflict_resolved"]["winner"] == str(winner.id)
    assert _events(detail, hidden)["superseded"] == {"successor": str(head.id)}


def test_an_older_versions_detail_hides_a_successor_the_agent_may_not_see(user_1, limited):
    """Forward too: the ``successor`` of a visible version that a restricted one replaced."""
    older = MemoryFactory(subject=user_1, memory_key="k.fwd", content="Personal version.")
    newer = _supersede(older, content="Restricted correction.", sensitivity="restricted")
    response = client_for(limited).get(f"{URL}/{older.id}")
    assert response.status_code == 200
    assert _events(response.json(), older)["superseded"] == {}
    assert str(newer.id) not in response.content.decode()


def test_a_conflict_resolved_with_no_winner_keeps_its_empty_winner(user_1, limited):
    memory = MemoryFactory(subject=user_1)
    event_record(
        memory=memory,
        action=MemoryEvent.Action.CONFLICT_RESOLVED,
        principal=SystemPrincipal(tenant_id=memory.tenant_id),
        details={"review_item": "00000000-0000-0000-0000-0000000000bb", "winner": ""},
    )
    detail = client_for(limited).get(f"{URL}/{memory.id}").json()
    assert _events(detail, memory)["conflict_resolved"]["winner"] == ""


@pytest.mark.parametrize("pagination", ["offset", "cursor"])
def test_the_list_names_no_version_the_agent_may_not_see(chain, limited, owner, pagination):
    query = {"subject": "user-1", "key": "k.chain", "pagination": pagination}
    response = client_for(limited).get(URL, query)
    assert response.status_code == 200
    rows = {row["id"]: row for row in response.json()["results"]}
    assert rows[str(chain["head"].id)]["supersedes"] is None
    assert str(chain["hidden"].id) not in response.content.decode()
    rows = {row["id"]: row for row in client_for(owner).get(URL, query).json()["results"]}
    assert rows[str(chain["head"].id)]["supersedes"] == str(chain["hidden"].id)


def test_a_revokes_answer_names_no_version_the_agent_may_not_see(chain, limited):
    response = client_for(limited).post(f"{URL}/{chain['head'].id}/revoke", {}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "revoked" and response.json()["supersedes"] is None
    assert str(chain["hidden"].id) not in response.content.decode()


def test_a_correction_names_the_version_it_corrects(chain, limited):
    head = chain["head"]
    response = client_for(limited).post(
        f"{URL}/{head.id}/supersede",
        {"content": "User prefers short answers.", "source": SOURCE},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["memory"]["supersedes"] == str(head.id)


def test_a_reviewer_sees_every_version_a_memory_names(chain, reviewer, tenant):
    item = ReviewItem.objects.create(
        tenant=tenant,
        subject=chain["head"].subject,
        kind=ReviewItem.Kind.SENSITIVE_WRITE,
        memory=chain["head"],
        memory_key="k.chain",
    )
    answer = reviewer.get(f"/api/v1/review/items/{item.id}")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["memory"]["supersedes"] == str(chain["hidden"].id)


def _long_chain(subject, length: int) -> Memory:
    """A chain of ``length`` versions, every other one restricted; return its head."""
    memory = MemoryFactory(subject=subject, memory_key="k.long", sensitivity="restricted")
    for version in range(2, length + 1):
        sensitivity = "personal" if version % 2 == 0 else "restricted"
        memory = _supersede(memory, sensitivity=sensitivity, content=f"Version {version}.")
    return memory


def _queries(client, url, **params) -> tuple[int, dict]:
    client.get("/api/v1/whoami")  # warm: the key's lookup
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, params)
    assert response.status_code == 200
    return len(captured.captured_queries), response.json()


def test_the_detail_resolves_its_references_in_one_query_however_long_the_chain(user_1, limited):
    client = client_for(limited)
    # Named apart from user_1: the factory's next "user-<n>" was "user-1" itself when this
    # test ran first (``-k``), a unique violation.
    short_head = _long_chain(SubjectFactory(tenant=user_1.tenant, external_id="user-short"), 4)
    long_head = _long_chain(user_1, 20)
    short, _ = _queries(client, f"{URL}/{short_head.id}")
    long, detail = _queries(client, f"{URL}/{long_head.id}")
    assert long == short
    # Ten personal versions shown, each superseding a restricted one it may not name.
    assert len(detail["chain"]) == 10
    assert all(link["supersedes"] is None for link in detail["chain"])
    assert not any(k in e["details"] for e in detail["events"] for k in ("supersedes", "successor"))


def test_a_list_page_resolves_its_references_in_one_query(user_1, limited):
    client = client_for(limited)
    _long_chain(user_1, 4)
    few, _ = _queries(client, URL, subject="user-1", limit=100)
    _long_chain(SubjectFactory(tenant=user_1.tenant, external_id="user-2"), 40)
    _long_chain(SubjectFactory(tenant=user_1.tenant, external_id="user-3"), 40)
    many, page = _queries(client, URL, limit=100)
    assert many == few
    assert len(page["results"]) == 42
    assert all(row["supersedes"] is None for row in page["results"])
