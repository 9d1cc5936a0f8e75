"""``Memory.admitted``: whether a memory was ever in use (accepted by admission, or approved by
a reviewer).

Agents are answered a write that waits for a reviewer without its words, and a rejected one
too. The test was the row's status, so a waiting write that an agent revoked, or whose task an
agent closed (revoked, expired), was answered with its words to every agent of the tenant,
though no reviewer ever approved it. The column says what the status cannot: a memory approved
and then revoked is revoked too.

The column has a constant default, which PostgreSQL stores in the catalog: no memory is
rewritten. A trigger stores a row inserted waiting (or rejected) as never in use whatever it
names, so a process of the previous release, which does not know the column, stores its
waiting writes as this release does rather than failing the CHECK below. The rows that were never in use are marked from the trail: waiting and rejected
rows, and revoked or expired ones whose events hold a ``pending_approval`` and no
``approved`` (deleted rows hold no words; a deleted tenant's rows are all deleted). Runs in
platform mode (every tenant's rows), for this migration's transaction only. The CHECK that
ties the column to the status is added ``NOT VALID`` (no scan under the table's exclusive
lock) and validated by the next migration, in its own transaction, which only takes a lock
that lets reads and writes go on. Migrating back drops the column.
"""

from django.db import migrations, models

TABLE = "memory_core_memory"
CONSTRAINT = "memory_admitted_matches_status"
CHECK = (
    "((\"admitted\" = false AND \"status\" IN ('pending_approval', 'rejected'))"
    " OR (\"admitted\" = true AND \"status\" IN ('active', 'superseded'))"
    " OR \"status\" IN ('revoked', 'expired', 'deleted'))"
)
NEVER_IN_USE = """
SELECT set_config('memledger.platform', 'on', true);
UPDATE memory_core_memory m
   SET admitted = false
 WHERE m.status IN ('pending_approval', 'rejected')
    OR (m.status IN ('revoked', 'expired')
        AND EXISTS (SELECT 1 FROM memory_core_memoryevent e
                     WHERE e.memory_id = m.id AND e.action = 'pending_approval')
        AND NOT EXISTS (SELECT 1 FROM memory_core_memoryevent e
                         WHERE e.memory_id = m.id AND e.action = 'approved'));
SELECT set_config('memledger.platform', '', true);
"""

# A row inserted waiting or rejected was never in use, whatever the insert named (the
# column's default is true). The WHEN clause keeps the function off every other insert.
WAITING_NOT_ADMITTED = """
CREATE FUNCTION memory_core_waiting_not_admitted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.admitted := false;
    RETURN NEW;
END;
$$;
CREATE TRIGGER memory_waiting_not_admitted
    BEFORE INSERT ON memory_core_memory
    FOR EACH ROW WHEN (NEW.status IN ('pending_approval', 'rejected') AND NEW.admitted)
    EXECUTE FUNCTION memory_core_waiting_not_admitted();
"""
DROP_WAITING_NOT_ADMITTED = """
DROP TRIGGER IF EXISTS memory_waiting_not_admitted ON memory_core_memory;
DROP FUNCTION IF EXISTS memory_core_waiting_not_admitted();
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0034_admission_target")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="admitted",
            field=models.BooleanField(
                db_default=True,
                default=True,
                help_text="In use at some point (accepted, or approved by a reviewer).",
            ),
        ),
        migrations.RunSQL(NEVER_IN_USE, reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL(WAITING_NOT_ADMITTED, reverse_sql=DROP_WAITING_NOT_ADMITTED),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddConstraint(
                    model_name="memory",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            models.Q(
                                ("admitted", False),
                                ("status__in", ("pending_approval", "rejected")),
                            ),
                            models.Q(("admitted", True), ("status__in", ("active", "superseded"))),
                            ("status__in", ("revoked", "expired", "deleted")),
                            _connector="OR",
                        ),
                        name=CONSTRAINT,
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f"ALTER TABLE {TABLE} ADD CONSTRAINT {CONSTRAINT} CHECK {CHECK} NOT VALID",
                    reverse_sql=f"ALTER TABLE {TABLE} DROP CONSTRAINT {CONSTRAINT}",
                ),
            ],
        ),
    ]
