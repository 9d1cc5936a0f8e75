"""What the memory list (``GET /api/v1/memories``) costs on a built corpus's largest tenant.

    DJANGO_SETTINGS_MODULE=config.settings.local .venv/bin/python scripts/list_cost.py \
        --memories 1000000 --tenants 10000 [--rounds 5] [--offsets 0,50000] [--json OUT]

Runs ``memory_list`` (the endpoint's selector) for one agent of the tenant with the most
memories, without filters, and times its statements as the endpoint's pagination runs them:
offset pages, a page of 50 at each offset and the count; cursor pages (``pagination=cursor``),
``memory_list_page`` from the position of the row just before each offset (found once, not
timed), the same 50 rows read as a range of the index (checked: ``cursor_matches_offset``);
and the first page of the tenant's largest subject (``?subject=``: ``subject_page_ms``, that
subject's size ``subject_memories``, and its statement's EXPLAIN ANALYZE time and buffers,
``subject_page_statement``). Prints the median of ``--rounds`` in milliseconds
(docs/performance-history.md, "Stop 19", "Stop 20" and "Stop 30"; migration 0015's index is
what the first page and every cursor page read, 0024's what a subject's page reads).
"""

import argparse
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from memory_core.benchmarks.args import add_corpus_arguments, at_least  # noqa: E402

PAGE = 50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_corpus_arguments(parser)
    parser.add_argument("--rounds", type=at_least(1), default=5)
    parser.add_argument("--offsets", default="0,50000")
    parser.add_argument("--json", dest="json_out")
    opts = parser.parse_args()
    try:
        offsets = [int(part) for part in opts.offsets.split(",")]
    except ValueError:
        parser.error("--offsets is a comma-separated list of whole numbers")
    if any(offset < 0 for offset in offsets):
        parser.error("--offsets must not be negative")

    import django

    django.setup()
    from django.db.models import Count

    from memory_core import rls
    from memory_core.benchmarks import setup
    from memory_core.benchmarks.corpus import CorpusSpec
    from memory_core.benchmarks.database import BenchDatabaseError
    from memory_core.models import Agent, Memory, MemoryType
    from memory_core.principals import AgentPrincipal
    from memory_core.selectors.memories import ListPosition, memory_list, memory_list_page

    def position_before(memories, offset: int):
        """Return the position of the row just before ``offset``, where the cursor of the page
        at ``offset`` points: None at 0, and False past the list (no cursor leads there)."""
        if offset == 0:
            return None
        rows = list(memories[offset - 1 : offset])
        return ListPosition.of(rows[0]) if rows else False

    try:
        setup.open_corpus(CorpusSpec(memories=opts.memories, tenants=opts.tenants, seed=opts.seed))
    except BenchDatabaseError as exc:
        parser.error(str(exc))
    with rls.platform_scope("list cost"):
        largest = Memory.objects.values("tenant_id").annotate(n=Count("pk")).order_by("-n").first()
        biggest = (
            Memory.objects.filter(tenant_id=largest["tenant_id"])
            .values("subject__external_id")
            .annotate(n=Count("pk"))
            .order_by("-n")
            .first()
        )
    report = {
        "tenant_memories": largest["n"],
        "subject_memories": biggest["n"],
        "rounds": opts.rounds,
        "page": PAGE,
    }
    with rls.tenant_scope(largest["tenant_id"]):
        # The tenant's first agent if it has one; else an agent allowed every type, as the
        # corpus's agents are.
        agent = Agent.objects.filter(tenant_id=largest["tenant_id"]).first()
        principal = (
            AgentPrincipal.from_agent(agent)
            if agent is not None
            else AgentPrincipal(
                tenant_id=largest["tenant_id"],
                agent_id=uuid.uuid4(),
                agent_name="list cost",
                read_types=frozenset(MemoryType.values),
            )
        )

        def timed(call) -> float:
            samples = []
            for _ in range(opts.rounds):
                started = time.perf_counter()
                call()
                samples.append((time.perf_counter() - started) * 1000)
            return round(statistics.median(samples), 1)

        for offset in offsets:
            report[f"page_at_{offset}_ms"] = timed(
                lambda offset=offset: list(memory_list(principal=principal)[offset : offset + PAGE])
            )
        report["count_ms"] = timed(lambda: memory_list(principal=principal).count())
        subject = biggest["subject__external_id"]
        report["subject_page_ms"] = timed(
            lambda: list(memory_list(principal=principal, subject=subject)[:PAGE])
        )
        # The statement alone, as the server ran it (its rows' transfer and Python objects
        # are most of the time above): the last of --rounds EXPLAIN (ANALYZE, BUFFERS).
        for _ in range(opts.rounds):
            plan = json.loads(
                memory_list(principal=principal, subject=subject)[:PAGE].explain(
                    format="json", analyze=True, buffers=True
                )
            )[0]
        top = plan["Plan"]
        report["subject_page_statement"] = {
            "execution_ms": round(plan["Execution Time"], 2),
            "buffers": top["Shared Hit Blocks"] + top.get("Shared Read Blocks", 0),
        }
        report["cursor_matches_offset"] = True
        for offset in offsets:
            position = position_before(memory_list(principal=principal), offset)
            if position is False:
                report[f"cursor_page_at_{offset}_ms"] = None
                continue
            report[f"cursor_page_at_{offset}_ms"] = timed(
                lambda position=position: memory_list_page(
                    memory_list(principal=principal), position=position, older=True, size=PAGE
                )
            )
            page = memory_list_page(
                memory_list(principal=principal), position=position, older=True, size=PAGE
            )
            offset_page = list(memory_list(principal=principal)[offset : offset + PAGE])
            report["cursor_matches_offset"] &= page.rows == offset_page
    print(json.dumps(report))
    if opts.json_out:
        Path(opts.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
