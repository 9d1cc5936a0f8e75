"""What an agent's final answers and tool calls used of a retrieval (``RetrievalTrace.used_ids``
and ``usage``): the seed's trace question "which final answer or tool call used the memory?".

Both columns are added with a constant default, which PostgreSQL stores in the catalog: no
existing trace is rewritten.
"""

import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0013_access_denial")]

    operations = [
        migrations.AddField(
            model_name="retrievaltrace",
            name="usage",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="retrievaltrace",
            name="used_ids",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.UUIDField(), blank=True, default=list, size=None
            ),
        ),
    ]
