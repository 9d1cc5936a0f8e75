"""Random corpora, random retrievals: what a package may hold, and how its trace accounts for
every candidate.

Each seed stores ``MEMORIES_PER_SEED`` memories of one subject with random types, authorities,
scopes, environments, sensitivities, owning agents (none, the caller, another agent),
sessions, tasks, ages, expiries, statuses and exact copies of earlier contents, then runs
``RETRIEVALS_PER_SEED`` random retrievals (intent, session, task, project, repository,
environment, token or item budget) as the caller. After every retrieval:

- the prompt's tokens are the tokenizer's count of the prompt, and within ``max_tokens``;
- every candidate's fate is told exactly once: selected, rejected or merged;
- the trace's selected ids are the package's items, in the same order;
- no item is inactive, expired, restricted, another agent's private memory, outside the
  request's scopes (a ``task:<id>`` scope only in that task) or environment, or below the
  confidence floor;
- no item is another task's state (docs/retrieval.md stage 4: a task's state carries its
  ``task_id`` or its ``task:<id>`` scope; the session's state is given unless it is bound to
  another task than the request's);
- no clarification offers a restricted memory or one below the confidence floor.

Stop 57's audits wrote them as a probe; they are kept as a regression net.
"""

import random
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from memory_core.embeddings import get_embedder
from memory_core.principals import AgentPrincipal, SystemPrincipal
from memory_core.retrieval.pipeline import retrieve
from memory_core.retrieval.types import RetrievalRequest
from memory_core.services.memories import MemoryDraft, memory_store_many
from tests.factories import AgentFactory, SubjectFactory

pytestmark = pytest.mark.django_db

SEEDS = range(3)
MEMORIES_PER_SEED = 120
RETRIEVALS_PER_SEED = 30
USER_ID = "dana"
CONFIDENCE_FLOOR = 0.3  # the default policy's budget.confidence_floor
SHOWN_VIOLATIONS = 20

MEMORY_TYPES = [
    "user_preference",
    "project_constraint",
    "repository_rule",
    "incident",
    "episode",
    "previous_decision",
    "successful_procedure",
    "task_state",
]
# (authority, source type) pairs admission accepts together.
AUTHORITY_SOURCES = [
    ("explicit_user", "user_input"),
    ("explicit_admin", "admin"),
    ("model_inference", "model_inference"),
    ("tool_observation", "verified_tool_output"),
    ("confirmed_system", "admin"),
]
WORDS = (
    "deploy region database migration answers concise verbose pnpm npm tests flaky staging"
    " production atlas-api eu-west-1 us-east-2 login checkout rollback cache"
).split()
SCOPES = [
    ("global", ""),
    ("project", "atlas"),
    ("repo", "atlas-api"),
    ("project", "orbit"),
    ("task", "T2"),
    ("task", "T1"),
]
AGES_DAYS = [0, 1, 10, 100]
# Empty twice: half the memories carry no key.
MEMORY_KEYS = ["", "", "deploy.region", "style.answers", "db.engine"]
CONFIDENCES = [1.0, 0.9, 0.7, 0.5, 0.2]
SENSITIVITIES = ["public", "personal", "sensitive", "restricted"]
MEMORY_ENVIRONMENTS = ["", "", "staging", "production"]
MEMORY_SESSIONS = ["", "S1"]
MEMORY_TASKS = ["", "T1", "T2"]
ENDED_STATUSES = ["superseded", "revoked", "pending_approval"]
COPY_RATE = 0.2  # share of memories repeating an earlier one's content
EXPIRED_RATE = 0.1
ENDED_RATE = 0.1

INTENTS = ["", "apply_project_rules", "resume_task", "find_previous_fix", "load_preferences"]
REQUEST_SESSIONS = ["", "S1"]
REQUEST_TASKS = ["", "T2"]
REQUEST_PROJECTS = ["", "atlas"]
REQUEST_REPOSITORIES = ["", "atlas-api"]
REQUEST_ENVIRONMENTS = ["", "staging", "production"]


def random_words(rng: random.Random, fewest: int, most: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(fewest, most)))


