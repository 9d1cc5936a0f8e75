"""A memory past its class's retention is not retrieved from the moment it is overdue.

Admission caps a write's ``valid_until`` at the class's period, but rows reach the table
other ways (``import_memories``, the demo, and every live row when a new policy version
shortens a period): the candidate statement leaves out what the tenant's active retention no
longer allows, by the rule the retention sweep deletes by (``policy_check.retention_cutoffs``),
at the request's moment, not the next sweep's. Stage 5 checks it again.
"""

import copy
import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from memory_core.deletion.retention import retention_apply, retention_delete
from memory_core.models import Memory, PolicyVersion, Tombstone
from memory_core.policy_check import InUse
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.principals import SystemPrincipal
from memory_core.retrieval import candidates
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.selectors.policy import active_retention
from memory_core.services.memories import memory_store_many
from memory_core.services.policy import policy_publish
from tests.clients import client_for
from tests.factories import AgentFactory, MemoryFactory, SubjectFactory, TenantFactory

from .conftest import draft

pytestmark = pytest.mark.django_db

QUERY = "What do we know about the atlas deploy pipeline?"
# Inside a period by this much: the test runs in far less.
MARGIN = timedelta(minutes=10)


def publish(tenant, **retention):
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retention"].update(retention)
    policy_publish(tenant=tenant, document=document, note="retention for the test")


def line(tenant, number, memory_type, age, **fields):
    created = timezone.now() - age
    record = {
        "tenant": tenant.slug,
        "subject": "dana",
        "memory_type": memory_type,
        "scope": "global",
        "content": f"Note {number} about the atlas deploy pipeline.",
        "authority": "explicit_user",
        "source": {"type": "user_input", "conversation_id": "old-store", "message_id": number},
        "created_at": created.isoformat(),
        "session_id": "s-1",
        "task_id": "t-1",
        **fields,
    }
    return json.dumps(record)


INFERRED = {
    "authority": "model_inference",
    "source": {"type": "model_inference", "conversation_id": "old-store", "message_id": "inf"},
}
# name: (memory type, age past the limit, age just inside it, extra fields); the default
# policy: working 24 hours, episodic 90 days, inferred 30 days; preference_days is set to 60
# below (null by default: kept until revoked).
CLASSES = {
    "working": ("task_state", timedelta(hours=24), {}),
    "episodic": ("incident", timedelta(days=90), {}),
    "preference": ("user_preference", timedelta(days=60), {}),
    "inferred": ("episode", timedelta(days=30), INFERRED),
}


@pytest.fixture
def imported(tenant, tmp_path):
    """One imported memory of each class just past its limit and one just inside it."""
    publish(tenant, preference_days=60)
    lines = []
    for number, (memory_type, limit, fields) in enumerate(CLASSES.values()):
        old_fields = dict(fields)
        new_fields = dict(fields)
        if "source" in fields:
            old_fields["source"] = {**fields["source"], "message_id": f"old-{number}"}
            new_fields["source"] = {**fields["source"], "message_id": f"new-{number}"}
        lines.append(
            line(tenant, f"old-{number}", memory_type, limit + MARGIN, memory_key="", **old_fields)
        )
        lines.append(
            line(tenant, f"new-{number}", memory_type, limit - MARGIN, memory_key="", **new_fields)
        )
    path = tmp_path / "old-store.jsonl"
    path.write_text("\n".join(lines))
    out = StringIO()
    call_command("import_memories", str(path), stdout=out, stderr=StringIO())
    rows = {row.source_message_id: str(row.id) for row in Memory.objects.filter(tenant=tenant)}
    return {
        "printed": out.getvalue(),
        "overdue": {rows[f"old-{n}"] for n in range(len(CLASSES))},
        "inside": {rows[f"new-{n}"] for n in range(len(CLASSES))},
        "working": rows["new-0"],
    }


def ask(principal):
    """A hybrid retrieval with the task's state, every candidate kept in its trace."""
    return retrieve(
        principal=principal,
        request=RetrievalRequest(query=QUERY, user_id="dana", session_id="s-1", task_id="t-1"),
    )


def test_an_imported_memory_past_its_class_s_limit_is_not_a_candidate(imported, agent_principal):
    """Neither the vector nor the full-text store (nor any other) finds one just past its
    limit; both find every one just inside it (the working one comes as the task's state)."""
    candidates_ = {c["id"]: set(c["sources"]) for c in ask(agent_principal).trace["candidates"]}
    assert not set(candidates_) & imported["overdue"]
    assert set(candidates_) == imported["inside"]
    for memory_id in imported["inside"] - {imported["working"]}:
        assert {"vector", "fulltext"} <= candidates_[memory_id]
    assert "task_state" in candidates_[imported["working"]]


def test_the_import_says_how_many_of_its_memories_are_past_their_retention(imported):
    """One of each class was imported past its limit: the import said only "Imported 8"."""
    assert imported["printed"].splitlines() == [
        "Imported 8 memories, skipped 0 already present.",
        "4 of the imported memories in use are past their retention period under their "
        "tenant's policy: no agent is given them, and the next retention sweep deletes them.",
    ]


