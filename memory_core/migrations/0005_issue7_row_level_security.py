"""Row-level security on every table that holds tenant data (issue 7).

- Creates (if missing) the application's login role, ``settings.MEMLEDGER_DB_APP_ROLE``
  (default ``memledger_app``): it owns nothing, is not superuser, has no BYPASSRLS,
  CREATEDB or CREATEROLE, and gets DML on the tables and sequences, now and in future
  (default privileges of the role that runs migrations). Roles are cluster-wide; when the
  migrating role may not create roles, a DBA creates it first and this step only grants.
- ``ENABLE`` + ``FORCE ROW LEVEL SECURITY`` (the owner is bound too) and one policy per table:
  a row is visible and writable only for the tenant in ``memledger.tenant_id`` or, with no
  tenant set, in platform mode (``memledger.platform = 'on'``). With neither: nothing.
- Tenant, Agent, ApiKey and PortalMembership stay outside RLS: they are the credentials that
  *resolve* a tenant (an API key's prefix, a login's membership), so they must be readable
  before any tenant is known. They hold no memory content; every query on them is still
  tenant-filtered in code. See docs/security.md.
- The supersession trigger now refuses a predecessor it cannot see: under RLS a row of
  another tenant is invisible, and "not found" must not pass as "same owner".
"""

import re

from django.conf import settings
from django.db import migrations

TENANT_TABLES = [
    "memory_core_subject",
    "memory_core_memory",
    "memory_core_memoryevent",
    "memory_core_policyversion",
    "memory_core_admissiondecision",
    "memory_core_reviewitem",
    "memory_core_retrievaltrace",
    "memory_core_deletionoperation",
    "memory_core_tombstone",
    "memory_core_export",
]
# Tables without their own tenant column: visible when their parent row is visible (the
# sub-select runs under the parent's policy).
CHILD_TABLES = {
    "memory_core_deletionstep": (
        "EXISTS (SELECT 1 FROM memory_core_deletionoperation o WHERE o.id = operation_id)"
    ),
}

TENANT = "NULLIF(current_setting('memledger.tenant_id', true), '')"
# The tenant's own rows; or, with no tenant set, every row in platform mode. Each setting is
# read in a scalar sub-select: PostgreSQL evaluates it once per statement (an InitPlan) and
# can use ``tenant_id = $1`` as an index condition, instead of calling current_setting() for
# every row an index or vector scan visits (measured: docs/security.md).
TENANT_RULE = (
    f"(tenant_id = (SELECT {TENANT}::uuid) OR (SELECT {TENANT} IS NULL "
    "AND coalesce(current_setting('memledger.platform', true), '') = 'on'))"
)


def app_role() -> str:
    role = getattr(settings, "MEMLEDGER_DB_APP_ROLE", "memledger_app")
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", role):
        raise ValueError(f"MEMLEDGER_DB_APP_ROLE {role!r} is not a plain lower-case identifier")
    return role


CHAIN_TRIGGER = r"""
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
        -- Under row-level security another tenant's row is invisible: refuse, don't pass.
        IF NOT FOUND OR pred.tenant_id <> cur.tenant_id OR pred.subject_id <> cur.subject_id THEN
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
"""


def tenant_isolation(table: str) -> migrations.RunSQL:
    """Return the operation giving a tenant table made by a later migration the policy every
    tenant table has here: ENABLE and FORCE row-level security, one policy on ``tenant_id``."""
    return migrations.RunSQL(
        [
            f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
            f"CREATE POLICY tenant_isolation ON {table} AS PERMISSIVE FOR ALL TO PUBLIC "
            f"USING ({TENANT_RULE}) WITH CHECK ({TENANT_RULE})",
        ],
        [
            f"DROP POLICY IF EXISTS tenant_isolation ON {table}",
            f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY",
            f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY",
        ],
    )


def _runner(schema_editor):
    # params=None: the SQL holds literal % signs (RAISE formats), not placeholders.
    return lambda sql: schema_editor.execute(sql, params=None)


def forward(apps, schema_editor):
    role = app_role()
    run = _runner(schema_editor)
    run(
        f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user
                       AND (rolsuper OR rolcreaterole)) THEN
            RAISE EXCEPTION 'role {role} is missing and % may not create roles: '
                'CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE',
                current_user;
        END IF;
        CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOINHERIT;
    END IF;
END
$$;
"""
    )
    run(f'GRANT CONNECT ON DATABASE "{schema_editor.connection.settings_dict["NAME"]}" TO {role}')
    run(f"GRANT USAGE ON SCHEMA public TO {role}")
    run(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}")
    run(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}")
    run(
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public "
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {role}"
    )
    run(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {role}")
    rules = {table: TENANT_RULE for table in TENANT_TABLES} | CHILD_TABLES
    for table, rule in rules.items():
        run(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        run(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        run(f"DROP POLICY IF EXISTS tenant_isolation ON {table}")
        run(
            f"CREATE POLICY tenant_isolation ON {table} AS PERMISSIVE FOR ALL TO PUBLIC "
            f"USING ({rule}) WITH CHECK ({rule})"
        )
    run(CHAIN_TRIGGER)


def backward(apps, schema_editor):
    role = app_role()
    run = _runner(schema_editor)
    for table in [*TENANT_TABLES, *CHILD_TABLES]:
        run(f"DROP POLICY IF EXISTS tenant_isolation ON {table}")
        run(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
        run(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
    # The role is cluster-wide (other databases may use it): revoke here, never drop.
    run(
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public "
        f"REVOKE SELECT, INSERT, UPDATE, DELETE ON TABLES FROM {role}"
    )
    run(f"ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE USAGE, SELECT ON SEQUENCES FROM {role}")
    run(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}")
    run(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {role}")


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0004_issue8_embedding_storage_plain")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
