"""Random sequences of writes, corrections, reviews and revokes: the supersession chains and
their conflicts stay whole after every step.

Each seed runs ``STEPS_PER_SEED`` random steps by two agents of one tenant, writing through
the API with three source types (user input, verified tool output, model inference; some
contents sensitive, so held for review): single writes, batches, corrections (supersede),
a reviewer's approvals and rejections of sensitive writes, and revokes. Every write and batch
is replayed with its idempotency key and must answer as the first time; no step may answer
500. After every step:

- a successor's version is its predecessor's + 1, and they share one chain identity
  (subject, key, type, scope, environment);
- a predecessor with a successor that is not pending (or rejected) is superseded;
- each superseded row has exactly one successor that is not pending (or rejected);
- a chain identity with two or more active heads has an open conflict item citing them all.

Stop 57's audits wrote them as a probe; they are kept as a regression net.
"""

import random
from collections import defaultdict

import pytest
from django.contrib.auth import get_user_model

from memory_core.exceptions import DomainError
from memory_core.models import Memory, PortalMembership, ReviewItem, Status
from memory_core.principals import ReviewerPrincipal
from memory_core.services.reviews import review_approve, review_reject
from tests.clients import client_for
from tests.factories import AgentFactory, approve_workflow_consent

pytestmark = pytest.mark.django_db

SEEDS = range(2)
STEPS_PER_SEED = 40
AGENTS = 2
LARGEST_BATCH = 5
APPROVE_RATE = 0.8  # of reviews; the rest reject
SHOWN_STEPS = 10

MEMORIES_URL = "/api/v1/memories"
BATCH_URL = "/api/v1/memories/batch"
SOURCES = [
    {"type": "user_input", "conversation_id": "c", "message_id": "m"},
    {"type": "verified_tool_output", "conversation_id": "c", "message_id": "m", "tool": "crm"},
    {"type": "model_inference", "conversation_id": "c", "message_id": "m"},
]
CONTENTS = [
    "User prefers option {n}.",
    "User prefers option {n}; noted after a diabetes checkup.",  # sensitive: held for review
]
SUBJECTS = ["u1", "u2"]
MEMORY_TYPES = ["user_preference", "project_constraint"]
MEMORY_KEYS = ["k.a", "k.b", ""]
SCOPES = ["global", "project:x"]
STAGING_RATE = 0.2

# The answers a step may give; anything else (a 500 above all) fails the step.
WRITE_STATUSES = (201, 202, 422)
CORRECT_STATUSES = (201, 202, 409, 422)
REVOKE_STATUSES = (200, 409)
# Pending or rejected successors do not end their predecessor.
NOT_ENDING = ("pending_approval", "rejected")


@pytest.fixture
def reviewer(tenant) -> ReviewerPrincipal:
    """A portal reviewer of ``tenant``, as the services see one."""
    user = get_user_model().objects.create_user("reviewer", password="pw-rev-12345")
    PortalMembership.objects.create(user=user, tenant=tenant, role="reviewer")
    return ReviewerPrincipal(tenant_id=tenant.id, user_id=user.id)


def random_item(rng: random.Random, label) -> dict:
    """Return a random write body, its content numbered ``label``."""
    body = {
        "subject": rng.choice(SUBJECTS),
        "memory_type": rng.choice(MEMORY_TYPES),
        "memory_key": rng.choice(MEMORY_KEYS),
        "scope": rng.choice(SCOPES),
        "content": rng.choice(CONTENTS).format(n=label),
        "source": rng.choice(SOURCES),
    }
    if rng.random() < STAGING_RATE:
        body["environment"] = "staging"
    return body


def chain_identity(memory: Memory) -> tuple:
    """Return what every version of one chain shares."""
    return (
        memory.subject_id,
        memory.memory_key,
        memory.memory_type,
        memory.scope_kind,
        memory.scope_ref,
        memory.environment,
    )


# The steps: each acts, asserts its own answers, and returns what it did for the log.


def step_write(rng, *, client, step, **_) -> str:
    """Write one memory, then replay it with the same idempotency key."""
    body = random_item(rng, step)
    first = client.post(MEMORIES_URL, body, format="json", HTTP_IDEMPOTENCY_KEY=f"k{step}")
    assert first.status_code in WRITE_STATUSES, first.content[:400]
    replay = client.post(MEMORIES_URL, body, format="json", HTTP_IDEMPOTENCY_KEY=f"k{step}")
    assert (replay.status_code, replay.json()) == (first.status_code, first.json()), (
        "an idempotent replay of a write answered differently from the first time"
    )
    return f"write {body} -> {first.status_code} {first.json().get('rule_codes')}"


def step_batch(rng, *, client, step, **_) -> str:
    """Write a batch, then replay it with the same idempotency key."""
    body = {
        "items": [random_item(rng, f"{step}.{i}") for i in range(rng.randint(1, LARGEST_BATCH))]
    }
    first = client.post(BATCH_URL, body, format="json", HTTP_IDEMPOTENCY_KEY=f"k{step}")
    assert first.status_code == 200, first.content[:400]
    replay = client.post(BATCH_URL, body, format="json", HTTP_IDEMPOTENCY_KEY=f"k{step}")
    assert (replay.status_code, replay.json()) == (first.status_code, first.json()), (
        "an idempotent replay of a batch answered differently from the first time"
    )
    return f"batch {body} -> {[result['rule_codes'] for result in first.json()['results']]}"


