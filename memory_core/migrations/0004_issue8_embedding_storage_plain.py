"""Keep each memory's embedding inline in its row instead of in the TOAST table (issue 8).

pgvector's ``vector`` type defaults to EXTERNAL storage. A memory row (content, generated
full-text vector and a 384-d embedding of 1,540 bytes) is just over PostgreSQL's ~2 kB TOAST
threshold, so every embedding was moved out of line: each exact distance over a subject's rows
(the retrieval's exact path for small tenants and subjects, the structured store's ordering)
paid a TOAST index lookup and extra page reads per row (measured at 1M rows: 4.6 buffers per
row, 1.4 GB of TOAST beside a 0.75 GB heap). PLAIN keeps the vector in the heap row.

Only the catalog changes here (instant, no rewrite): rows written from now on are inline;
existing rows move when they are rewritten (e.g. ``VACUUM FULL`` or a reload), which the
benchmark corpus does on build. See docs/performance.md.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0003_issue5_deletion_exports")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_core_memory ALTER COLUMN embedding SET STORAGE PLAIN",
            "ALTER TABLE memory_core_memory ALTER COLUMN embedding SET STORAGE EXTERNAL",
        )
    ]
