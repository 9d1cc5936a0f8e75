"""memory_core_trace_without: a retrieval trace's document without some memory ids, in SQL.

The deletion's traces step scrubs a deleted memory out of every trace that cites it
(``deletion.stores.TracesStore``). Done row by row in Python it loaded every citing trace and
saved each with an UPDATE of its own: 20,000 traces of one memory took 66 s and 1.8 GB in
one transaction. The same filtering as ``retrieval.traces._stages_without`` (candidates,
rejections, selected items and their ``merged_from``, dedup merges, a conflict's candidates
and winner, a conflict left with none dropped) and of the usage reports' ``memory_ids``, as
functions one UPDATE applies; order is kept.
"""

from django.db import migrations

CREATE = r"""
CREATE OR REPLACE FUNCTION memory_core_ids_without(ids jsonb, gone text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(jsonb_agg(i ORDER BY n), '[]'::jsonb)
    FROM jsonb_array_elements(COALESCE(ids, '[]'::jsonb)) WITH ORDINALITY AS a(i, n)
    WHERE (i #>> '{}' = ANY(gone)) IS NOT TRUE
$$;

CREATE OR REPLACE FUNCTION memory_core_trace_without(doc jsonb, gone text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT doc
    || CASE WHEN doc ? 'candidates' THEN jsonb_build_object('candidates', (
        SELECT COALESCE(jsonb_agg(e ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(doc->'candidates') WITH ORDINALITY AS a(e, n)
        WHERE (e->>'id' = ANY(gone)) IS NOT TRUE)) ELSE '{}'::jsonb END
    || CASE WHEN doc ? 'rejections' THEN jsonb_build_object('rejections', (
        SELECT COALESCE(jsonb_agg(e ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(doc->'rejections') WITH ORDINALITY AS a(e, n)
        WHERE (e->>'id' = ANY(gone)) IS NOT TRUE)) ELSE '{}'::jsonb END
    || CASE WHEN doc ? 'selected' THEN jsonb_build_object('selected', (
        SELECT COALESCE(jsonb_agg(
            e || jsonb_build_object('merged_from', memory_core_ids_without(e->'merged_from', gone))
            ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(doc->'selected') WITH ORDINALITY AS a(e, n)
        WHERE (e->>'id' = ANY(gone)) IS NOT TRUE)) ELSE '{}'::jsonb END
    || CASE WHEN doc ? 'dedup_merges' THEN jsonb_build_object('dedup_merges', (
        SELECT COALESCE(jsonb_agg(e ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(doc->'dedup_merges') WITH ORDINALITY AS a(e, n)
        WHERE (e->>'kept' = ANY(gone) OR e->>'merged' = ANY(gone)) IS NOT TRUE)) ELSE '{}'::jsonb END
    || CASE WHEN doc ? 'conflicts' THEN jsonb_build_object('conflicts', (
        SELECT COALESCE(jsonb_agg(
            e || jsonb_build_object(
                'candidate_ids', memory_core_ids_without(e->'candidate_ids', gone),
                'winner_id', CASE WHEN e->>'winner_id' = ANY(gone) THEN 'null'::jsonb
                                  ELSE e->'winner_id' END)
            ORDER BY n), '[]'::jsonb)
        FROM jsonb_array_elements(doc->'conflicts') WITH ORDINALITY AS a(e, n)
        WHERE jsonb_array_length(memory_core_ids_without(e->'candidate_ids', gone)) > 0))
        ELSE '{}'::jsonb END
$$;

CREATE OR REPLACE FUNCTION memory_core_usage_without(usage jsonb, gone text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(jsonb_agg(
        r || jsonb_build_object('memory_ids', memory_core_ids_without(r->'memory_ids', gone))
        ORDER BY n), '[]'::jsonb)
    FROM jsonb_array_elements(COALESCE(usage, '[]'::jsonb)) WITH ORDINALITY AS a(r, n)
$$;
"""

DROP = """
DROP FUNCTION IF EXISTS memory_core_usage_without(jsonb, text[]);
DROP FUNCTION IF EXISTS memory_core_trace_without(jsonb, text[]);
DROP FUNCTION IF EXISTS memory_core_ids_without(jsonb, text[]);
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0024_scale_indexes")]

    operations = [migrations.RunSQL(CREATE, DROP)]