def step_correct(rng, *, client, step, tenant, **_) -> str:
    """Correct (supersede) a random active memory."""
    active = list(Memory.objects.filter(tenant=tenant, status=Status.ACTIVE))
    if not active:
        return "correct: nothing active"
    target = rng.choice(active)
    body = {"content": rng.choice(CONTENTS).format(n=step), "source": rng.choice(SOURCES)}
    answer = client.post(f"{MEMORIES_URL}/{target.id}/supersede", body, format="json")
    assert answer.status_code in CORRECT_STATUSES, answer.content[:400]
    return f"correct {target.id} with {body} -> {answer.status_code}"


def step_review(rng, *, tenant, reviewer, **_) -> str:
    """Approve or reject a random open review of a sensitive write."""
    items = list(ReviewItem.objects.filter(tenant=tenant, state="open", kind="sensitive_write"))
    if not items:
        return "review: nothing open"
    item = rng.choice(items)
    if rng.random() >= APPROVE_RATE:
        review_reject(principal=reviewer, item_id=item.id, reason="no")
        return f"reject {item.memory_id}"
    try:
        review_approve(principal=reviewer, item_id=item.id, reason="ok")
    except DomainError as refusal:  # an approval may be refused (its memory ended meanwhile)
        return f"approve {item.memory_id} refused: {refusal!r}"
    return f"approve {item.memory_id}"


def step_revoke(rng, *, client, tenant, **_) -> str:
    """Revoke a random active or pending memory."""
    live = list(
        Memory.objects.filter(tenant=tenant, status__in=[Status.ACTIVE, "pending_approval"])
    )
    if not live:
        return "revoke: nothing live"
    target = rng.choice(live)
    answer = client.post(f"{MEMORIES_URL}/{target.id}/revoke", {}, format="json")
    assert answer.status_code in REVOKE_STATUSES, answer.content[:400]
    return f"revoke {target.id} -> {answer.status_code}"


# (cumulative probability bound, step): a draw below the bound runs the step.
STEPS = [(0.4, step_write), (0.55, step_batch), (0.75, step_correct), (0.9, step_review)]
LAST_STEP = step_revoke


def pick_step(rng: random.Random):
    draw = rng.random()
    return next((step for bound, step in STEPS if draw < bound), LAST_STEP)


# Each invariant below returns the messages of its violations, empty if none.


def successor_violations(rows: list[Memory]) -> list[str]:
    """A successor is its predecessor's version + 1 in the same chain identity, and a
    successor that is not pending (or rejected) has a superseded predecessor."""
    by_id = {row.id: row for row in rows}
    violations = []
    for row in rows:
        if not row.supersedes_id:
            continue
        predecessor = by_id[row.supersedes_id]
        if row.version != predecessor.version + 1:
            violations.append(
                f"version: {row.id} is v{row.version}, its predecessor v{predecessor.version}"
            )
        if chain_identity(row) != chain_identity(predecessor):
            violations.append(f"chain identity: {row.id} differs from its predecessor's")
        if row.status not in NOT_ENDING and predecessor.status != Status.SUPERSEDED:
            violations.append(
                f"predecessor not superseded: {row.id} is {row.status},"
                f" its predecessor {predecessor.status}"
            )
    return violations


def superseded_successor_violations(rows: list[Memory]) -> list[str]:
    """Each superseded row has exactly one successor that is not pending (or rejected)."""
    successors = defaultdict(int)
    for row in rows:
        if row.supersedes_id and row.status not in NOT_ENDING:
            successors[row.supersedes_id] += 1
    return [
        f"superseded without one successor: {row.id} has {successors[row.id]}"
        for row in rows
        if row.status == Status.SUPERSEDED and successors[row.id] != 1
    ]


def unflagged_heads_violations(rows: list[Memory], tenant) -> list[str]:
    """A chain identity with two or more active heads has an open conflict citing them all."""
    heads = defaultdict(list)
    for row in rows:
        if row.status == Status.ACTIVE and row.memory_key:
            heads[chain_identity(row)].append(row)
    cited = [
        {str(candidate) for candidate in conflict.candidate_ids}
        for conflict in ReviewItem.objects.filter(tenant=tenant, kind="conflict", state="open")
    ]
    violations = []
    for identity, rivals in heads.items():
        ids = {str(row.id) for row in rivals}
        if len(rivals) > 1 and not any(ids <= held for held in cited):
            described = [(row.content, row.authority) for row in rivals]
            violations.append(f"active heads without an open conflict: {identity} {described}")
    return violations


def chain_violations(tenant) -> list[str]:
    rows = list(Memory.objects.filter(tenant=tenant))
    return (
        successor_violations(rows)
        + superseded_successor_violations(rows)
        + unflagged_heads_violations(rows, tenant)
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_random_write_sequences_keep_chains_whole(tenant, reviewer, seed):
    approve_workflow_consent(tenant, "user_preference")
    rng = random.Random(seed)
    clients = [client_for(AgentFactory(tenant=tenant)) for _ in range(AGENTS)]
    log: list[str] = []
    for step in range(STEPS_PER_SEED):
        client = rng.choice(clients)
        run = pick_step(rng)
        log.append(
            f"{step}: " + run(rng, client=client, step=step, tenant=tenant, reviewer=reviewer)
        )
        violations = chain_violations(tenant)
        assert not violations, "\n".join(
            [*violations, f"after the last of these steps (of seed {seed}):", *log[-SHOWN_STEPS:]]
        )