def random_drafts(rng: random.Random, *, subject, agents: list, now) -> list[MemoryDraft]:
    """Return ``MEMORIES_PER_SEED`` random drafts of ``subject``'s memories."""
    drafts: list[MemoryDraft] = []
    for _ in range(MEMORIES_PER_SEED):
        authority, source_type = rng.choice(AUTHORITY_SOURCES)
        scope_kind, scope_ref = rng.choice(SCOPES)
        age = timedelta(days=rng.choice(AGES_DAYS))
        content = random_words(rng, 3, 9)
        if rng.random() < COPY_RATE and drafts:
            content = rng.choice(drafts).content
        fields = {
            "authority": authority,
            "source_type": source_type,
            "source_tool": "ci" if source_type == "verified_tool_output" else "",
            "scope_kind": scope_kind,
            "scope_ref": scope_ref,
            "memory_key": rng.choice(MEMORY_KEYS),
            "confidence": rng.choice(CONFIDENCES),
            "sensitivity": rng.choice(SENSITIVITIES),
            "environment": rng.choice(MEMORY_ENVIRONMENTS),
            "agent_id": rng.choice([None, None, *(agent.id for agent in agents)]),
            "session_id": rng.choice(MEMORY_SESSIONS),
            "task_id": rng.choice(MEMORY_TASKS),
            "created_at": now - age,
            "valid_from": now - age - timedelta(hours=2),
        }
        if rng.random() < EXPIRED_RATE:
            fields["valid_until"] = now - timedelta(hours=1)
        if rng.random() < ENDED_RATE:
            fields["status"] = rng.choice(ENDED_STATUSES)
        drafts.append(
            MemoryDraft(
                subject=subject, memory_type=rng.choice(MEMORY_TYPES), content=content, **fields
            )
        )
    return drafts


def random_request(rng: random.Random) -> RetrievalRequest:
    """Return a random retrieval of ``USER_ID``'s memories."""
    query = random_words(rng, 1, 6)
    budget = rng.choice(
        [None, {"max_tokens": rng.randint(16, 600)}, {"max_items": rng.randint(1, 10)}]
    )
    return RetrievalRequest(
        query=query,
        user_id=USER_ID,
        intent=rng.choice(INTENTS),
        session_id=rng.choice(REQUEST_SESSIONS),
        task_id=rng.choice(REQUEST_TASKS),
        project_id=rng.choice(REQUEST_PROJECTS),
        repository_id=rng.choice(REQUEST_REPOSITORIES),
        environment=rng.choice(REQUEST_ENVIRONMENTS),
        budget_overrides=budget,
    )


def allowed_scopes(request: RetrievalRequest) -> set[tuple[str, str]]:
    """Return the (kind, ref) scopes ``request`` may read (a subject's ``user:`` scope is
    never generated here)."""
    scopes = {("global", "")}
    for kind, ref in (
        ("project", request.project_id),
        ("repo", request.repository_id),
        ("task", request.task_id),
    ):
        if ref:
            scopes.add((kind, ref))
    return scopes


# Each invariant below returns the messages of its violations by one retrieval, empty if none.


def token_count_violations(result, request, count_tokens) -> list[str]:
    """The prompt's tokens are the tokenizer's count, within the budget's ``max_tokens``."""
    max_tokens = result.trace["tokens"]["max_tokens"]
    counted = count_tokens(result.prompt)
    if result.prompt_tokens == counted and result.prompt_tokens <= max_tokens:
        return []
    return [
        f"prompt tokens: reported {result.prompt_tokens}, counted {counted},"
        f" max_tokens {max_tokens} ({request})"
    ]


def candidate_fate_violations(result, request) -> list[str]:
    """Every candidate is selected, rejected or merged: exactly one of them, once."""
    trace = result.trace
    fates = Counter(rejection["id"] for rejection in trace["rejections"])
    fates.update(merge["merged"] for merge in trace["dedup_merges"])
    fates.update(item.id for item in result.items)
    return [
        f"candidate {candidate['id']} has {fates[candidate['id']]} fates, not 1 ({request})"
        for candidate in trace["candidates"]
        if fates[candidate["id"]] != 1
    ]


def selected_order_violations(result, request) -> list[str]:
    """The trace's selected ids are the package's items, in its order."""
    traced = [selected["id"] for selected in result.trace["selected"]]
    packaged = [item.id for item in result.items]
    if traced == packaged:
        return []
    return [f"trace selected {traced}, package holds {packaged} ({request})"]


