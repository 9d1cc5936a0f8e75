"""The chain trigger no longer checks a row that only becomes a tombstone.

A deletion scrubs every row it deletes (status ``deleted``, content cleared, the chain's
columns kept). The deferred chain trigger (migrations 0002 and 0005) then ran at commit for
each of those rows, re-reading the row and its predecessor: 1.2 s of a 50,000-memory
subject's 5.1 s deletion request (``scripts/deletion_request_cost.py``, docs/operations.md).

Such an update cannot break an invariant the trigger checks, when the row was neither
``pending_approval`` nor ``rejected`` and its owner, version and predecessor stay:

- same owner and increasing versions: the chain's columns do not change;
- a predecessor is not active under a counted successor: the row was counted before, and
  the check held at its last change; a later change of the predecessor runs its own check;
- an active row has no successor: the row is no longer active, and its successor's check
  only relaxes (its predecessor is now deleted).

A pending or rejected row did not count as a successor and does once deleted, so its
tombstoning is still checked, as is any update that moves a row along or between chains.
The INSERT trigger keeps the name ``memory_chain_invariants``; a WHEN clause that reads OLD
needs a trigger of its own for UPDATE.
"""

from django.db import migrations

# The function stays as migration 0005 made it: only the triggers change.
SPLIT = r"""
DROP TRIGGER memory_chain_invariants ON memory_core_memory;

CREATE CONSTRAINT TRIGGER memory_chain_invariants
    AFTER INSERT ON memory_core_memory
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION memory_core_check_chain();

CREATE CONSTRAINT TRIGGER memory_chain_invariants_update
    AFTER UPDATE OF status, supersedes_id, version, tenant_id, subject_id
    ON memory_core_memory
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (NOT (
        NEW.status = 'deleted'
        AND OLD.status NOT IN ('pending_approval', 'rejected')
        AND NEW.supersedes_id IS NOT DISTINCT FROM OLD.supersedes_id
        AND NEW.version = OLD.version
        AND NEW.tenant_id = OLD.tenant_id
        AND NEW.subject_id = OLD.subject_id
    ))
    EXECUTE FUNCTION memory_core_check_chain();
"""

JOIN = r"""
DROP TRIGGER memory_chain_invariants_update ON memory_core_memory;
DROP TRIGGER memory_chain_invariants ON memory_core_memory;

CREATE CONSTRAINT TRIGGER memory_chain_invariants
    AFTER INSERT OR UPDATE OF status, supersedes_id, version, tenant_id, subject_id
    ON memory_core_memory
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION memory_core_check_chain();
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0019_agent_issues_subject_tokens")]

    operations = [migrations.RunSQL(SPLIT, JOIN)]
