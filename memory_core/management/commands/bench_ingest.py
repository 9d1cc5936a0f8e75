"""Ingest benchmark: memories/s through admission (single and batch), write-to-retrievable p95.

    python manage.py bench_ingest --memories 2000 [--base-memories 1000000 --base-tenants 10000]
        [--json OUT]

Writes go through the real write service (``memory_write`` / ``memory_write_batch``:
parsing, admission rules, real batch embedding, storage, decisions and events), in their own
tenant ``bench-ingest``. Without ``--base-*`` they land in ``memledger_bench_ingest``; with
them, on top of that retrieval corpus (so the writes land in a table of that size, with its
indexes), and the rows written are deleted again at the end. Write-to-retrievable: a single
write, then the real retrieval pipeline asked for that text until the new id comes back.
The process warms up first, as a web worker does when it starts (``memory_core.warmup``), so
that no write measured pays the model's first run or the admission guards' indexes; the
report's ``warm_up_ms`` says what that took.
"""

from __future__ import annotations

import json
import time

import numpy as np
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from memory_core.admission.candidate import MAX_BATCH
from memory_core.benchmarks import database, measure
from memory_core.benchmarks.args import SEED_MAX, at_least
from memory_core.benchmarks.corpus import CorpusSpec, query_texts, sample_texts
from memory_core.benchmarks.setup import measure_as_production, use_torch_threads
from memory_core.embeddings import get_embedder
from memory_core.management.commands._options import check_output_path, write_output
from memory_core.rls import platform_command, tenant_atomic
from memory_core.warmup import warm_up

INGEST_DB = "memledger_bench_ingest"
TENANT = "bench-ingest"
TYPES = ["episode", "incident", "previous_decision", "successful_procedure"]
# How long a write-to-retrievable probe is waited for; one never found counts as this.
PROBE_WAIT_MS = 5000.0


