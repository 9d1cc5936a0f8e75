"""The split-write rule joins a write with the subject's newest earlier writes, newest by their
decisions' ``created_at``, the database's clock (``services.writes._RECENT_WRITES_SQL``).

Since migration 0054 the column is the database's, and a batch's decisions are stored by one
``bulk_create``: ``Now()``, the statement's start, gave them all one moment, and which of a
batch's writes the window held was the planner's pick. ``ClockTimestamp`` reads the clock per
row, and ``_in_batch_order`` adds each row's place in the batch.
"""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from memory_core.models import AdmissionDecision
from tests.api.test_bypasses_stop36_api import BATCH, URL, body
from tests.memory_core.admission.test_bypasses_stop36_policy import FILLERS, FIRST_HALF, SECOND_HALF

pytestmark = pytest.mark.django_db


def test_a_batchs_decisions_keep_the_batchs_order_in_created_at(api_client):
    """Stop 65's audit of the database's clock: every decision of a batch had the same
    ``created_at`` (``Now()`` in the one INSERT of ``bulk_create``), where each had had the
    moment its instance was built, in the batch's order. They rise in the batch's order
    again."""
    response = api_client.post(BATCH, {"items": [body(text) for text in FILLERS]}, format="json")
    assert response.status_code == 200, response.json()
    ids = [result["admission_decision_id"] for result in response.json()["results"]]
    stamps = dict(AdmissionDecision.objects.values_list("id", "created_at"))
    in_batch_order = [stamps[AdmissionDecision._meta.pk.to_python(pk)] for pk in ids]
    assert len(in_batch_order) == len(FILLERS)
    assert in_batch_order == sorted(set(in_batch_order)), "not rising in the batch's order"


@pytest.mark.parametrize("fillers_after", [False, True], ids=["half-last", "half-first"])
def test_the_half_written_last_in_a_batch_is_joined_with_the_next_write(api_client, fillers_after):
    """Stop 65's audit of the database's clock: the split-write window (5 writes by default)
    holds a subject's newest writes, and with one moment for a whole batch of five fillers
    and the first half of an instruction written last, the window held any five of the six:
    the second half, written next, was stored (201) where it was refused (422,
    ``injection.split_write``). half-first, the half in an earlier batch and the fillers
    after it in another, is the control: the window drops the half, as it should."""
    halves = [body(FIRST_HALF)]
    fillers = [body(text) for text in FILLERS]
    if not fillers_after:
        response = api_client.post(BATCH, {"items": fillers + halves}, format="json")
        assert response.status_code == 200, response.json()
        assert all(r["decision"] == "accepted" for r in response.json()["results"])
        second = api_client.post(URL, body(SECOND_HALF), format="json")
        assert second.status_code == 422, second.json()
        assert "injection.split_write" in second.json()["rule_codes"]
    else:
        assert api_client.post(BATCH, {"items": halves}, format="json").status_code == 200
        assert api_client.post(BATCH, {"items": fillers}, format="json").status_code == 200
        second = api_client.post(URL, body(SECOND_HALF), format="json")
        assert second.status_code == 201, second.json()


def test_a_web_host_ahead_still_joins_the_write_just_made(api_client):
    """Stop 65's audit of the database's clock: the window's start was the web host's clock
    less ``split_window_minutes`` (a day), compared with the decisions' ``created_at``, the
    database's: a web host a day and an hour ahead read the first half, written a moment
    before, as out of the window, and stored the second. The start is the database's
    clock in the statement now."""
    assert api_client.post(URL, body(FIRST_HALF), format="json").status_code == 201
    true_now = timezone.now
    with mock.patch.object(timezone, "now", lambda: true_now() + timedelta(hours=25)):
        second = api_client.post(URL, body(SECOND_HALF), format="json")
    assert second.status_code == 422, second.json()
    assert "injection.split_write" in second.json()["rule_codes"]
