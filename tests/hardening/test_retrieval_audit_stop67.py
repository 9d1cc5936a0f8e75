"""Stop 67's audit of retrieval's isolation and gates, as an attacker holding one agent key
(and maybe a subject token): nothing about a memory the agent may not see, through the
package, the trace, a usage report or an error. Each test of a leak failed before its fix;
the others are the probes that found none, kept so that none opens later.
"""

import pytest

from memory_core.models import MemoryClass, MemoryType, Sensitivity
from memory_core.principals import SystemPrincipal
from memory_core.services.api_keys import agent_grant_set
from memory_core.services.memories import MemoryDraft, memory_store_many
from memory_core.subject_tokens import subject_token_create
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory

pytestmark = pytest.mark.django_db

KEY = "deploy.region"


def retrieve(client, query="Which region does the user deploy to?", **context):
    body = {"query": query, "context": {"user_id": "user-1", **context}}
    return client.post("/api/v1/retrieve", body, format="json")


def trace_of(client, response):
    assert response.status_code == 200, response.content
    return client.get(f"/api/v1/traces/{response.json()['trace_id']}").json()


@pytest.fixture
def user_1(tenant):
    return SubjectFactory(tenant=tenant, external_id="user-1")


def test_a_key_deletion_queued_beyond_the_agents_grant_is_not_told_in_its_trace(
    settings, tenant, user_1
):
    """A narrow agent's retrievals said ``+key_deletion_queued`` once another agent queued a
    key's deletion, though the key held none of the memories the narrow agent may read: it
    learned that the person had memories it cannot see, and that they are being deleted."""
    for content in ("Deploy to eu-west-1.", "Deploy to us-east-1.", "Deploy to ap-south-1."):
        MemoryFactory(
            subject=user_1,
            memory_class=MemoryClass.PREFERENCE,
            memory_type=MemoryType.PROJECT_CONSTRAINT,
            memory_key=KEY,
            content=content,
        )
    MemoryFactory(subject=user_1, memory_key="style.tone", content="User prefers a calm tone.")
    wide = client_for(AgentFactory(tenant=tenant))
    narrow = client_for(AgentFactory(tenant=tenant, read_types=[MemoryType.USER_PREFERENCE]))
    before = trace_of(narrow, retrieve(narrow))

    settings.MEMLEDGER_DELETION_QUEUE_ABOVE = 2  # the key holds three: queued for a worker
    asked = wide.post("/api/v1/deletions", {"subject": "user-1", "memory_key": KEY}, format="json")
    assert asked.status_code == 202 and asked.json()["status"] == "queued", asked.content

    after = trace_of(narrow, retrieve(narrow))
    assert after["stages"]["gate"]["rule"] == before["stages"]["gate"]["rule"]
    # The agent whose grant reaches the key is still told why its memories are missing.
    told = trace_of(wide, retrieve(wide))
    assert told["stages"]["gate"]["rule"].endswith("+key_deletion_queued")


def stored(subject, content, **draft):
    """Store ``content`` for ``subject`` as memledger does (embedded), an explicit preference
    unless ``draft`` says otherwise."""
    fields = {
        "memory_type": MemoryType.USER_PREFERENCE,
        "authority": "explicit_user",
        "source_type": "user_input",
        **draft,
    }
    draft_ = MemoryDraft(subject=subject, content=content, **fields)
    (memory,) = memory_store_many(
        drafts=[draft_], principal=SystemPrincipal(tenant_id=subject.tenant_id)
    )
    return memory


def items_of(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["id"] for item in response.json()["items"]}


def test_no_package_outlives_a_grant_narrowed_or_a_deletion(tenant, user_1):
    """Probe of a cached answer: the same request, with an Idempotency-Key too, after the
    agent's grant narrowed and after a memory's deletion, gets neither memory again (the read
    path caches nothing: ``retrieval_cache`` has no request path, and the idempotency replay
    is the writes')."""
    sensitive = stored(user_1, "User prefers appointments after therapy.", sensitivity="sensitive")
    plain = stored(user_1, "User prefers appointments in the morning.", memory_key="time")
    agent = AgentFactory(tenant=tenant)
    client = client_for(agent)
    body = {
        "query": "When does the user prefer appointments?",
        "intent": "load_preferences",
        "context": {"user_id": "user-1"},
    }
    headers = {"HTTP_IDEMPOTENCY_KEY": "retrieve-1"}
    first = client.post("/api/v1/retrieve", body, format="json", **headers)
    assert items_of(first) == {str(sensitive.pk), str(plain.pk)}

    agent_grant_set(agent=agent, max_sensitivity=Sensitivity.PERSONAL)
    second = client.post("/api/v1/retrieve", body, format="json", **headers)
    assert items_of(second) == {str(plain.pk)}
    assert "therapy" not in second.json()["prompt"]

    deleted = client.delete(f"/api/v1/memories/{plain.pk}")
    assert deleted.status_code in (200, 202), deleted.content
    third = client.post("/api/v1/retrieve", body, format="json", **headers)
    assert items_of(third) == set()
    # Nor does the first trace name them now.
    trace = client.get(f"/api/v1/traces/{first.json()['trace_id']}").json()
    assert trace["selected_ids"] == [] and trace["hidden_count"] == 2


