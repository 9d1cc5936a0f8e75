"""Indexes for the paths whose cost grew with the tenant or the table, not with what they read
(stop 30's audit; each measured with ``EXPLAIN (ANALYZE, BUFFERS)``):

- ``memory_subject_newest``: one subject's memory list, newest first. The list walked
  ``memory_tenant_newest`` through every row of the tenant, dropping other subjects' rows: a
  5-memory subject's page read 20,105 rows of a 20,105-row tenant.
- ``memory_live_expiry`` replaces ``memory_active_expiry``: the sweep expires rows waiting
  for a reviewer too (``status IN ('active', 'pending_approval')``), which the old predicate
  (active only) did not imply, so it was never used and every live row with an expiry was
  read, due or not.
- ``memory_retention`` and ``memory_inferred_retention``: a tenant's rows of a class (or
  inferred) older than its retention, without the tombstones earlier sweeps left, which the
  rules walked again every five minutes (20,000 of them: 1,670 buffers a rule and tenant).
- ``tombstone_subject``: a subject's tombstones (an import's "deleted since", a subject's
  deletion) were a sequential scan of the whole ledger.
- ``review_decided_newest``: a reviewer's recent decisions, a top-N of every decided item of
  the tenant (never purged) otherwise.

Built ``CONCURRENTLY``, so writes go on while they build on large tables; the new expiry
index before the old one goes.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0023_subject_deletion_queued_key")]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                fields=["tenant", "subject", "-created_at", "-id"], name="memory_subject_newest"
            ),
        ),
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(
                    ("status__in", ("active", "pending_approval")), ("valid_until__isnull", False)
                ),
                fields=["valid_until"],
                name="memory_live_expiry",
            ),
        ),
        RemoveIndexConcurrently(model_name="memory", name="memory_active_expiry"),
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("status", "deleted"), _negated=True),
                fields=["tenant", "memory_class", "created_at"],
                name="memory_retention",
            ),
        ),
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                condition=models.Q(
                    ("authority", "model_inference"),
                    models.Q(("status", "deleted"), _negated=True),
                ),
                fields=["tenant", "created_at"],
                name="memory_inferred_retention",
            ),
        ),
        AddIndexConcurrently(
            model_name="reviewitem",
            index=models.Index(
                condition=models.Q(("state", "open"), _negated=True),
                fields=["tenant", "-resolved_at", "-created_at"],
                name="review_decided_newest",
            ),
        ),
        AddIndexConcurrently(
            model_name="tombstone",
            index=models.Index(fields=["tenant_id", "subject_id"], name="tombstone_subject"),
        ),
    ]
