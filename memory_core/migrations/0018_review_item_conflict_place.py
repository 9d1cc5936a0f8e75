"""A conflict review item has a place: the scope and environment of its narrowest candidates.

One item was open per (tenant, subject, memory_key): requests in two projects (or two
environments) that each saw a conflict on one key took turns rewriting that item's candidates,
so a reviewer resolved whichever set the last request left, and a ``keep_both_scoped`` given to
one set was lost at the next request of the other. Now one item is open per key **and place**
(``services.conflicts``).

The existing conflict items get the place of their narrowest candidate still on record (the
memories a deletion purged are no longer cited), which is where the request or write that
opened them stood; the backfill reads across tenants, so it runs in platform mode, for this
migration's transaction only. Non-conflict items keep empty columns. Migrating back closes
all but the newest open conflict of each key (resolution ``migration_rollback``), as the old
constraint allows one.
"""

from django.db import migrations, models

BACKFILL = """
SELECT set_config('memledger.platform', 'on', true);
UPDATE memory_core_reviewitem r
   SET (scope_kind, scope_ref, environment) = (
       SELECT m.scope_kind, m.scope_ref, m.environment
         FROM memory_core_memory m
        WHERE m.id = ANY(r.candidate_ids)
        ORDER BY CASE m.scope_kind WHEN 'task' THEN 5 WHEN 'repo' THEN 4
                 WHEN 'project' THEN 3 WHEN 'user' THEN 2 ELSE 1 END DESC,
                 m.environment DESC, m.scope_kind, m.scope_ref
        LIMIT 1)
 WHERE r.kind = 'conflict'
   AND EXISTS (SELECT 1 FROM memory_core_memory m WHERE m.id = ANY(r.candidate_ids));
SELECT set_config('memledger.platform', '', true);
"""
# Back to one open item per key: all but the newest open conflict of each key are closed.
UNDO = """
SELECT set_config('memledger.platform', 'on', true);
UPDATE memory_core_reviewitem r
   SET state = 'resolved', resolution = 'migration_rollback', resolved_at = now()
 WHERE r.kind = 'conflict' AND r.state = 'open' AND EXISTS (
       SELECT 1 FROM memory_core_reviewitem n
        WHERE n.kind = 'conflict' AND n.state = 'open' AND n.tenant_id = r.tenant_id
          AND n.subject_id = r.subject_id AND n.memory_key = r.memory_key
          AND (n.created_at, n.id) > (r.created_at, r.id));
SELECT set_config('memledger.platform', '', true);
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0017_idempotency_record")]

    operations = [
        migrations.AddField(
            model_name="reviewitem",
            name="scope_kind",
            field=models.CharField(blank=True, default="", max_length=16),
        ),
        migrations.AddField(
            model_name="reviewitem",
            name="scope_ref",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.AddField(
            model_name="reviewitem",
            name="environment",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.RemoveConstraint(
            model_name="reviewitem",
            name="review_one_open_conflict_per_key",
        ),
        migrations.RunSQL(BACKFILL, UNDO),
        migrations.AddConstraint(
            model_name="reviewitem",
            constraint=models.UniqueConstraint(
                condition=models.Q(("kind", "conflict"), ("state", "open")),
                fields=(
                    "tenant",
                    "subject",
                    "memory_key",
                    "scope_kind",
                    "scope_ref",
                    "environment",
                ),
                name="review_one_open_conflict_per_place",
            ),
        ),
    ]