@pytest.mark.parametrize(
    "asked",
    ["ATLAS", "atlas ", " Atlas ", "Atlas\u200b", "Ａｔｌａｓ", "Atlas-api", "cafe\u0301", "CAFÉ"],
)
def test_a_project_named_in_another_spelling_reaches_no_other_projects_memories(
    tenant, user_1, asked
):
    """Probe of context ids in odd forms: a request's project id is trimmed and read in NFC
    (as a write stores a scope's ref), nothing more, so another spelling names another
    project. Case, width, an invisible character or a longer id never reach
    ``project:Atlas``'s or ``project:café``'s memory; the same project with spaces around it,
    or in NFD, does."""
    project = {"memory_type": MemoryType.PROJECT_CONSTRAINT, "scope_kind": "project"}
    atlas = stored(user_1, "Deploys happen only on Fridays.", scope_ref="Atlas", **project)
    cafe = stored(user_1, "Deploys happen only on Mondays.", scope_ref="café", **project)
    client = client_for(AgentFactory(tenant=tenant))
    body = {
        "query": "When may we deploy?",
        "intent": "apply_project_rules",
        "context": {"user_id": "user-1", "project_id": asked},
    }
    response = client.post("/api/v1/retrieve", body, format="json")
    if response.status_code == 400:
        return  # refused as an id: nothing read
    found = items_of(response)
    assert (str(atlas.pk) in found) == (asked == " Atlas ")
    assert (str(cafe.pk) in found) == (asked == "cafe\u0301")


TOKEN = "HTTP_X_MEMLEDGER_SUBJECT_TOKEN"


def test_a_token_bound_agent_learns_nothing_of_another_person(tenant, user_1):
    """Probe of a token-bound agent: its own person in another spelling (spaces, NFD) is
    read; another person, existing or not, in any spelling, is the same 403, and the traces
    it made for a person under an earlier token are 404 under a token for another."""
    jose = SubjectFactory(tenant=tenant, external_id="José")
    stored(jose, "User prefers Portuguese.")
    stored(user_1, "User prefers Spanish.")
    agent = AgentFactory(tenant=tenant, any_subject=False)
    for_jose = {TOKEN: subject_token_create(tenant_id=tenant.id, agent_id=agent.id, user_id="José")}
    client = client_for(agent)
    body = {"query": "Which language does the user prefer?", "intent": "load_preferences"}

    def ask(user_id, headers):
        return client.post(
            "/api/v1/retrieve", {**body, "context": {"user_id": user_id}}, format="json", **headers
        )

    own = ask(" Jose\u0301 ", for_jose)
    assert own.status_code == 200 and own.json()["items"], own.content
    refusals = [ask(other, for_jose) for other in ("user-1", "user-1 ", "nobody", "JOSÉ")]
    assert {r.status_code for r in refusals} == {403}
    assert len({json_of(r) for r in refusals}) == 1

    for_user_1 = {
        TOKEN: subject_token_create(tenant_id=tenant.id, agent_id=agent.id, user_id="user-1")
    }
    trace = f"/api/v1/traces/{own.json()['trace_id']}"
    assert client.get(trace, **for_jose).status_code == 200
    assert client.get(trace, **for_user_1).status_code == 404
    usage = {"kind": "answer", "memory_ids": []}
    assert client.post(f"{trace}/usage", usage, format="json", **for_user_1).status_code == 404


def json_of(response) -> str:
    return response.content.decode()


def test_a_usage_report_tells_no_memory_of_anyone_else_from_none(tenant, other_tenant, user_1):
    """Probe of usage reports: naming another tenant's memory, another person's, one above the
    agent's grant, another agent's private one, or an id of nothing, is the same refusal
    (``not_selected``), with the id as sent."""
    import uuid

    mine = stored(user_1, "User prefers tea.")
    agent = AgentFactory(tenant=tenant, max_sensitivity=Sensitivity.PERSONAL)
    client = client_for(agent)
    someone = SubjectFactory(tenant=tenant, external_id="user-2")
    stranger = SubjectFactory(tenant=other_tenant, external_id="user-1")
    others = [
        stored(stranger, "User prefers coffee."),
        stored(someone, "User prefers water."),
        stored(user_1, "User prefers decaf for anxiety.", sensitivity="sensitive"),
        stored(user_1, "User prefers juice.", agent_id=AgentFactory(tenant=tenant).id),
    ]
    response = client.post(
        "/api/v1/retrieve",
        {"query": "What does the user drink?", "context": {"user_id": "user-1"}},
        format="json",
    )
    assert str(mine.pk) in items_of(response)
    url = f"/api/v1/traces/{response.json()['trace_id']}/usage"
    answers = set()
    for memory_id in [*(str(m.pk) for m in others), str(uuid.uuid4())]:
        refused = client.post(url, {"kind": "answer", "memory_ids": [memory_id]}, format="json")
        assert refused.status_code == 400, refused.content
        answers.add(json_of(refused).replace(memory_id, "<id>"))
    assert len(answers) == 1
