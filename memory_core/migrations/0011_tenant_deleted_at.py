"""A whole tenant's deletion: ``Tenant.deleted_at``, and no new rows for a deleted tenant.

Once a tenant's deletion request commits, nothing may add to what its steps purge: a trigger
on every table that a request of the tenant inserts into (memories, subjects, admission
decisions, review items, retrieval traces, exports) refuses the row. The trigger locks the
tenant row ``FOR KEY SHARE`` (as the foreign key check does), so an insert that races the
request waits for it to commit and then sees ``deleted_at``; the request locks the row
``FOR UPDATE`` and so waits for transactions that already inserted to commit first.
"""

from django.db import migrations, models

TABLES = [
    "memory_core_memory",
    "memory_core_subject",
    "memory_core_admissiondecision",
    "memory_core_reviewitem",
    "memory_core_retrievaltrace",
    "memory_core_export",
]

CREATE_FUNCTION = r"""
CREATE OR REPLACE FUNCTION memory_core_refuse_deleted_tenant() RETURNS trigger AS $$
DECLARE
    deleted timestamptz;
BEGIN
    -- Lock first, then test: a row locked by a deletion request in flight is waited for and
    -- read again once it commits. (A WHERE on deleted_at would be tested against the old
    -- version, before any wait, and let the row in.)
    SELECT deleted_at INTO deleted FROM memory_core_tenant
     WHERE id = NEW.tenant_id FOR KEY SHARE;
    IF deleted IS NOT NULL THEN
        RAISE EXCEPTION 'tenant_not_deleted: tenant % was deleted; % takes no new rows for it',
            NEW.tenant_id, TG_TABLE_NAME
            USING ERRCODE = 'check_violation', CONSTRAINT = 'tenant_not_deleted';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

DROP_FUNCTION = "DROP FUNCTION IF EXISTS memory_core_refuse_deleted_tenant();"


def _trigger(table: str) -> str:
    return (
        f"CREATE TRIGGER tenant_not_deleted BEFORE INSERT ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION memory_core_refuse_deleted_tenant();"
    )


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0010_memory_agent_restrict")]

    operations = [
        migrations.AddField(
            model_name="tenant",
            name="deleted_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.RunSQL(CREATE_FUNCTION, DROP_FUNCTION),
        *(
            migrations.RunSQL(
                _trigger(table), f"DROP TRIGGER IF EXISTS tenant_not_deleted ON {table};"
            )
            for table in TABLES
        ),
    ]
