"""Agent names are stored in Unicode NFC (stop 53), as ids are since migration 0038.

An agent's name is how a subject token is asked for (``POST /api/v1/subject-tokens``'s
``agent``) and how ``create_agent_key`` and ``issue_subject_token`` find it: "José" made from a
macOS shell (NFD) was found by that spelling only. Every path now reads a name in NFC
(``memory_core.text.identifier``); this rewrites the names stored in another form, but one
whose NFC spelling another agent of its tenant has (two agents cannot be merged here: it keeps
its name, and the admin shows it), or whose NFC spelling is longer than the column (NFC
lengthens a few characters: U+0958 becomes two). On a server whose encoding is not UTF-8 nothing is
rewritten (PostgreSQL normalizes UTF-8 only). Migrating back changes nothing.
"""

from django.db import migrations

REWRITE = """
UPDATE memory_core_agent a
   SET name = normalize(a.name, NFC)
 WHERE a.name IS NOT NFC NORMALIZED
   AND char_length(normalize(a.name, NFC)) <= 100
   AND NOT EXISTS (
       SELECT 1 FROM memory_core_agent o
        WHERE o.tenant_id = a.tenant_id AND o.id <> a.id
          AND normalize(o.name, NFC) = normalize(a.name, NFC));
"""


def rewrite(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SHOW server_encoding")
        if cursor.fetchone()[0].upper() not in ("UTF8", "UTF-8"):
            return
        cursor.execute(REWRITE)


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0039_tenant_evaluation_run")]

    operations = [migrations.RunPython(rewrite, migrations.RunPython.noop)]
