"""Measure deletion latency on a real worker: request -> every step verified, and the residue.

Arrival pattern: requests are issued one by one at a steady rate (``--rate`` per second, an
open-loop arrival: the next request does not wait for earlier deletions), each a real
``deletion_request`` (one transaction, task sent on commit). Latency is ``completed_at -
requested_at`` of each operation. Residue is counted after the run: every store's
verification re-run for every operation, plus direct checks of rows, traces, exports and the
evaluation file.

Every memory deleted has something in every store: a vector, events with content in their
details, a retrieval trace, an export file, an evaluation file and cache entries.
"""

from __future__ import annotations

import json
import random
import statistics
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.utils import timezone

from memory_core import retrieval_cache
from memory_core.benchmarks.args import at_least, positive_rate, positive_seconds
from memory_core.benchmarks.setup import measure_as_production
from memory_core.deletion.runner import operation_context
from memory_core.deletion.services import deletion_request
from memory_core.deletion.stores import verify_all
from memory_core.deletion.worker import WorkerError, WorkerProcess
from memory_core.exports import export_create, export_path
from memory_core.management.commands._options import check_output_path, write_output
from memory_core.models import (
    DeletionOperation,
    Export,
    Memory,
    MemoryEvent,
    MemoryType,
    RetrievalTrace,
    Subject,
    Tenant,
    Tombstone,
)
from memory_core.principals import SystemPrincipal
from memory_core.rls import platform_command
from memory_core.services.memories import MemoryDraft, build_memory
from memory_core.services.policy import policy_ensure

PER_SUBJECT = 10


def _vector(rng: random.Random) -> list[float]:
    values = [rng.uniform(-1, 1) for _ in range(384)]
    norm = sum(v * v for v in values) ** 0.5
    return [v / norm for v in values]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


