"""A keyless conflict is measured only against rows stage 5 lets through (docs/retrieval.md,
stage 8: "every row it cites that the caller could be given").

``pipeline._keyless_conflicts`` read the rows an open keyless conflict cites with
``candidates.owner_filter`` only, not with the policy's rules of the hard filters
(``budget.confidence_floor``, ``retrieval.max_prompt_sensitivity``): a cited row no agent
can ever be given still outranked its rival, and the agent was given neither. The same two
chains on a memory_key gave the agent the rival (stage 8 groups only what survived stage 5).
It now drops those rows by stage 5's own rule (``filters.policy_reason``), and since stop 60's
audit of retrieval ``owner_filter`` leaves them out too, as every store does: they are no
candidates of the trace either."""

import copy

import pytest

from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.services.policy import policy_publish
from tests.clients import client_for
from tests.factories import AgentFactory, SubjectFactory
from tests.keyless.helpers import correct, deploy_question, keyless_incident
from tests.keyless.test_keyless_grant import _raise_head_above_the_narrow_cap

pytestmark = pytest.mark.django_db


def _given_and_candidates(client):
    answer = deploy_question(client)
    stages = client.get(f"/api/v1/traces/{answer['trace_id']}").json()["stages"]
    return [item["id"] for item in answer["items"]], [c["id"] for c in stages["candidates"]]


def test_a_keyless_head_below_the_confidence_floor_does_not_hide_its_rival(tenant):
    """A keyless head below the policy's confidence floor (0.2 < 0.3), which stage 5 rejects
    for every agent, still outranked its model-inferred correction: the correction was
    dropped as ``lost_conflict:authority_class`` and the package was empty (stop 56's audit
    of retrieval)."""
    SubjectFactory(tenant=tenant, external_id="user-1")
    client = client_for(AgentFactory(tenant=tenant))
    head = keyless_incident(client, confidence=0.2)
    rival = correct(client, head)["memory"]["id"]

    given, candidates = _given_and_candidates(client)
    assert head not in candidates
    assert rival in given, candidates


def test_a_keyless_head_above_the_prompt_cap_does_not_hide_its_rival(tenant):
    """A keyless head above the policy's prompt cap (``retrieval.max_prompt_sensitivity``
    ``personal``; the user's correction to ``sensitive``, approved by a reviewer), which stage
    5 rejects for every agent, still outranked the earlier personal correction beside it: the
    agent was given nothing (stop 56's audit of retrieval)."""
    document = copy.deepcopy(DEFAULT_POLICY)
    document.setdefault("retrieval", {})["max_prompt_sensitivity"] = "personal"
    policy_publish(tenant=tenant, document=document)
    SubjectFactory(tenant=tenant, external_id="user-1")
    client = client_for(AgentFactory(tenant=tenant))
    head = keyless_incident(client)
    rival = correct(client, head)["memory"]["id"]
    new_head = _raise_head_above_the_narrow_cap(tenant, client, head)

    given, candidates = _given_and_candidates(client)
    assert new_head not in candidates
    assert rival in given, candidates