def test_retrieval_leaves_out_exactly_what_the_sweep_deletes(imported, agent_principal):
    result = retrieve(
        principal=agent_principal,
        request=RetrievalRequest(
            query=QUERY, user_id="dana", session_id="s-1", task_id="t-1", budget=None
        ),  # fmt: skip
    )
    cited = {c["id"] for c in result.trace["candidates"]}
    assert not cited & imported["overdue"]
    assert {c.id for c in result.items} <= imported["inside"]
    assert set(result.trace["context"]["retention_cutoffs"]) == {
        "working_hours", "episodic_days", "preference_days", "inferred_days"
    }  # fmt: skip
    # The sweep, run now, deletes what retrieval left out and nothing it used.
    retention_apply()
    deleted = {str(pk) for pk in Tombstone.objects.values_list("memory_id", flat=True)}
    assert deleted == imported["overdue"]


def test_stage_5_refuses_an_overdue_row_the_statement_let_through(
    imported, agent_principal, monkeypatch
):
    """Defence in depth: with the SQL condition gone, the hard filters still refuse it."""
    monkeypatch.setattr(candidates, "retention_filter", lambda ctx: ("", {}))
    result = ask(agent_principal)
    rejected = {r["id"] for r in result.trace["rejections"] if r["reason"] == "retention_overdue"}
    assert rejected and rejected <= imported["overdue"]
    assert not {c.id for c in result.items} & imported["overdue"]


def _episode(tenant, age, **fields):
    dana = SubjectFactory(tenant=tenant, external_id="dana")
    created = timezone.now() - age
    fields.setdefault("authority", "explicit_user")
    (row,) = memory_store_many(
        drafts=[
            draft(
                dana,
                "The atlas deploy pipeline needs the release tag first.",
                "incident",
                created_at=created,
                valid_from=created,
                **fields,
            )  # fmt: skip
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )
    return str(row.id)


def _found(principal) -> set[str]:
    result = retrieve(
        principal=principal, request=RetrievalRequest(query=QUERY, user_id="dana", intent="recall")
    )
    return {c.id for c in result.items}


def test_a_policy_version_that_shortens_a_period_takes_effect_at_once(tenant, agent_principal):
    episode = _episode(tenant, timedelta(days=10))
    assert _found(agent_principal) == {episode}  # 90 days by default
    publish(tenant, episodic_days=7)
    assert _found(agent_principal) == set()  # no sweep ran
    publish(tenant, episodic_days=30)  # lengthened again before a sweep deleted it
    assert _found(agent_principal) == {episode}


def test_an_inference_past_inferred_days_is_left_out_whatever_its_class_keeps(
    tenant, agent_principal
):
    inferred = _episode(tenant, timedelta(days=12), authority="model_inference",
                        source_type="model_inference")  # fmt: skip
    publish(tenant, episodic_days=90, inferred_days=11)
    assert _found(agent_principal) == set()
    publish(tenant, episodic_days=90, inferred_days=13)
    assert _found(agent_principal) == {inferred}


def test_a_tenant_without_a_limit_keeps_serving(tenant, agent_principal):
    publish(tenant, episodic_days=None, inferred_days=None)
    old = _episode(tenant, timedelta(days=4000))
    assert _found(agent_principal) == {old}
    trace = retrieve(
        principal=agent_principal, request=RetrievalRequest(query=QUERY, user_id="dana")
    ).trace
    assert set(trace["context"]["retention_cutoffs"]) == {"working_hours"}


@pytest.mark.parametrize("age_days", [100, 1], ids=["past the default", "young"])
def test_an_episode_is_given_as_the_sweep_keeps_it_in_a_tenant_without_a_policy(age_days):
    """A tenant without an active policy: retrieval read its retention at the defaults while
    the sweep, writes (``InUse``), the import and the pages read "nothing is limited", so a
    100-day-old episode (past the default ``episodic_days``, 90) was given to no agent and
    deleted by nothing (stop 55's audit of retrieval). ``RetrievalPolicy.from_document(None)``
    now limits nothing either. The young one: it was given before too."""
    tenant = TenantFactory()
    assert not PolicyVersion.objects.filter(tenant=tenant, is_active=True).exists()
    subject = SubjectFactory(tenant=tenant, external_id="nora")
    then = timezone.now() - timedelta(days=age_days)
    memory = MemoryFactory(
        subject=subject,
        incident=True,
        content="The nightly backup job failed because the disk quota was exceeded.",
        created_at=then,
        updated_at=then,
        valid_from=then,
    )
    assert retention_delete() == []  # the sweep deletes nothing of it
    use = InUse.of(active_retention(tenant.id), timezone.now(), tenant_id=tenant.id)
    assert use.state(Memory.objects.get(pk=memory.pk)) == "active"  # writes, pages: in use

    client = client_for(AgentFactory(tenant=tenant))
    answer = client.post(
        "/api/v1/retrieve",
        {
            "query": "why did the nightly backup job fail?",
            "intent": "recall_incident",
            "context": {"user_id": "nora"},
        },
        format="json",
    )
    assert answer.status_code == 200, answer.content
    trace = answer.json()
    rejected = client.get(f"/api/v1/traces/{trace['trace_id']}").json()["stages"]["rejections"]
    assert [item["id"] for item in trace["items"]] == [str(memory.pk)], rejected