class Command(BaseCommand):
    help = "Delete N memories on a real Celery worker; print p50/p95 latency and residue."

    def add_arguments(self, parser):
        # Checked by their types, before anything is seeded: the run is not one transaction
        # (a worker reads what it seeds), so a refusal after the seeding left it all behind.
        parser.add_argument("--operations", type=at_least(1), default=100)
        parser.add_argument("--json", dest="json_out", help="write the figures to this file")
        parser.add_argument("--rate", type=positive_rate, default=25.0, help="requests per second")
        parser.add_argument("--concurrency", type=at_least(1), default=1, help="of the own worker")
        parser.add_argument("--pool", default="prefork", choices=["prefork", "solo", "threads"])
        parser.add_argument(
            "--timeout", type=positive_seconds, default=300.0, help="seconds to wait for the worker"
        )
        parser.add_argument("--keep", action="store_true", help="keep the bench tenant")

    @platform_command
    def handle(
        self, *args, operations, json_out, rate, concurrency, pool, timeout, keep, **options
    ):
        target = check_output_path(json_out)  # before the run, not after it
        measure_as_production()
        rng = random.Random(5)
        tenant = Tenant.objects.create(slug=f"bench-{uuid.uuid4().hex[:10]}", name="bench")
        eval_path = Path(settings.MEMLEDGER_EVAL_DATA_DIRS[0]) / f"{tenant.slug}.json"
        # The run commits as it goes (a worker reads what it seeds), so whatever ends it early
        # (a worker that does not start, Ctrl-C, a failing step) must still remove the tenant
        # and the evaluation file that every later deletion's evaluation step reads.
        try:
            memory_ids = self._seed(tenant, eval_path, operations, rng)
            worker, worker_note = self._worker(concurrency, pool)
            try:
                figures = self._run(tenant, memory_ids, rate, timeout)
            finally:
                if worker is not None:
                    worker.stop()
                    worker.purge()
            residue = self._residue(tenant, memory_ids, eval_path)
            figures.update(
                {
                    "residue": sum(residue.values()),
                    "residue_by_check": {k: v for k, v in residue.items() if v},
                    "arrival": f"steady, {rate:g} requests/s, open loop",
                    "worker": worker_note,
                    "broker": settings.CELERY_BROKER_URL.split("://")[0],
                    "stores": len(
                        DeletionOperation.objects.filter(tenant=tenant).first().steps.all()
                    ),
                    "measured_at": timezone.now().isoformat(),
                }
            )
        finally:
            if not keep:
                self._cleanup(tenant, eval_path)
        text = json.dumps(figures, indent=2, sort_keys=True)
        self.stdout.write(text)
        write_output(self, target, text + "\n")

    def _seed(self, tenant, eval_path: Path, operations: int, rng: random.Random) -> list:
        """Fill ``tenant`` with ``operations`` memories, something of each in every store, and
        write the evaluation file ``eval_path`` citing them all; return their ids."""
        policy_ensure(tenant=tenant)
        subjects = Subject.objects.bulk_create(
            [
                Subject(tenant=tenant, external_id=f"bench-user-{i}")
                for i in range((operations + PER_SUBJECT - 1) // PER_SUBJECT)
            ]
        )
        memories = []
        for i in range(operations):
            draft = MemoryDraft(
                subject=subjects[i // PER_SUBJECT],
                memory_type=MemoryType.USER_PREFERENCE,
                content=f"Benchmark preference number {i}: prefers option {rng.randint(0, 99)}.",
                authority="explicit_user",
                source_type="user_input",
                memory_key=f"bench.{i}",
            )
            memory = build_memory(draft, policy_version=1)
            memory.embedding = _vector(rng)
            memory.embedding_model = "bench-random"
            memories.append(memory)
        Memory.objects.bulk_create(memories, batch_size=500)
        MemoryEvent.objects.bulk_create(
            [
                MemoryEvent(
                    tenant=tenant,
                    memory_id=m.id,
                    action="created",
                    actor_type="system",
                    details={"note": m.content},
                )
                for m in memories
            ],
            batch_size=1000,
        )
        RetrievalTrace.objects.bulk_create(
            [
                RetrievalTrace(
                    tenant=tenant,
                    subject=subject,
                    mode="task",
                    cited_ids=[m.id for m in memories if m.subject_id == subject.id],
                )
                for subject in subjects
            ]
        )
        system = SystemPrincipal(tenant_id=tenant.id, name="bench")
        for subject in subjects:
            export_create(principal=system, subject_id=subject.id)
            ids = [m.id for m in memories if m.subject_id == subject.id]
            retrieval_cache.cache_set(
                tenant_id=tenant.id, subject_id=subject.id, key="q", value=1, memory_ids=ids
            )
        eval_path.parent.mkdir(parents=True, exist_ok=True)
        eval_path.write_text(
            json.dumps({"cases": [{"expected_ids": [str(m.id)]} for m in memories]})
        )
        return [m.id for m in memories]

    def _worker(self, concurrency: int, pool: str):
        from celery import current_app as app  # config's, once Django has loaded

        try:
            replies = app.control.ping(timeout=1.0) if not self._filesystem() else []
        except Exception:
            replies = []
        if replies:
            names = sorted(name for reply in replies for name in reply)
            return None, f"already running: {', '.join(names)}"
        queue = f"bench-{uuid.uuid4().hex[:8]}"
        settings.CELERY_TASK_DEFAULT_QUEUE = queue
        worker = WorkerProcess(
            db_name=connection.settings_dict["NAME"],
            queue=queue,
            concurrency=concurrency,
            pool=pool,
        )
        try:
            worker.start()
        except WorkerError as exc:  # a broker it cannot reach, a missing dependency: its log
            raise CommandError(f"The benchmark's own Celery worker did not start: {exc}") from exc
        return worker, f"own worker, pool {pool}, concurrency {concurrency}"

    def _filesystem(self) -> bool:
        return settings.CELERY_BROKER_URL.startswith("filesystem://")

    def _run(self, tenant, memory_ids, rate: float, timeout: float) -> dict:
        system = SystemPrincipal(tenant_id=tenant.id, name="bench")
        started = time.monotonic()
        for index, memory_id in enumerate(memory_ids):
            delay = started + index / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            deletion_request(principal=system, memory_id=memory_id)
        issued = time.monotonic() - started
        deadline = time.monotonic() + timeout
        operations = DeletionOperation.objects.filter(tenant=tenant)
        while time.monotonic() < deadline:
            if not operations.exclude(status__in=("completed", "failed")).exists():
                break
            time.sleep(0.2)
        rows = list(operations.values_list("status", "requested_at", "completed_at"))
        latencies = [
            (done - requested).total_seconds()
            for status, requested, done in rows
            if status == "completed"
        ]
        return {
            "operations": len(memory_ids),
            "completed": len(latencies),
            "failed": sum(1 for status, _, _ in rows if status == "failed"),
            "p50_s": round(_percentile(latencies, 0.50), 4) if latencies else None,
            "p95_s": round(_percentile(latencies, 0.95), 4) if latencies else None,
            "p99_s": round(_percentile(latencies, 0.99), 4) if latencies else None,
            "max_s": round(max(latencies), 4) if latencies else None,
            "mean_s": round(statistics.mean(latencies), 4) if latencies else None,
            "issue_seconds": round(issued, 2),
            "wall_seconds": round(time.monotonic() - started, 2),
        }

    def _residue(self, tenant, memory_ids, eval_path: Path) -> dict:
        """Return the residue found after the run, by store (all zero when deletion worked)."""
        residue: dict[str, int] = {}
        for operation in DeletionOperation.objects.filter(tenant=tenant):
            for store, (ok, _) in verify_all(operation_context(operation)).items():
                residue[f"verify:{store}"] = residue.get(f"verify:{store}", 0) + (not ok)
        residue["rows"] = (
            Memory.objects.filter(pk__in=memory_ids)
            .exclude(content="", embedding__isnull=True, status="deleted")
            .count()
        )
        residue["traces"] = RetrievalTrace.objects.filter(cited_ids__overlap=memory_ids).count()
        residue["events"] = MemoryEvent.objects.filter(
            memory_id__in=memory_ids, details__has_key="note"
        ).count()
        id_strings = [str(m) for m in memory_ids]
        residue["export_files"] = 0
        for export in Export.objects.filter(tenant=tenant):
            text = export_path(export).read_text()
            residue["export_files"] += sum(1 for m in id_strings if m in text)
        text = eval_path.read_text() if eval_path.exists() else ""
        residue["evaluation_file"] = sum(1 for m in id_strings if m in text)
        return residue

    def _cleanup(self, tenant, eval_path: Path) -> None:
        for export in Export.objects.filter(tenant=tenant):
            export_path(export).unlink(missing_ok=True)
        eval_path.unlink(missing_ok=True)
        MemoryEvent.objects.filter(tenant=tenant).delete()
        Tombstone.objects.filter(tenant_id=tenant.id).delete()
        tenant.delete()
