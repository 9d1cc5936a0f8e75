"""Give ``conflict_lost`` to the waiting corrections without a key of a memory that lost a
conflict before stop 62 (``selectors.approvals.CONFLICT_LOST``).

Since stop 62 a reviewer's choice of another candidate marks the open items of the keyless
corrections written on the loser's chain (``services.conflicts._corrections_lost``), so that
their approval stays refused (``review_conflict_lost``) once the person deletes the loser
and the deletion's worker takes its id out of the item. Items waiting since before then hold
no mark: refused while the chain's newest version is revoked, or deleted with the revoke's
event kept (``chains_lost``), they could be approved again once the scrub had run. This marks
them as ``_corrections_lost`` would have: an open sensitive write without a key whose first
candidate's chain (followed through its successors, not through writes still proposed) ends
in a version revoked with reason ``conflict_lost``. In platform mode (every tenant's rows)
for this migration's transaction only. Migrating back keeps the marks: they tell the truth.

An item whose loser was deleted and scrubbed out of it before this runs is not reached:
nothing left links it to the loser (docs/security.md, "Left open"). The rule is
``selectors.approvals.chains_lost``'s, written again in SQL: change them together.
"""

from django.db import migrations

MARK_LOST = """
SELECT set_config('memledger.platform', 'on', true);
WITH RECURSIVE chain AS (
       SELECT item.id AS item_id, m.id AS at, m.status
         FROM memory_core_reviewitem item
         JOIN memory_core_memory m
           ON m.id = item.candidate_ids[1] AND m.tenant_id = item.tenant_id
        WHERE item.kind = 'sensitive_write' AND item.state = 'open' AND item.memory_key = ''
          AND NOT ('conflict_lost' = ANY(item.rule_codes))
       UNION ALL
       SELECT chain.item_id, next.id, next.status
         FROM chain
         JOIN memory_core_memory next
           ON next.supersedes_id = chain.at
          AND next.status NOT IN ('pending_approval', 'rejected')
        WHERE chain.status = 'superseded'),
     newest AS (
       SELECT item_id, at FROM chain
        WHERE status <> 'superseded' AND status IN ('revoked', 'deleted'))
UPDATE memory_core_reviewitem item
   SET rule_codes = item.rule_codes || ARRAY['conflict_lost']::varchar(64)[]
  FROM newest
 WHERE item.id = newest.item_id
   AND EXISTS (SELECT 1 FROM memory_core_memoryevent event
                WHERE event.memory_id = newest.at AND event.tenant_id = item.tenant_id
                  AND event.action = 'revoked' AND event.reason_code = 'conflict_lost');
SELECT set_config('memledger.platform', '', true);
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0048_tenant_retention_swept_at")]

    operations = [migrations.RunSQL(MARK_LOST, reverse_sql=migrations.RunSQL.noop)]
