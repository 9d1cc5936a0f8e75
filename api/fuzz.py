"""Generated API testing: schemathesis cases from ``/api/schema/`` against the WSGI app.

Every generated request carries a real API key of tenant A. Path ids are drawn from three
pools: ids schemathesis invents, tenant A's own ids (so real objects are reached), and tenant
B's ids (so every foreign id is tried). Each response is checked for:

- no 5xx (``not_a_server_error``);
- conformance to the schema (``response_schema_conformance``, ``content_type_conformance``);
- no cross-tenant success: a request naming one of tenant B's ids never gets a 2xx, and no
  response body ever contains tenant B's canary text.

``fuzz_run`` is used by the test suite (a few hundred requests) and by
``manage.py fuzz_api`` (5,000 or more).
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field

import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import override_settings
from hypothesis import HealthCheck, Phase, given, seed
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
)

CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
ID_PARAMS = ("memory_id", "trace_id", "operation_id", "item_id")


@dataclass
class FuzzTarget:
    """Who calls and what lies beyond their tenant."""

    raw_key: str
    own_ids: dict[str, list[str]]
    foreign_ids: dict[str, list[str]]
    foreign_canary: str
    shared_user_id: str = "user-1"


@dataclass
class FuzzReport:
    requests: int = 0
    operations: int = 0
    statuses: Counter = field(default_factory=Counter)
    server_errors: list = field(default_factory=list)
    schema_violations: list = field(default_factory=list)
    cross_tenant: list = field(default_factory=list)
    foreign_id_requests: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "requests": self.requests,
            "operations": self.operations,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "server_errors": len(self.server_errors),
            "schema_violations": len(self.schema_violations),
            "cross_tenant_successes": len(self.cross_tenant),
            "foreign_id_requests": self.foreign_id_requests,
            "seconds": round(self.seconds, 1),
            "examples": {
                "server_errors": self.server_errors[:5],
                "schema_violations": self.schema_violations[:5],
                "cross_tenant": self.cross_tenant[:5],
            },
        }


def load_schema(app):
    """Load the OpenAPI document the app serves at /api/schema/ (JSON)."""
    return schemathesis.openapi.from_wsgi("/api/schema/?format=json", app)


def _operations(schema):
    operations = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation is not None:
            operations.append(operation)
    return operations


def _pick_body(case, target: FuzzTarget, rng: random.Random) -> bool:
    """Aim a generated body at real subjects and ids; return True if it names a foreign id."""
    body = case.body
    if not isinstance(body, dict):
        return False
    context = body.get("context")
    if isinstance(context, dict) and rng.random() < 0.6:
        # The same external id exists in both tenants: only the key's tenant may answer.
        context["user_id"] = target.shared_user_id
    if "subject" in body and rng.random() < 0.5:
        body["subject"] = target.shared_user_id
    if "memory_id" in body and rng.random() < 0.6:
        foreign = rng.random() < 0.6
        pool = target.foreign_ids if foreign else target.own_ids
        if pool.get("memory_id"):
            body["memory_id"] = rng.choice(pool["memory_id"])
            return foreign
    return False


def _pick_ids(case, target: FuzzTarget, rng: random.Random) -> bool:
    """Point the case's id parameters at own or foreign ids; return True if foreign."""
    params = case.path_parameters or {}
    names = [name for name in params if name in ID_PARAMS]
    if not names:
        return _pick_body(case, target, rng)
    roll = rng.random()
    if roll < 0.4:
        return False  # keep schemathesis' own (mostly unknown) ids
    pool = target.foreign_ids if roll < 0.75 else target.own_ids
    used = False
    for name in names:
        ids = pool.get(name) or []
        if ids:
            params[name] = rng.choice(ids)
            used = True
    return used and pool is target.foreign_ids