def forbidden_reasons(row, request, *, caller_id, now) -> list[str]:
    """Return why ``row`` may not be in ``request``'s package, empty if it may."""
    reasons = []
    if row.status != "active":
        reasons.append(f"status {row.status}")
    if row.valid_until and row.valid_until <= now:
        reasons.append("expired")
    if row.sensitivity == "restricted":
        reasons.append("restricted")
    if row.agent_id not in (None, caller_id):
        reasons.append("another agent's private memory")
    if (row.scope_kind, row.scope_ref) not in allowed_scopes(request):
        reasons.append(f"scope {row.scope_kind}:{row.scope_ref} not allowed")
    if row.environment not in ("", request.environment):
        reasons.append(f"environment {row.environment!r}, request {request.environment!r}")
    if row.confidence < CONFIDENCE_FLOOR:
        reasons.append(f"confidence {row.confidence} below the floor")
    return reasons


def forbidden_item_violations(result, request, *, rows, caller_id, now) -> list[str]:
    """No item is one the caller may not be given."""
    violations = []
    for item in result.items:
        reasons = forbidden_reasons(rows[item.id], request, caller_id=caller_id, now=now)
        if reasons:
            violations.append(f"forbidden item {item.id}: {', '.join(reasons)} ({request})")
    return violations


def is_other_tasks_state(row, request) -> bool:
    """Return whether ``row`` is task state of a task other than ``request``'s.

    A task's state carries its ``task_id`` or its ``task:<id>`` scope (docs/retrieval.md,
    stage 4, since stop 57); state carrying no task is the session's. A request naming no
    task has no other task: the session's state is its state, whichever task wrote it.
    """
    if row.memory_type != "task_state" or not request.task_id:
        return False
    this_tasks = row.task_id == request.task_id or (row.scope_kind, row.scope_ref) == (
        "task",
        request.task_id,
    )
    return not this_tasks and row.task_id != ""


def other_task_state_violations(result, request, *, rows) -> list[str]:
    """No item is another task's state."""
    return [
        f"item {item.id} is task {rows[item.id].task_id!r}'s state"
        f" (scope {rows[item.id].scope_kind}:{rows[item.id].scope_ref}) ({request})"
        for item in result.items
        if is_other_tasks_state(rows[item.id], request)
    ]


def clarification_violations(result, request, *, rows) -> list[str]:
    """No clarification offers a restricted memory or one below the confidence floor."""
    return [
        f"clarification offers {candidate.id}: sensitivity {rows[candidate.id].sensitivity},"
        f" confidence {rows[candidate.id].confidence} ({request})"
        for clarification in result.clarifications
        for candidate in clarification.candidates
        if rows[candidate.id].sensitivity == "restricted"
        or rows[candidate.id].confidence < CONFIDENCE_FLOOR
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_retrievals_keep_the_package_and_trace_invariants(tenant, agent, seed):
    rng = random.Random(seed)
    subject = SubjectFactory(tenant=tenant, external_id=USER_ID)
    other_agent = AgentFactory(tenant=tenant)
    now = timezone.now()
    drafts = random_drafts(rng, subject=subject, agents=[agent, other_agent], now=now)
    stored = memory_store_many(drafts=drafts, principal=SystemPrincipal(tenant_id=tenant.id))
    rows = {str(row.id): row for row in stored}
    caller = AgentPrincipal.from_agent(agent)
    count_tokens = get_embedder().count_tokens

    violations: list[str] = []
    for _ in range(RETRIEVALS_PER_SEED):
        request = random_request(rng)
        result = retrieve(principal=caller, request=request)
        violations += token_count_violations(result, request, count_tokens)
        violations += candidate_fate_violations(result, request)
        violations += selected_order_violations(result, request)
        violations += forbidden_item_violations(
            result, request, rows=rows, caller_id=agent.id, now=now
        )
        violations += other_task_state_violations(result, request, rows=rows)
        violations += clarification_violations(result, request, rows=rows)

    assert not violations, f"{len(violations)} violations, the first:\n" + "\n".join(
        violations[:SHOWN_VIOLATIONS]
    )
