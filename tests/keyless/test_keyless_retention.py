"""A keyless conflict's higher row past its class's retention (not swept yet) is out of use:
it is given to no agent, and must not keep hiding its rival (stop 54's audit of keyless
conflicts)."""

import copy
from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.models import Memory, ReviewItem
from memory_core.policy_defaults import DEFAULT_POLICY
from memory_core.services.policy import policy_publish
from tests.keyless.helpers import HEAD, RIVAL, correct, deploy_question, keyless_incident

pytestmark = pytest.mark.django_db


def test_rival_is_given_once_the_head_is_past_its_class_retention(api_client, tenant):
    head = keyless_incident(api_client)
    rival = correct(api_client, head)["memory"]["id"]
    assert ReviewItem.objects.filter(kind="conflict", state="open", memory_key="").count() == 1
    given = [i["content"] for i in deploy_question(api_client)["items"]]
    assert HEAD in given and RIVAL not in given  # the rule works while both are in use

    # The tenant shortens the episodes' retention: the head (written 10 days ago) is out of
    # use from now on (retrieval leaves it out; the sweep would delete it), the rival is not.
    document = copy.deepcopy(DEFAULT_POLICY)
    document["retention"]["episodic_days"] = 5
    policy_publish(tenant=tenant, document=document, note="shorter episodes")
    Memory.objects.filter(pk=head).update(created_at=timezone.now() - timedelta(days=10))
    assert Memory.objects.get(pk=head).status == "active"
    assert Memory.objects.get(pk=head).valid_until > timezone.now()

    answer = deploy_question(api_client)
    given = [i["content"] for i in answer["items"]]
    assert HEAD not in given  # out of use: retrieval gives it to no agent
    # docs/retrieval.md stage 8: measured "against every row it cites still in use". The head
    # is not in use, so nothing outranks the rival; as after the sweep (which deletes the head
    # and closes the item), the rival is given. Instead the agent is given neither.
    stages = api_client.get(f"/api/v1/traces/{answer['trace_id']}").json()["stages"]
    dropped = {"id": rival, "stage": "conflicts", "reason": "lost_conflict:authority_class"}
    assert dropped not in stages["rejections"], "the rival lost to a head no agent is given"
    assert RIVAL in given, answer
    assert Memory.objects.get(pk=rival).status == "active"
