"""What row-level security costs the retrieval query: the same retrievals with and without.

``python manage.py rls_cost [--tenants 10] [--memories 20000] [--queries 300] [--json OUT]``

Plants a synthetic corpus (random unit vectors, sentences from a small vocabulary so the
full-text arm matches) in tenants of its own, then runs the real read path
(``retrieve()``: candidate SQL with both arms, filters, ranking, trace insert) for the same
queries in alternating blocks:

- ``rls``: the application role, the tenant set with SET LOCAL in the retrieval's
  transaction, every policy evaluated (production);
- ``no_rls``: the owner role (a superuser here, so RLS is bypassed), same code, same queries.

It also runs the candidate SQL alone both ways and prints both plans' index use. Everything
planted is deleted at the end (``--keep`` keeps it).
"""

from __future__ import annotations

import json
import random
import statistics
import time
import uuid

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.test.utils import override_settings

from memory_core.benchmarks.args import at_least
from memory_core.management.commands._options import check_output_path, write_output
from memory_core.models import Agent, Memory, Subject, Tenant
from memory_core.rls import owner_connection, platform_scope, tenant_atomic

WORDS = (
    "deploy rollback database migration latency cache index vector tenant billing invoice "
    "incident outage postgres redis celery worker queue retry backoff timeout memory answer "
    "python golang rust typescript review approval consent export deletion policy"
).split()
QUERIES = [
    "How did we fix the deploy rollback last time?",
    "Which database migration caused the latency incident?",
    "What did the user say about billing invoice exports?",
    "Recall the celery worker queue retry backoff problem.",
    "postgres index vector cache latency",
    "What is the policy for consent and deletion?",
    "Which language does the user prefer, python or golang?",
    "Remember the redis timeout outage?",
]


def _pct(values, q):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 2)