class Command(BaseCommand):
    help = "Write memories through admission and report memories/s and write-to-retrievable."

    def add_arguments(self, parser):
        parser.add_argument(
            "--memories", type=at_least(1), default=2000, help="memories in batches"
        )
        parser.add_argument(
            "--single", type=at_least(1), default=200, help="memories written one by one"
        )
        parser.add_argument(
            "--batch-size", type=at_least(1), default=100, help=f"1 to {MAX_BATCH} a batch"
        )
        parser.add_argument(
            "--probes", type=at_least(1), default=50, help="write-to-retrievable probes"
        )
        parser.add_argument("--base-memories", type=at_least(0), default=0)
        parser.add_argument("--base-tenants", type=at_least(0), default=0)
        parser.add_argument("--seed", type=at_least(0, SEED_MAX), default=7)
        parser.add_argument("--torch-threads", type=at_least(0), default=1)
        parser.add_argument("--json", dest="json_out", default="")

    @platform_command
    def handle(self, *args, **opts):
        if opts["batch_size"] > MAX_BATCH:
            raise CommandError(f"--batch-size must be at most {MAX_BATCH} (the API's limit)")
        if bool(opts["base_memories"]) != bool(opts["base_tenants"]):
            raise CommandError("--base-memories and --base-tenants go together")
        target = check_output_path(opts["json_out"])  # before the run, not after it
        use_torch_threads(opts["torch_threads"])
        measure_as_production()
        if opts["base_memories"]:
            spec = CorpusSpec(
                memories=opts["base_memories"], tenants=opts["base_tenants"], seed=opts["seed"]
            )
            try:
                name = database.bench_database_name(
                    memories=spec.memories, tenants=spec.tenants, seed=spec.seed
                )
            except database.BenchDatabaseError as exc:  # a usage error, not a traceback
                raise CommandError(str(exc)) from exc
            if not database.exists(name):
                raise CommandError(f"{name} does not exist: run bench_retrieval first")
            with database.connect(name) as conn:
                from memory_core.benchmarks.corpus import corpus_state

                if not corpus_state(conn):
                    raise CommandError(f"{name} holds no corpus: run bench_retrieval first")
        else:
            name = INGEST_DB
            database.ensure_database(name)
        database.use_database(name)
        database.migrate()
        principal, tenant = self._principal()
        self._clear(tenant)
        # As a web process does when it starts (config/wsgi.py): without it the first single
        # write paid the model's first run and the guards' indexes, ~0.5 s (docs/performance.md).
        warmed = warm_up()
        rng = np.random.default_rng(opts["seed"] + 5)
        texts = sample_texts(opts["memories"] + opts["single"] + opts["probes"], rng)
        try:
            report = self._run(principal, texts, opts)
        finally:
            if opts["base_memories"]:
                self._clear(tenant)
        report.update(
            {"database": name, "base_memories": opts["base_memories"], "warm_up_ms": warmed}
        )
        text = json.dumps(report, indent=2)
        self.stdout.write(text)
        write_output(self, target, text + "\n")

    def _run(self, principal, texts, opts) -> dict:
        from memory_core.retrieval.pipeline import retrieve
        from memory_core.retrieval.types import RetrievalRequest
        from memory_core.services.writes import memory_write, memory_write_batch

        subjects = [f"u{i}" for i in range(20)]

        def body(i: int, text: str) -> dict:
            return {
                "subject": subjects[i % len(subjects)],
                "memory_type": TYPES[i % len(TYPES)],
                "scope": "global",
                "content": text,
                "source": {"type": "user_input", "conversation_id": "bench", "message_id": str(i)},
            }

        outcomes: dict[str, int] = {}

        def count(results):
            for r in results:
                outcomes[r.decision] = outcomes.get(r.decision, 0) + 1

        # The model alone on texts of the same kind, in the same batches: the ceiling of batch
        # ingest on this machine (measured in the same run, so the ratio holds when it is busy).
        embedder = get_embedder()
        size = opts["batch_size"]
        model_texts = texts[: max(size, min(opts["memories"], 3 * size))]
        started = time.perf_counter()
        for start in range(0, len(model_texts), size):
            embedder.embed(model_texts[start : start + size])
        model_per_s = len(model_texts) / (time.perf_counter() - started)

        # Single writes, one request's worth of work each.
        single_ms = []
        offset = 0
        started = time.perf_counter()
        for i in range(opts["single"]):
            t0 = time.perf_counter()
            with tenant_atomic(principal.tenant_id):  # as a request: the tenant set (RLS)
                count([memory_write(principal=principal, data=body(i, texts[offset + i]))])
            single_ms.append((time.perf_counter() - t0) * 1000)
        single_s = time.perf_counter() - started
        offset += opts["single"]

        # Batches through memory_write_batch (one model batch per call).
        batch_ms = []
        started = time.perf_counter()
        for start in range(0, opts["memories"], size):
            chunk = [
                body(offset + j, texts[offset + j])
                for j in range(start, min(start + size, opts["memories"]))
            ]
            t0 = time.perf_counter()
            with tenant_atomic(principal.tenant_id):
                count(memory_write_batch(principal=principal, items=chunk))
            batch_ms.append((time.perf_counter() - t0) * 1000)
        batch_s = time.perf_counter() - started
        offset += opts["memories"]

        # Write to retrievable: write, then retrieve that text until the new id comes back.
        probe_ms, misses = [], 0
        probe_texts = query_texts(opts["probes"], opts["seed"] + 99)
        for i in range(opts["probes"]):
            text = probe_texts[i]
            t0 = time.perf_counter()
            with tenant_atomic(principal.tenant_id):
                result = memory_write(
                    principal=principal, data={**body(i, text), "subject": "probe"}
                )
            if result.memory is None:  # refused: never retrievable either
                probe_ms.append(PROBE_WAIT_MS)
                misses += 1
                continue
            target = str(result.memory.id)
            found = False
            while time.perf_counter() - t0 < PROBE_WAIT_MS / 1000:
                with tenant_atomic(principal.tenant_id):
                    got = retrieve(
                        principal=principal,
                        request=RetrievalRequest(query=text, user_id="probe"),
                    )
                if any(str(item.id) == target for item in got.items):
                    found = True
                    break
                time.sleep(0.01)
            # A probe never found counts as the 5 s waited: left out, half the writes never
            # retrievable still read as a p95 of 90 ms (stop 49's audit).
            probe_ms.append((time.perf_counter() - t0) * 1000 if found else PROBE_WAIT_MS)
            misses += not found
        return {
            "single": {
                "memories": opts["single"],
                "memories_per_s": round(opts["single"] / single_s, 1),
                **measure.percentiles(single_ms),
                "max_ms": round(max(single_ms), 2),
            },
            "batch": {
                "memories": opts["memories"],
                "batch_size": size,
                "memories_per_s": round(opts["memories"] / batch_s, 1),
                "per_batch": measure.percentiles(batch_ms),
            },
            "model_only": {
                "memories_per_s": round(model_per_s, 1),
                "texts": len(model_texts),
                "note": "embedder.embed alone, texts of the same generator, same batch size",
            },
            "embedder": measure.embedder_report(embedder),
            "write_to_retrievable": {
                **measure.percentiles(probe_ms),
                "probes": opts["probes"],
                "not_retrievable_within_5s": misses,
            },
            "admission_outcomes": outcomes,
            "path": "memory_core.services.writes (admission, batch embedding, storage) "
            "in-process; retrieval via memory_core.retrieval.pipeline.retrieve",
        }

    def _principal(self):
        from memory_core.models import Agent, Tenant
        from memory_core.principals import AgentPrincipal
        from memory_core.services.policy import policy_ensure

        tenant, _ = Tenant.objects.get_or_create(slug=TENANT, defaults={"name": "Bench ingest"})
        policy_ensure(tenant=tenant)
        agent, _ = Agent.objects.get_or_create(tenant=tenant, name="bench-writer")
        return AgentPrincipal.from_agent(agent), tenant

    def _clear(self, tenant) -> None:
        """Remove what earlier ingest runs wrote in the bench tenant (its own rows only).

        As the owner over its own connection: skipping the triggers (``session_replication_role``)
        is the owner's privilege, not the application role's.
        """
        name = database.check_name(connection.settings_dict["NAME"])
        with database.connect(name) as conn:
            conn.execute("SET session_replication_role = replica")
            for table in (
                "memory_core_memoryevent",
                "memory_core_admissiondecision",
                "memory_core_reviewitem",
                "memory_core_retrievaltrace",
                "memory_core_memory",
                "memory_core_subject",
            ):
                conn.execute(f"DELETE FROM {table} WHERE tenant_id = %s", [tenant.id])  # noqa: S608
            conn.commit()
