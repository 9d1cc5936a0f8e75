"""A user scope is stored as ``user:<external id>``: rows written as ``user:<subject UUID>``
before writes settled the spelling (stop 35) are rewritten.

The scope is part of a chain's identity, and the same fact written once by id and once by UUID
stood as two chains on one key: deleting the newer brought the older value back. Writes name
the subject by its id since then, and read a head stored by UUID as its id; this rewrites the
rows themselves (memories and the places of conflict review items), so every chain has one
spelling. Deleted rows are left as their deletion scrubbed them, and so is an open conflict
item whose place by id already has an open item (one open conflict per place: the reviewer
resolves both as they stand). A subject's rows that stood
as two active chains stay active side by side (as a conflict kept does), until a write on the
key supersedes the stronger or one is deleted. Runs in platform mode (every tenant's rows),
for this migration's transaction only; the rows' ``updated_at`` is kept (a revocation's
journal line is dated by it). Migrating back changes nothing: which rows were spelt by UUID
is not kept.
"""

from django.db import migrations

REWRITE = """
SELECT set_config('memledger.platform', 'on', true);
UPDATE memory_core_memory m
   SET scope_ref = s.external_id
  FROM memory_core_subject s
 WHERE m.scope_kind = 'user' AND m.status <> 'deleted'
   AND s.id = m.subject_id AND s.tenant_id = m.tenant_id
   AND m.scope_ref = s.id::text;
UPDATE memory_core_reviewitem r
   SET scope_ref = s.external_id
  FROM memory_core_subject s
 WHERE r.scope_kind = 'user'
   AND s.id = r.subject_id AND s.tenant_id = r.tenant_id
   AND r.scope_ref = s.id::text
   AND NOT (r.kind = 'conflict' AND r.state = 'open' AND EXISTS (
       SELECT 1 FROM memory_core_reviewitem o
        WHERE o.kind = 'conflict' AND o.state = 'open' AND o.tenant_id = r.tenant_id
          AND o.subject_id = r.subject_id AND o.memory_key = r.memory_key
          AND o.environment = r.environment
          AND o.scope_kind = 'user' AND o.scope_ref = s.external_id));
SELECT set_config('memledger.platform', '', true);
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0031_journaled_task_closes")]

    operations = [migrations.RunSQL(REWRITE, reverse_sql=migrations.RunSQL.noop)]
