"""RetrievalTrace.prompt_tokens may be null: the deletion's traces step nulls it (and the
document's ``tokens.prompt_tokens``) on every trace it scrubs a deleted memory out of
(``deletion.stores.TracesStore``).

Until now the figure stayed the package's: with the other items, which the agent still reads,
it told the deleted memory's length to a token (stop 62's audit of traces). The traces
already scrubbed (their document says ``deleted_since``) are nulled here, in platform mode
(every tenant's rows) for this migration's transaction only. Migrating back sets every null
figure 0, as the column is NOT NULL again (the figure itself is not kept).
"""

from django.db import migrations, models

NULL_SCRUBBED = """
SELECT set_config('memledger.platform', 'on', true);
UPDATE memory_core_retrievaltrace AS t
   SET prompt_tokens = NULL,
       stages = CASE WHEN jsonb_typeof(t.stages->'tokens') = 'object'
                     THEN t.stages || jsonb_build_object('tokens',
                          (t.stages->'tokens') || jsonb_build_object('prompt_tokens', NULL))
                     ELSE t.stages END
 WHERE t.stages ? 'deleted_since';
SELECT set_config('memledger.platform', '', true);
"""

ZERO_NULLS = """
SELECT set_config('memledger.platform', 'on', true);
UPDATE memory_core_retrievaltrace SET prompt_tokens = 0 WHERE prompt_tokens IS NULL;
SELECT set_config('memledger.platform', '', true);
"""


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0046_export_state_sha256")]

    operations = [
        migrations.AlterField(
            model_name="retrievaltrace",
            name="prompt_tokens",
            field=models.PositiveIntegerField(default=0, null=True),
        ),
        migrations.RunSQL(NULL_SCRUBBED, reverse_sql=ZERO_NULLS),
    ]
