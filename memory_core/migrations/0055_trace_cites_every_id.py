"""A trace's ``cited_ids`` holds every memory id the trace names, whatever wrote it.

The deletion's traces step finds the traces naming a deleted memory by ``cited_ids`` (GIN),
scrubs every place of them (migrations 0025 and 0033), and verified none was left by
``cited_ids`` and ``selected_ids``. The retrieval writes every id it names into
``cited_ids`` (``pipeline._cited_ids``), but nothing held a row to it: an id put back by hand
in ``used_ids``, a usage report or the document (``stages``) alone was neither found by the
purge nor by the verification, which passed (stop 68's audit of deletion's tasks). Reading
those places in every trace the verification may have to look at is no check a deletion can
afford: 1.5 to 7 s over one person's 20,000 traces (stop 69), as each document is read from
its TOAST storage, against some 1 ms for the GIN lookup.

A trigger keeps the rule instead, on every insert and on every update of those columns: each
id of ``selected_ids``, ``used_ids``, the usage reports' ``memory_ids`` and the places of the
document the scrub knows (candidates, rejections, selected items and their ``merged_from``,
dedup merges, a conflict's candidates and winner), in any letter case, hyphenated or as 32 hex
digits, that ``cited_ids`` lacks is appended to it. A retrieval's trace already cites them all
(the trigger changes nothing of it); a trace edited by hand cites what it names, and the
step's one GIN lookup finds it. Existing rows are not rewritten: the retrieval wrote each.
"""

from django.db import migrations

CREATE = r"""
CREATE OR REPLACE FUNCTION memory_core_trace_named_ids(stages jsonb, usage jsonb) RETURNS uuid[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(array_agg(DISTINCT named::uuid), '{}'::uuid[])
    FROM (
        SELECT v #>> '{}' AS named FROM jsonb_path_query(stages, 'lax $.candidates[*].id') v
        UNION ALL SELECT v #>> '{}' FROM jsonb_path_query(stages, 'lax $.rejections[*].id') v
        UNION ALL SELECT v #>> '{}' FROM jsonb_path_query(stages, 'lax $.selected[*].id') v
        UNION ALL SELECT v #>> '{}'
            FROM jsonb_path_query(stages, 'lax $.selected[*].merged_from[*]') v
        UNION ALL SELECT v #>> '{}' FROM jsonb_path_query(stages, 'lax $.dedup_merges[*].kept') v
        UNION ALL SELECT v #>> '{}'
            FROM jsonb_path_query(stages, 'lax $.dedup_merges[*].merged') v
        UNION ALL SELECT v #>> '{}'
            FROM jsonb_path_query(stages, 'lax $.conflicts[*].candidate_ids[*]') v
        UNION ALL SELECT v #>> '{}' FROM jsonb_path_query(stages, 'lax $.conflicts[*].winner_id') v
        UNION ALL SELECT v #>> '{}' FROM jsonb_path_query(usage, 'lax $[*].memory_ids[*]') v
    ) AS places
    -- An id in either spelling ``uuid`` reads; anything else (a null winner) names nothing.
    WHERE named ~* '^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$'
$$;

CREATE OR REPLACE FUNCTION memory_core_trace_cites_every_id() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.cited_ids := NEW.cited_ids || ARRAY(
        SELECT DISTINCT named FROM unnest(
            NEW.selected_ids || NEW.used_ids
            || memory_core_trace_named_ids(NEW.stages, NEW.usage)) AS n(named)
        WHERE named <> ALL(NEW.cited_ids)
        ORDER BY named);
    RETURN NEW;
END
$$;

CREATE TRIGGER trace_cites_every_id
BEFORE INSERT OR UPDATE OF cited_ids, selected_ids, used_ids, stages, usage
ON memory_core_retrievaltrace
FOR EACH ROW EXECUTE FUNCTION memory_core_trace_cites_every_id();
"""

DROP = """
DROP TRIGGER IF EXISTS trace_cites_every_id ON memory_core_retrievaltrace;
DROP FUNCTION IF EXISTS memory_core_trace_cites_every_id();
DROP FUNCTION IF EXISTS memory_core_trace_named_ids(jsonb, jsonb);
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0054_created_at_on_the_database_clock")]

    operations = [migrations.RunSQL(CREATE, DROP)]
