"""An index of the traces of retrievals for users no subject named, by their id's digest.

The API's ``{"subject"}`` deletion of an id no subject has looks for such traces the caller
may read (``deletion.services.traced_user``), in the request, and a whole subject's traces
step deletes them by digest: with no index on ``user_id_sha256``, PostgreSQL read every
subject-less trace of the tenant (300,000: 75-240 ms a 404; stop 64's review of the erasure
from traces). Partial (no subject): the other traces hold "" there. Built ``CONCURRENTLY``:
the traces table is the largest one a request writes to.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0052_deletion_operation_next_run_at")]

    operations = [
        AddIndexConcurrently(
            model_name="retrievaltrace",
            index=models.Index(
                condition=models.Q(("subject__isnull", True)),
                fields=["tenant", "user_id_sha256"],
                name="trace_unknown_user",
            ),
        ),
    ]