class Command(BaseCommand):
    help = "Measure the cost of row-level security on the retrieval query (same run, both ways)."

    def add_arguments(self, parser):
        # A bad number is a usage error: --tenants 0 divided by zero after planting nothing.
        parser.add_argument("--tenants", type=at_least(1), default=10)
        parser.add_argument("--memories", type=at_least(1), default=20000)
        parser.add_argument("--queries", type=at_least(1), default=300)
        parser.add_argument("--block", type=at_least(1), default=25)
        parser.add_argument("--seed", type=at_least(0), default=5)
        parser.add_argument("--json", dest="json_out", default="")
        parser.add_argument("--keep", action="store_true")

    def handle(self, *args, tenants, memories, queries, block, seed, json_out, keep, **opts):
        target = check_output_path(json_out)  # before the run, not after it
        if memories < tenants:
            raise CommandError(f"--memories ({memories}) must be at least --tenants ({tenants}).")
        rng = random.Random(seed)
        prefix = f"rlscost-{uuid.uuid4().hex[:6]}"
        memoizing = {
            **settings.MEMLEDGER_EMBEDDER,
            "BACKEND": "memory_core.security.leak_hunt.MemoizingEmbedder",
        }
        with override_settings(MEMLEDGER_EMBEDDER=memoizing):
            try:
                # Planted inside: a run stopped or failing while it plants (minutes for the
                # default corpus) left every tenant planted so far (stop 59's audit of the
                # commands).
                started = time.monotonic()
                callers, planted = self.plant(prefix, tenants, memories, rng)
                planted_s = time.monotonic() - started
                report = self.measure(callers, queries, block, rng)
            finally:
                if not keep:
                    with platform_scope("rls_cost cleanup"):
                        Tenant.objects.filter(slug__startswith=prefix).delete()
        # What was stored: --memories 41 in 2 tenants is 20 a tenant, 40 (stop 57's audit).
        report.update({"tenants": tenants, "memories": planted, "plant_seconds": round(planted_s)})
        for key, value in report.items():
            self.stdout.write(f"{key}: {value}")
        write_output(self, target, json.dumps(report, indent=2, default=str) + "\n")

    def plant(self, prefix, tenants, memories, rng):
        """Plant the corpus; return the callers (agent, subject) and the memories stored."""
        from memory_core.principals import AgentPrincipal
        from memory_core.services.api_keys import agent_ensure

        gen = np.random.default_rng(7)
        per_tenant = memories // tenants
        callers = []
        planted = 0
        with platform_scope("rls_cost plant"):
            for t in range(tenants):
                agent = agent_ensure(tenant_slug=f"{prefix}-{t}", agent_name="bench")
                subjects = [
                    Subject.objects.create(tenant=agent.tenant, external_id=f"user-{s}")
                    # No subject without a memory: a query as one found no candidate, a
                    # RuntimeError traceback (stop 57's audit of commands).
                    for s in range(min(20, per_tenant))
                ]
                rows = []
                vectors = gen.normal(size=(per_tenant, 384)).astype(np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                for i in range(per_tenant):
                    text = " ".join(rng.choice(WORDS) for _ in range(14))
                    rows.append(
                        Memory(
                            tenant=agent.tenant,
                            subject=subjects[i % len(subjects)],
                            memory_class="episodic",
                            memory_type=rng.choice(["episode", "incident", "previous_decision"]),
                            content=f"The user mentioned {text}.",
                            source_type="user_input",
                            authority="explicit_user",
                            embedding=vectors[i].tolist(),
                            embedding_model="synthetic",
                        )
                    )
                planted += len(Memory.objects.bulk_create(rows, batch_size=2000))
                agent = Agent.objects.get(pk=agent.pk)
                callers += [(AgentPrincipal.from_agent(agent), s.external_id) for s in subjects]
        return callers, planted

    def measure(self, callers, queries, block, rng):
        from memory_core.embeddings import get_embedder
        from memory_core.retrieval.pipeline import retrieve
        from memory_core.retrieval.types import RetrievalRequest

        get_embedder().embed(QUERIES)  # one batch; every later embed is a cache hit
        work = [(rng.choice(callers), rng.choice(QUERIES)) for _ in range(queries)]
        timings = {"rls": [], "no_rls": []}

        def run(mode, batch):
            for (principal, user_id), query in batch:
                request = RetrievalRequest(query=query, user_id=user_id, intent="recall")
                began = time.perf_counter()
                if mode == "rls":
                    with tenant_atomic(principal.tenant_id):
                        result = retrieve(principal=principal, request=request)
                else:
                    with transaction.atomic():
                        result = retrieve(principal=principal, request=request)
                timings[mode].append((time.perf_counter() - began) * 1000)
                # Random vectors rank below the relevance floor; the candidates are what count.
                if not result.trace["counts"]["candidates"]:
                    raise CommandError(
                        f"A retrieval as {user_id} ({mode}) found no candidate, so there is no "
                        f"cost to measure: {result.trace.get('counts')}."
                    )

        # Warm both connections and the caches.
        run("rls", work[:5])
        with owner_connection():
            run("no_rls", work[:5])
        timings = {"rls": [], "no_rls": []}
        for start in range(0, len(work), block):
            batch = work[start : start + block]
            order = ["rls", "no_rls"] if (start // block) % 2 == 0 else ["no_rls", "rls"]
            for mode in order:
                if mode == "rls":
                    run(mode, batch)
                else:
                    with owner_connection():
                        run(mode, batch)
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            role = cursor.fetchone()[0]
        summary = {"app_role": role, "queries_per_mode": len(work)}
        for mode, values in timings.items():
            summary[f"{mode}_p50_ms"] = _pct(values, 0.5)
            summary[f"{mode}_p95_ms"] = _pct(values, 0.95)
            summary[f"{mode}_mean_ms"] = round(statistics.fmean(values), 2)
        summary["overhead_p50_ms"] = round(summary["rls_p50_ms"] - summary["no_rls_p50_ms"], 2)
        summary["overhead_p50_pct"] = round(
            100 * summary["overhead_p50_ms"] / summary["no_rls_p50_ms"], 1
        )
        return summary
