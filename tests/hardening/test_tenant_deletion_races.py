"""A retrieval that opens a conflict review item while its tenant's deletion commits (stop 52's
audit of races: a 500 before)."""

import threading

import pytest

from memory_core.deletion.services import tenant_deletion_request
from memory_core.principals import SystemPrincipal
from memory_core.services import conflicts as conflict_service
from memory_core.services.memories import memory_store_many
from tests.clients import client_for
from tests.factories import SubjectFactory
from tests.memory_core.retrieval.conftest import draft
from tests.threads import in_thread

pytestmark = pytest.mark.django_db(transaction=True)

INFERRED = {"authority": "model_inference", "source_type": "model_inference"}


@pytest.fixture
def private_queue(settings):
    from django.db import connection

    from memory_core.deletion.worker import WorkerProcess
    from tests.celery_worker import unique_queue

    queue = unique_queue("races")
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    yield queue
    WorkerProcess(db_name=connection.settings_dict["NAME"], queue=queue).purge()


def test_a_retrieval_opening_a_conflict_as_its_tenant_is_deleted_answers_410_not_500(
    tenant, agent, private_queue, monkeypatch
):
    """The retrieval holds no lock the tenant's deletion waits for (only the subject's
    advisory lock, shared), so the deletion commits while the retrieval is between its
    reads and its first insert, a conflict's review item (``conflict_open``). The trigger
    ``tenant_not_deleted`` refuses that insert with an IntegrityError, which
    ``conflict_open`` takes for a concurrent open of the same item (``except IntegrityError``)
    and looks that item up with ``.get()``: there is none, and ``ReviewItem.DoesNotExist``
    escapes as a 500. A request that raced its tenant's deletion is answered 410
    ``tenant_deleted`` everywhere else (api/exceptions.py), as the retrieval's own trace
    insert would be."""
    subject = SubjectFactory(tenant=tenant, external_id="dana")
    memory_store_many(
        drafts=[
            draft(subject, f"Deploys go to {region} region.", "episode",
                  memory_key="deploy.region", **INFERRED)
            for region in ("eu-west-1", "us-east-1")
        ],
        principal=SystemPrincipal(tenant_id=tenant.id),
    )  # fmt: skip
    client = client_for(agent)
    client.raise_request_exception = False
    # The key's use is recorded (once a minute): the retrieval below holds no row of it.
    assert client.get("/api/v1/whoami").status_code == 200

    reached, go = threading.Event(), threading.Event()
    real_open = conflict_service.conflict_open

    def paused_open(**kwargs):
        reached.set()
        assert go.wait(30)
        return real_open(**kwargs)

    monkeypatch.setattr(conflict_service, "conflict_open", paused_open)
    retrieval = in_thread(
        lambda: client.post(
            "/api/v1/retrieve",
            {"query": "Which region do deploys go to?", "context": {"user_id": "dana"}},
            format="json",
        ),
        released=[reached],
    )
    assert reached.wait(60), "the retrieval saw no conflict"
    tenant_deletion_request(tenant_id=tenant.id)  # commits: nothing of it waits
    go.set()
    response = retrieval.outcome()
    assert response.status_code == 410, (response.status_code, response.content[:300])
    assert response.json()["error"]["code"] == "tenant_deleted"
