"""An index for the memory list (``GET /api/v1/memories``): a tenant's rows newest first.

Without it a page sorted every row the caller may see: 337 ms for the first page of a
102,000-memory tenant of the 1M benchmark corpus (docs/performance-history.md, "Stop 19"). Built
``CONCURRENTLY``, so writes go on while it builds on a large table.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("memory_core", "0014_trace_usage")]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                fields=["tenant", "-created_at", "-id"], name="memory_tenant_newest"
            ),
        ),
    ]
