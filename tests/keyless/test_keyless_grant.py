"""A keyless conflict's rows outside an agent's grant do not decide what that agent is given.

Retrieval measured a keyless candidate against every row its open conflict cites, read by
``pipeline._KEYLESS_CITED_SQL`` with no grant: a row above the agent's maximum sensitivity
(which is "not even a candidate", docs/api.md "Subjects") dropped the agent's own candidate,
and the trace told it so (``lost_conflict:authority_class`` with no rival it may see). The
same two chains on a memory_key gave the agent its candidate (stage 8 groups its candidates
only): the answer depended on whether the memory had a key (stop 55's audit of isolation).
The cited rows are now read as every store reads a row (``candidates.owner_filter``).
"""

import pytest
from django.contrib.auth import get_user_model

from memory_core.models import Memory, ReviewItem, Status
from memory_core.principals import ReviewerPrincipal
from memory_core.services.reviews import review_approve
from tests.clients import client_for
from tests.factories import AgentFactory, SubjectFactory, write_body
from tests.keyless.helpers import HEAD, correct, deploy_question, keyless_incident

pytestmark = pytest.mark.django_db


def _raise_head_above_the_narrow_cap(tenant, full, head_id, **extra):
    """The person's own account of the head, corrected (explicit_user) and marked sensitive
    (a reviewer approves it): the chain's new head is above a `personal` cap."""
    answer = correct(
        full,
        head_id,
        content=HEAD + " Confirmed by the user.",
        source_type="user_input",
        sensitivity="sensitive",
        expect=202,
        **extra,
    )
    user = get_user_model().objects.create_user(f"reviewer-{head_id[:8]}", password="pw-rev-12345")
    reviewer = ReviewerPrincipal(tenant_id=tenant.id, user_id=user.pk)
    review_approve(principal=reviewer, item_id=answer["review_item"], reason="checked")
    new_head = Memory.objects.get(pk=answer["memory_id"])
    assert new_head.status == Status.ACTIVE and new_head.sensitivity == "sensitive"
    return str(new_head.id)


def _setup(tenant, key=None):
    SubjectFactory(tenant=tenant, external_id="user-1")
    full = client_for(AgentFactory(tenant=tenant, max_sensitivity="restricted"))
    if key is None:
        head = keyless_incident(full)
    else:  # the same incident on a memory_key (keyless_incident drops the key)
        body = write_body(memory_type="incident", content=HEAD, memory_key=key)
        written = full.post("/api/v1/memories", body, format="json")
        assert written.status_code == 201, written.json()
        head = written.json()["memory"]["id"]
    rival = correct(full, head)["memory"]["id"]  # model_inference: kept beside the head
    new_head = _raise_head_above_the_narrow_cap(tenant, full, head)
    narrow = client_for(AgentFactory(tenant=tenant, max_sensitivity="personal"))
    return full, narrow, rival, new_head


def test_keyed_control_the_narrow_agent_is_given_its_candidate(tenant):
    """The same chains on a memory_key: the narrow agent is given the rival it may read."""
    _full, narrow, rival, _new_head = _setup(tenant, key="deploy.monday")
    answer = deploy_question(narrow)
    stages = narrow.get(f"/api/v1/traces/{answer['trace_id']}").json()["stages"]
    assert rival in [item["id"] for item in answer["items"]], (answer, stages["rejections"])


def test_a_keyless_row_outside_the_grant_does_not_hide_the_agents_candidate(tenant):
    full, narrow, rival, new_head = _setup(tenant)
    item = ReviewItem.objects.get(kind="conflict", state="open", memory_key="")
    assert {str(i) for i in item.candidate_ids} == {rival, new_head}
    # The narrow agent may read the rival (personal), never the new head (sensitive).
    assert narrow.get(f"/api/v1/memories/{rival}").status_code == 200
    assert narrow.get(f"/api/v1/memories/{new_head}").status_code == 404
    # The full agent is given the head, not the rival: the rule as documented.
    given_full = [i["id"] for i in deploy_question(full)["items"]]
    assert new_head in given_full and rival not in given_full

    answer = deploy_question(narrow)
    stages = narrow.get(f"/api/v1/traces/{answer['trace_id']}").json()["stages"]
    dropped = {"id": rival, "stage": "conflicts", "reason": "lost_conflict:authority_class"}
    # Before the fix, the narrow agent was given nothing, and its trace said its candidate
    # lost to a row of higher authority that it may not see.
    assert dropped not in stages["rejections"], "dropped for a row outside the agent's grant"
    assert rival in [item["id"] for item in answer["items"]], answer
