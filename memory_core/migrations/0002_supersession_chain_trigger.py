"""Database-enforced supersession chain invariants (cross-row, so a trigger, not a CHECK).

For every row that is a link of a chain (its status is not pending_approval or rejected):
- the row it supersedes belongs to the same tenant and subject, has a lower version, and is
  not active (a superseded row is never active);
- an active row has no successor.
The unique index ``memory_one_successor`` already forbids forks, so a chain has one head.
The trigger is DEFERRABLE INITIALLY DEFERRED: a service may write the new head and retire the
old one in either order inside its transaction; the check runs at commit.
"""

from django.db import migrations

CREATE = r"""
CREATE OR REPLACE FUNCTION memory_core_check_chain() RETURNS trigger AS $$
DECLARE
    cur RECORD;
    pred RECORD;
BEGIN
    -- Re-read the row: a deferred trigger runs at commit, when NEW may be stale.
    SELECT id, tenant_id, subject_id, supersedes_id, status, version
      INTO cur FROM memory_core_memory WHERE id = NEW.id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF cur.supersedes_id IS NOT NULL
       AND cur.status NOT IN ('pending_approval', 'rejected') THEN
        SELECT tenant_id, subject_id, status, version INTO pred
          FROM memory_core_memory WHERE id = cur.supersedes_id;
        IF pred.tenant_id <> cur.tenant_id OR pred.subject_id <> cur.subject_id THEN
            RAISE EXCEPTION 'memory_chain_same_owner: memory % supersedes a memory of another tenant or subject', cur.id
                USING ERRCODE = 'check_violation', CONSTRAINT = 'memory_chain_same_owner';
        END IF;
        IF pred.version >= cur.version THEN
            RAISE EXCEPTION 'memory_chain_version_increases: memory % has version % but supersedes version %',
                cur.id, cur.version, pred.version
                USING ERRCODE = 'check_violation', CONSTRAINT = 'memory_chain_version_increases';
        END IF;
        IF pred.status IN ('active', 'pending_approval') THEN
            RAISE EXCEPTION 'memory_superseded_not_active: memory % is superseded by % but is still %',
                cur.supersedes_id, cur.id, pred.status
                USING ERRCODE = 'check_violation', CONSTRAINT = 'memory_superseded_not_active';
        END IF;
    END IF;
    IF cur.status = 'active' AND EXISTS (
        SELECT 1 FROM memory_core_memory
         WHERE supersedes_id = cur.id AND status NOT IN ('pending_approval', 'rejected')
    ) THEN
        RAISE EXCEPTION 'memory_superseded_not_active: memory % is active but has a successor', cur.id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'memory_superseded_not_active';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER memory_chain_invariants
    AFTER INSERT OR UPDATE OF status, supersedes_id, version, tenant_id, subject_id
    ON memory_core_memory
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION memory_core_check_chain();
"""

DROP = r"""
DROP TRIGGER IF EXISTS memory_chain_invariants ON memory_core_memory;
DROP FUNCTION IF EXISTS memory_core_check_chain();
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0001_initial")]

    operations = [migrations.RunSQL(CREATE, DROP)]