def fuzz_run(*, app, target: FuzzTarget, requests: int, rng_seed: int = 7) -> FuzzReport:
    """Send about ``requests`` generated requests (at least that many) and check each."""
    # Like Django's test client, keep the connection across requests (it may hold a test's
    # transaction); the WSGI handler would otherwise close it at every request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        return _fuzz(app=app, target=target, requests=requests, rng_seed=rng_seed)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _fuzz(*, app, target: FuzzTarget, requests: int, rng_seed: int) -> FuzzReport:
    schema = load_schema(app)
    operations = _operations(schema)
    report = FuzzReport(operations=len(operations))
    rng = random.Random(rng_seed)
    headers = {"Authorization": f"Bearer {target.raw_key}"}
    started = time.monotonic()

    def one(operation, case):
        foreign = _pick_ids(case, target, rng)
        response = case.call(headers=headers)
        report.requests += 1
        report.statuses[response.status_code] += 1
        label = f"{operation.method.upper()} {operation.path}"
        body = response.content.decode("utf-8", "replace") if response.content else ""
        if foreign:
            report.foreign_id_requests += 1
            if 200 <= response.status_code < 300:
                report.cross_tenant.append(f"{label} -> {response.status_code} with a foreign id")
        if target.foreign_canary in body:
            report.cross_tenant.append(f"{label} -> foreign canary in the body")
        try:
            case.validate_response(response, checks=CHECKS, headers=headers)
        except Exception as exc:  # a check failed: record it, keep fuzzing
            entry = {
                "operation": label,
                "status": response.status_code,
                "error": str(exc)[:800],
                "body": body[:300],
                "request": _describe(case),
            }
            if response.status_code >= 500:
                report.server_errors.append(entry)
            else:
                report.schema_violations.append(entry)

    # Limits are per key per minute/day; the fuzzer is one key sending thousands.
    with override_settings(MEMLEDGER_RATE_LIMIT=None, MEMLEDGER_WRITE_QUOTA=None):
        _rounds(operations, one, report, requests, rng_seed)
    report.seconds = time.monotonic() - started
    return report


def _rounds(operations, one, report, requests, rng_seed):
    per_round = max(1, math.ceil(requests / max(1, len(operations))))
    rounds = 0
    while report.requests < requests and rounds < 50:
        for operation in operations:
            remaining = requests - report.requests
            if remaining <= 0:
                break
            _run_operation(operation, one, rng_seed * 1000 + rounds, min(per_round, remaining))
        rounds += 1


def _run_operation(operation, one, run_seed: int, examples: int) -> None:
    @seed(run_seed)
    @hypothesis_settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )
    @given(case=operation.as_strategy())
    def run(case):
        one(operation, case)

    run()


def _describe(case) -> dict:
    return {
        "path_parameters": case.path_parameters,
        "query": case.query,
        "body": case.body if isinstance(case.body, (dict, list, str, int, float)) else None,
    }


def plant(*, prefix: str) -> tuple[FuzzTarget, list]:
    """Create tenants A and B with memories, traces and deletions; return A's target.

    Both tenants have a subject with the same external id. B's memories carry a canary
    string that must never appear in any response to A. Returns the target and the tenants;
    the callers roll the transaction back to remove them.
    """
    import uuid

    from memory_core.deletion.services import deletion_request
    from memory_core.models import Subject
    from memory_core.principals import AgentPrincipal, SystemPrincipal
    from memory_core.retrieval.pipeline import retrieve
    from memory_core.retrieval.types import RetrievalRequest
    from memory_core.services.api_keys import agent_ensure, api_key_create
    from memory_core.services.memories import MemoryDraft, memory_store_many

    canary = f"CANARY{uuid.uuid4().hex[:12]}"
    ids: dict[str, dict[str, list[str]]] = {}
    tenants = []
    raw_key = ""
    for side in ("a", "b"):
        agent = agent_ensure(tenant_slug=f"{prefix}-{side}", agent_name="fuzzer")
        tenants.append(agent.tenant)
        subject, _ = Subject.objects.get_or_create(tenant=agent.tenant, external_id="user-1")
        marker = canary if side == "b" else "own"
        drafts = [
            MemoryDraft(
                subject=subject,
                memory_type=memory_type,
                memory_key=key,
                content=f"{text} ({marker})",
                authority="explicit_user",
                source_type="user_input",
                sensitivity="personal",
            )
            for memory_type, key, text in [
                ("user_preference", "pref.language", "The user prefers answers in Python."),
                ("project_constraint", "project.db", "The project uses PostgreSQL only."),
                ("episode", "", "Last week the user debugged a flaky deploy script."),
                ("user_preference", "pref.tone", "The user likes concise answers."),
            ]
        ]
        system = SystemPrincipal(tenant_id=agent.tenant_id, name="fuzz-plant")
        memories = memory_store_many(drafts=drafts, principal=system)
        principal = AgentPrincipal.from_agent(agent)
        traces = [
            retrieve(
                principal=principal,
                request=RetrievalRequest(query=query, user_id="user-1"),
            ).trace_id
            for query in ("Which language does the user prefer?", "What database do we use?")
        ]
        operation = deletion_request(principal=system, memory_id=memories[-1].id)
        ids[side] = {
            "memory_id": [str(m.id) for m in memories[:-1]],
            "trace_id": [str(t) for t in traces],
            "operation_id": [str(operation.id)],
        }
        if side == "a":
            _, raw_key = api_key_create(agent=agent, name="fuzz")
    target = FuzzTarget(
        raw_key=raw_key, own_ids=ids["a"], foreign_ids=ids["b"], foreign_canary=canary
    )
    return target, tenants


__all__ = ["FuzzReport", "FuzzTarget", "fuzz_run", "plant"]
