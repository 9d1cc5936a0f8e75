"""memory_core_usage_without drops a usage report left citing no memory.

The deletion's traces step scrubbed a deleted memory's id out of each usage report of a trace
kept for the other memories it cites, and kept the report: one that cited only the deleted
memory stayed, ``{"kind": "answer", "reference": "msg-…", "memory_ids": []}``, with the
agent's free-text reference to the answer that used it. A report that cited the memory and is
left with no id now goes; one that cited none to begin with (an answer that used no memory)
stays. ``retrieval.traces.trace_without`` does the same in Python (a test compares the two).
Migrating back restores migration 0025's function.
"""

from django.db import migrations

CREATE = r"""
CREATE OR REPLACE FUNCTION memory_core_usage_without(usage jsonb, gone text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(jsonb_agg(
        r || jsonb_build_object('memory_ids', memory_core_ids_without(r->'memory_ids', gone))
        ORDER BY n), '[]'::jsonb)
    FROM jsonb_array_elements(COALESCE(usage, '[]'::jsonb)) WITH ORDINALITY AS a(r, n)
    WHERE jsonb_array_length(memory_core_ids_without(r->'memory_ids', gone)) > 0
       OR jsonb_array_length(COALESCE(r->'memory_ids', '[]'::jsonb)) = 0
$$;
"""

# Migration 0025's.
RESTORE = r"""
CREATE OR REPLACE FUNCTION memory_core_usage_without(usage jsonb, gone text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(jsonb_agg(
        r || jsonb_build_object('memory_ids', memory_core_ids_without(r->'memory_ids', gone))
        ORDER BY n), '[]'::jsonb)
    FROM jsonb_array_elements(COALESCE(usage, '[]'::jsonb)) WITH ORDINALITY AS a(r, n)
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0032_user_scope_by_external_id")]

    operations = [migrations.RunSQL(CREATE, RESTORE)]
