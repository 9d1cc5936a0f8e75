"""Migration 0055's trigger, cheaper and without its null blind spot; a scrubbed trace keeps no
score or redundancy penalty.

The trigger (``trace_cites_every_id``) read the same places as before, and still does: each id
of ``selected_ids``, ``used_ids``, the usage reports' ``memory_ids`` and the places of the
document the scrub cleans (``memory_core_trace_without``, migration 0025: candidates,
rejections, selected items and their ``merged_from``, dedup merges, a conflict's candidates and
winner). Two things change (stop 69's review of the traces step):

- It matched every string of those places against the id pattern (case-insensitive, two
  forms), some 2.5 µs a string: 0.19 ms of a retrieval's trace of 30 candidates, every
  retrieval, and as much per trace the deletion's scrub updates. A string already in
  ``cited_ids`` as written (every one a retrieval writes) is now passed over before the
  pattern; the others are matched as before. 0.05 ms.
- It appended the ids ``cited_ids`` lacked by ``named <> ALL(cited_ids)``, which is null, not
  true, once ``cited_ids`` holds a null: a row edited to hold one (``cited_ids = cited_ids ||
  NULL``) took no id of any other place, and a deleted id put back there alone verified again.
  The ids lacking are now those ``EXCEPT`` leaves, which treats a null as any value.

``memory_core_trace_unscored`` nulls each selected item's ``score`` and
``components.redundancy_penalty``: the traces step applies it to every trace it scrubs (as it
nulls the prompt's tokens), and it is applied here to the traces scrubbed before (their document
says ``deleted_since``). The penalty was measured against the items ranked above, the deleted
memory perhaps among them: its cosine to the item, which the API stopped answering
(``traces._unscored``, stop 68) while the stored row, shown by the Django admin, kept it.
Migrating back restores migration 0055's functions; the figures are not put back.
"""

from django.db import migrations

TRIGGER = r"""
CREATE OR REPLACE FUNCTION memory_core_trace_cites_every_id() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.cited_ids := NEW.cited_ids || ARRAY(
        SELECT named FROM (
            SELECT unnest(NEW.selected_ids || NEW.used_ids) AS named
            UNION ALL
            SELECT place::uuid FROM (
                SELECT v #>> '{}' AS place
                    FROM jsonb_path_query(NEW.stages, 'lax $.candidates[*].id') v
                UNION ALL SELECT v #>> '{}'
                    FROM jsonb_path_query(NEW.stages, 'lax $.rejections[*].id') v
                UNION ALL SELECT v #>> '{}'
                    FROM jsonb_path_query(NEW.stages, 'lax $.selected[*].id') v
                UNION ALL SELECT v #>> '{}'
                    FROM jsonb_path_query(NEW.stages, 'lax $.selected[*].merged_from[*]') v
                UNION ALL SELECT v #>> '{}'
                    FROM jsonb_path_query(NEW.stages, 'lax $.dedup_merges[*].kept') v
                UNION ALL SELECT v #>> '{}'
                    FROM jsonb_path_query(NEW.stages, 'lax $.dedup_merges[*].merged') v
                UNION ALL SELECT v #>> '{}'
                    FROM jsonb_path_query(NEW.stages, 'lax $.conflicts[*].candidate_ids[*]') v
                UNION ALL SELECT v #>> '{}'
                    FROM jsonb_path_query(NEW.stages, 'lax $.conflicts[*].winner_id') v
                UNION ALL SELECT v #>> '{}'
                    FROM jsonb_path_query(NEW.usage, 'lax $[*].memory_ids[*]') v
                -- Cited as written (every id a retrieval writes): no pattern to match.
                EXCEPT SELECT unnest(NEW.cited_ids)::text
            ) AS places
            -- An id in either spelling ``uuid`` reads; anything else (a null winner) names
            -- nothing.
            WHERE place ~*
                '^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$'
        ) AS named_ids
        WHERE named IS NOT NULL
        -- Not ``<> ALL(cited_ids)``: null once cited_ids holds a null, which hid every id.
        EXCEPT SELECT unnest(NEW.cited_ids)
        ORDER BY 1);
    RETURN NEW;
END
$$;

DROP FUNCTION IF EXISTS memory_core_trace_named_ids(jsonb, jsonb);

CREATE OR REPLACE FUNCTION memory_core_trace_unscored(doc jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN jsonb_typeof(doc->'selected') = 'array'
        THEN doc || jsonb_build_object('selected', (
            SELECT COALESCE(jsonb_agg(CASE WHEN jsonb_typeof(e) = 'object'
                THEN e || jsonb_build_object('score', NULL)
                       || CASE WHEN jsonb_typeof(e->'components') = 'object'
                               THEN jsonb_build_object('components', (e->'components')
                                    || jsonb_build_object('redundancy_penalty', NULL))
                               ELSE '{}'::jsonb END
                ELSE e END ORDER BY n), '[]'::jsonb)
            FROM jsonb_array_elements(doc->'selected') WITH ORDINALITY AS a(e, n)))
        ELSE doc END
$$;
"""

# Migration 0055's.
RESTORE = r"""
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

DROP FUNCTION IF EXISTS memory_core_trace_unscored(jsonb);
"""

UNSCORE_SCRUBBED = """
SELECT set_config('memledger.platform', 'on', true);
UPDATE memory_core_retrievaltrace
   SET stages = memory_core_trace_unscored(stages)
 WHERE stages ? 'deleted_since'
   AND memory_core_trace_unscored(stages) IS DISTINCT FROM stages;
SELECT set_config('memledger.platform', '', true);
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0055_trace_cites_every_id")]

    operations = [
        migrations.RunSQL(TRIGGER, RESTORE),
        migrations.RunSQL(UNSCORE_SCRUBBED, migrations.RunSQL.noop),
    ]
