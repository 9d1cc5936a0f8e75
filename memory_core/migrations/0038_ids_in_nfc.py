"""Ids are stored in Unicode NFC (stop 51): rows stored before in another form are rewritten.

"José" typed on most systems (NFC) and "José" from a macOS client (NFD) are the same text, and
since stop 51 every path reads an id in NFC (``memory_core.text.identifier``): a subject's
external id, a memory key, a scope's ref. Stored as sent before, the two spellings were two
subjects or two chains, and a deletion of one left the other's memories. This rewrites what
was stored in another form: subjects (but one whose id has another spelling in its tenant,
which stays as it is: two subjects cannot be merged here, and its rows stay reachable from
the portal and the admin), memory keys and scope refs of rows not deleted (a user scope
follows its subject's id, as migration 0032 made it), review items' keys and places (but an
open conflict whose place has another open item already: one open conflict per place) and a
queued key deletion's key. Chains a subject had on two spellings of a key stand side by side,
as a conflict kept does, until a write supersedes the stronger or one is deleted. Runs in
platform mode, for this migration's transaction only; ``updated_at`` is kept. On a server
whose encoding is not UTF-8 nothing is rewritten (PostgreSQL normalizes UTF-8 only). Migrating
back changes nothing.
"""

from django.db import migrations

REWRITE = """
SELECT set_config('memledger.platform', 'on', true);
UPDATE memory_core_subject s
   SET external_id = normalize(s.external_id, NFC)
 WHERE s.external_id IS NOT NFC NORMALIZED
   AND NOT EXISTS (
       SELECT 1 FROM memory_core_subject o
        WHERE o.tenant_id = s.tenant_id AND o.id <> s.id
          AND normalize(o.external_id, NFC) = normalize(s.external_id, NFC));
UPDATE memory_core_subject
   SET deletion_queued_key = normalize(deletion_queued_key, NFC)
 WHERE deletion_queued_key IS NOT NFC NORMALIZED;
UPDATE memory_core_memory
   SET memory_key = normalize(memory_key, NFC)
 WHERE memory_key IS NOT NFC NORMALIZED AND status <> 'deleted';
UPDATE memory_core_memory
   SET scope_ref = normalize(scope_ref, NFC)
 WHERE scope_kind <> 'user' AND scope_ref IS NOT NFC NORMALIZED AND status <> 'deleted';
UPDATE memory_core_memory m
   SET scope_ref = s.external_id
  FROM memory_core_subject s
 WHERE m.scope_kind = 'user' AND m.status <> 'deleted'
   AND s.id = m.subject_id AND s.tenant_id = m.tenant_id
   AND m.scope_ref <> s.external_id
   AND normalize(m.scope_ref, NFC) = normalize(s.external_id, NFC);
UPDATE memory_core_reviewitem r
   SET memory_key = normalize(r.memory_key, NFC),
       scope_ref = CASE WHEN r.scope_kind = 'user' THEN s.external_id
                        ELSE normalize(r.scope_ref, NFC) END
  FROM memory_core_subject s
 WHERE s.id = r.subject_id AND s.tenant_id = r.tenant_id
   AND (r.memory_key IS NOT NFC NORMALIZED
        OR (r.scope_kind = 'user' AND r.scope_ref <> s.external_id
            AND normalize(r.scope_ref, NFC) = normalize(s.external_id, NFC))
        OR (r.scope_kind <> 'user' AND r.scope_ref IS NOT NFC NORMALIZED))
   AND NOT (r.kind = 'conflict' AND r.state = 'open' AND EXISTS (
       SELECT 1 FROM memory_core_reviewitem o
        WHERE o.id <> r.id AND o.kind = 'conflict' AND o.state = 'open'
          AND o.tenant_id = r.tenant_id AND o.subject_id = r.subject_id
          AND normalize(o.memory_key, NFC) = normalize(r.memory_key, NFC)
          AND o.scope_kind = r.scope_kind
          AND normalize(o.scope_ref, NFC) = normalize(r.scope_ref, NFC)
          AND o.environment = r.environment));
SELECT set_config('memledger.platform', '', true);
"""


def rewrite(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SHOW server_encoding")
        if cursor.fetchone()[0].upper() not in ("UTF8", "UTF-8"):
            return
        cursor.execute(REWRITE)


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0037_admission_asked_valid_until")]

    operations = [migrations.RunPython(rewrite, migrations.RunPython.noop)]
