"""The embedding column's field sends its values in binary (memory_core.models.fields).

The column is unchanged (``vector(384)``): this records the field's new class, no SQL runs.
"""

from django.db import migrations

import memory_core.models.fields


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0007_issue8_drop_unused_ann_and_gin_indexes")]

    operations = [
        migrations.AlterField(
            model_name="memory",
            name="embedding",
            field=memory_core.models.fields.EmbeddingField(blank=True, dimensions=384, null=True),
        ),
    ]
