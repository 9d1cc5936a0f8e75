"""Drop the memory table's HNSW and GIN indexes: retrieval no longer reads them (issue 8).

Every retrieval reads one subject's eligible rows (tenant, subject, type, status: the btree
index ``memory_subject_type``) and ranks them exactly in one shared scan
(``memory_core.retrieval.candidates``): the cosine distance and the full-text match are computed
per row, which BM25's statistics needed anyway. Measured at 1M rows (docs/performance.md):

- the planner never chose the global HNSW index for these filtered queries, and forcing it gave
  recall@10 0.92 at 150-290 ms against the exact scan's 1.0 at 18-34 ms;
- the HNSW index held 1.95 GB and made each insert ~3 ms dearer: 100 rows took 282-385 ms to
  insert with it, 32 ms without it (22 ms without the GIN index too).

Subjects far larger than the benchmark's largest (13.6k rows) would pay a linear scan; the
path for them is a partial HNSW index per such tenant (docs/performance.md, "growth").
The reverse migration rebuilds both indexes (minutes at 1M rows).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0006_issue8_memory_rows_inline")]

    operations = [
        migrations.RemoveIndex(model_name="memory", name="memory_embedding_hnsw"),
        migrations.RemoveIndex(model_name="memory", name="memory_search_vector_gin"),
    ]

