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
from memory_core.retrieval.conflicts import keyless_rivals
from memory_core.retrieval.dedup import deduplicate
from memory_core.services.policy import policy_publish
from tests.clients import client_for
from tests.factories import AgentFactory, SubjectFactory, write_body
from tests.keyless.helpers import HEAD, RIVAL, correct, deploy_question, keyless_incident
from tests.keyless.test_keyless_grant import _raise_head_above_the_narrow_cap
from tests.memory_core.retrieval.helpers import cand, policy

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


def _same_words_written_again(client, memory_key: str) -> str:
    body = write_body(
        memory_type="incident",
        memory_key=memory_key,
        content=RIVAL,
        source={"type": "model_inference", "conversation_id": "c2", "message_id": "m2"},
    )
    if not memory_key:
        body.pop("memory_key")
    answer = client.post("/api/v1/memories", body, format="json")
    assert answer.status_code == 201, answer.json()
    return answer.json()["memory"]["id"]


def _held_back_rival_and_its_copy(tenant, memory_key: str = ""):
    SubjectFactory(tenant=tenant, external_id="user-1")
    client = client_for(AgentFactory(tenant=tenant))
    head = keyless_incident(client)  # the user's own account
    rival = correct(client, head)["memory"]["id"]  # a model's inference against it: a conflict
    before = deploy_question(client)
    assert [i["content"] for i in before["items"]] == [HEAD]  # the rival is held back
    copy = _same_words_written_again(client, memory_key)  # the model infers the same words
    return client, head, rival, copy


def _given_and_stages(client, answer):
    stages = client.get(f"/api/v1/traces/{answer['trace_id']}").json()["stages"]
    return {i["id"]: i["content"] for i in answer["items"]}, stages


def test_a_copy_of_a_held_back_keyless_rival_is_not_given_beside_the_memory_it_disputes(tenant):
    """Stop 64's audit of retrieval: while a keyless conflict is open, agents are given the
    memory of higher authority and not its rival. The model wrote the rival's words again as
    a plain memory: stage 6 folded the rival into that copy (``content_hash``, the newer row
    the keeper), and ``keyless_rivals`` dropped only the ids the conflict cites, so the
    disputed claim was given under the copy's id beside the memory it disputes (a reviewer's
    ``choose_winner`` revokes such a copy with the loser: ``_folded_copies``). The candidate a
    held-back rival was folded into now drops out with it."""
    client, head, rival, copy = _held_back_rival_and_its_copy(tenant)

    given, stages = _given_and_stages(client, deploy_question(client))
    assert head in given
    # The rival's words were given under the copy's id, which absorbed the rival in stage 6.
    assert {"kept": copy, "merged": rival, "rule": "content_hash"} in stages["dedup_merges"]
    assert RIVAL not in given.values(), given
    lost = {"id": copy, "stage": "conflicts", "reason": "lost_conflict:authority_class"}
    assert lost in stages["rejections"]


@pytest.mark.parametrize("memory_key", ["", "atlas.monday_deploy"], ids=["keyless", "keyed"])
def test_a_copy_of_a_held_back_keyless_rival_is_not_given_when_the_memory_is_off_topic(
    tenant, memory_key
):
    """Stop 64's audit of retrieval, with a query worded like the rival: the memory it
    disputes is left out by the relevance gate, and the conflict was looked up by the
    candidates' ids alone, the copy's and not the rival's folded into it, so it was not read
    and the copy was given alone, as settled. It is looked up by the folded rows' ids too,
    and, since stop 64's review, by those folded into a keyed copy."""
    client, head, rival, copy = _held_back_rival_and_its_copy(tenant, memory_key)

    answer = client.post(
        "/api/v1/retrieve",
        {"query": "Why did the release manager cancel it?", "context": {"user_id": "user-1"}},
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    given, stages = _given_and_stages(client, answer.json())
    assert {"kept": copy, "merged": rival, "rule": "content_hash"} in stages["dedup_merges"]
    assert head not in given
    assert RIVAL not in given.values(), given


def test_a_keyed_copy_of_a_held_back_keyless_rival_is_not_given_beside_the_memory_it_disputes(
    tenant,
):
    """Stop 64's review of retrieval: the model wrote the held-back rival's words again, this
    time under a memory_key. Stage 6 folds the keyless rival into the keyed copy
    (``dedup.keeper_order``: a keyed row first), ``_given_as`` mapped only the rows folded
    into keyless candidates, and the pipeline looked the conflict up by those alone, so the
    rival's words were given under the keyed copy's id beside the memory they dispute. The
    keyed copy now drops out with the rival."""
    client, head, rival, copy = _held_back_rival_and_its_copy(tenant, "atlas.monday_deploy")

    given, stages = _given_and_stages(client, deploy_question(client))
    assert head in given
    assert {"kept": copy, "merged": rival, "rule": "content_hash"} in stages["dedup_merges"]
    assert RIVAL not in given.values(), given
    lost = {"id": copy, "stage": "conflicts", "reason": "lost_conflict:authority_class"}
    assert lost in stages["rejections"]


def test_a_copy_carrying_the_row_a_reviewer_kept_is_not_dropped_for_its_twin():
    """Stop 64's review of retrieval: a reviewer resolved the keyless conflict {head, kept}
    ``keep_both_scoped``; the model then wrote the kept row's words again as a correction of
    the head, which opened a conflict holding head, kept and later
    (``_keyless_conflict_open``), and a third copy of the same words, uncited, is the
    strongest of them. Stage 6 folds kept and later into that copy; ``keyless_rivals`` mapped
    the unkept ``later`` to the copy and dropped it, although the copy also carries ``kept``,
    which the reviewer kept beside the head, so its words were given no more (until ec3efa1e
    only cited candidates were dropped). A copy carrying a kept row, or one of the highest
    standing, stays."""
    words = {"memory_type": "incident", "authority": "model_inference", "content_hash": "h-w"}
    head = cand("head", memory_type="incident", authority="explicit_user")
    kept = cand("kept", confidence=0.6, **words)
    later = cand("later", confidence=0.7, **words)
    copy = cand("copy", confidence=0.9, **words)
    unique, _merges = deduplicate([head, kept, later, copy], policy=policy())
    assert {c.id: c.merged_from for c in unique} == {"head": [], "copy": ["kept", "later"]}

    left, rejected = keyless_rivals(
        unique,
        [[("head", "explicit_user"), ("kept", "model_inference"), ("later", "model_inference")]],
        kept=[frozenset({"head", "kept"})],
    )
    assert [c.id for c in left] == ["head", "copy"], rejected
