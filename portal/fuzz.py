"""Generated portal testing: random form posts and query strings, as an end user and a reviewer.

``fuzz_api`` covers the agents' API from its OpenAPI schema; the portal has no schema, so
this sends what a browser could: every page and form of the portal, and the reviewer API
that takes the same session (``/api/v1/review/...``; an agent key only gets 403 there), with
bodies and query strings drawn from valid values, junk (empty, blank, NUL, very long,
markup, SQL, unicode, numbers where text goes, unknown fields, JSON that is not an object or
not JSON) and ids from four pools: the caller's own rows,
another subject's of the same tenant, another tenant's, and ids of nothing. A planted world
(``plant``) gives both tenants an ``alice`` (the same external id), memories, a pending
sensitive write, an open conflict and deletion operations; tenant A also has ``bob``.

Each response is checked for:

- no 5xx;
- no foreign row shown: a GET naming another subject's or tenant's id never answers 200,
  and no page ever holds a canary planted in the content of rows the caller may not see
  (bob's and tenant B's for alice; tenant B's for A's reviewer);
- no foreign row changed: after every request a digest of those rows (status, content,
  review state, deletion state) must be what it was;
- CSRF: every request carries the session's token as a browser's would (a form field, or the
  reviewer API's ``X-CSRFToken`` header), through clients that enforce the check; one POST in
  ten is forged instead (no token, or one that is not the session's) and must be answered 403
  and change nothing, the caller's own rows included.

``fuzz_run`` is used by the test suite (a few hundred requests) and by
``manage.py fuzz_portal`` (thousands). Requests run as in production: no tenant and no
platform mode until the portal sets the login's tenant.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection
from django.test import Client, override_settings
from django.urls import reverse

from memory_core.models import Authority, MemoryClass, MemoryType, ScopeKind
from memory_core.rls import PLATFORM_SETTING, TENANT_SETTING

OWN, SIBLING, FOREIGN, NOWHERE = "own", "sibling", "foreign", "nowhere"


@dataclass(frozen=True)
class Route:
    """A portal URL, the role that may use it, and the fields of its body or query."""

    role: str  # "end_user" or "reviewer"
    method: str
    name: str
    id_kind: str = ""  # "memory", "item", "operation": the URL's id
    fields: tuple[str, ...] = ()
    weight: int = 10
    json: bool = False  # the reviewer API: a JSON body (sometimes not JSON, or not an object)


ROUTES = [
    Route("end_user", "GET", "portal:home", fields=("q", "memory_class", "memory_type",
          "authority", "scope_kind", "page")),
    Route("end_user", "GET", "portal:memory", "memory"),
    Route("end_user", "GET", "portal:memory-correct", "memory"),
    Route("end_user", "POST", "portal:memory-correct", "memory", ("content", "reason")),
    Route("end_user", "POST", "portal:memory-confirm", "memory"),
    Route("end_user", "GET", "portal:memory-revoke", "memory"),
    Route("end_user", "POST", "portal:memory-revoke", "memory", ("reason",)),
    Route("end_user", "GET", "portal:memory-withdraw", "memory"),
    Route("end_user", "POST", "portal:memory-withdraw", "memory"),
    Route("end_user", "GET", "portal:memory-delete", "memory"),
    Route("end_user", "POST", "portal:memory-delete", "memory", ("confirm",), weight=4),
    Route("end_user", "GET", "portal:delete-everything"),
    # Rare: once it succeeds, alice has nothing left to act on.
    Route("end_user", "POST", "portal:delete-everything", fields=("confirm",), weight=1),
    Route("end_user", "GET", "portal:deletions", fields=("page",)),
    Route("end_user", "GET", "portal:deletion", "operation"),
    Route("end_user", "GET", "portal:deletion-status", "operation"),
    Route("end_user", "GET", "portal:export"),
    Route("end_user", "POST", "portal:export", weight=2),
    Route("reviewer", "GET", "portal:review:queue", fields=("page",)),
    Route("reviewer", "POST", "portal:review:approve", "item", ("reason",)),
    Route("reviewer", "POST", "portal:review:reject", "item", ("reason",)),
    Route("reviewer", "GET", "portal:review:conflicts", fields=("page",)),
    Route("reviewer", "POST", "portal:review:resolve", "item",
          ("outcome", "winner_id", "reason")),
    Route("reviewer", "GET", "portal:review:rejected", fields=("page",)),
    Route("reviewer", "GET", "portal:review:deletions", fields=("page",)),
    Route("reviewer", "POST", "portal:review:deletion-retry", "operation"),
    Route("reviewer", "GET", "portal:review:health", fields=("days",)),
    # The reviewer API takes the same portal session (fuzz_api's agent keys only get 403).
    Route("reviewer", "GET", "api:review-items", fields=("state", "kind", "limit", "offset")),
    Route("reviewer", "GET", "api:review-item", "item"),
    Route("reviewer", "POST", "api:review-approve", "item", ("reason",), json=True),
    Route("reviewer", "POST", "api:review-reject", "item", ("reason",), json=True),
]  # fmt: skip

CHOICES = {
    "memory_class": [value for value, _ in MemoryClass.choices],
    "memory_type": [value for value, _ in MemoryType.choices],
    "authority": [value for value, _ in Authority.choices],
    "scope_kind": [value for value, _ in ScopeKind.choices],
    "outcome": ["choose_winner", "keep_both_scoped", "ask_user"],
    "state": ["open", "approved", "rejected", "resolved"],
    "kind": ["sensitive_write", "conflict"],
}
JUNK = [
    "",
    " ",
    "\t\n",
    "\x00",
    "a\x00b",
    "x" * 5000,
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "%00",
    "../../etc/passwd",
    "\u202eevil",
    "é" * 300,
    "💥" * 100,
    "-1",
    "0",
    "99999999999999999999999999",
    "1e400",
    "NaN",
    "null",
    "[]",
    "{}",
    "true",
]
NUMBERS = ["1", "2", "7", "14", "30", "-5", "0", "10000000", "abc", "1.5", ""]
# The share of POSTs sent as a forged cross-site request would be: without the session's CSRF
# token, or with a token of the right shape that is not the session's.
FORGED_SHARE = 0.1
NOT_THE_SESSIONS_TOKEN = "x" * 64


@dataclass
class PortalWorld:
    """What ``plant`` made: logins, id pools and the rows each role must never see."""

    end_user: object
    reviewer: object
    ids: dict[str, dict[str, list[str]]]  # pool -> kind -> ids
    canaries: dict[str, str]  # "sibling" / "foreign" -> text planted in those rows
    tenant_a: object
    tenant_b: object
    bob: object


@dataclass
class PortalFuzzReport:
    requests: int = 0
    routes: int = 0
    statuses: Counter = field(default_factory=Counter)
    by_route: Counter = field(default_factory=Counter)
    server_errors: list = field(default_factory=list)
    foreign_shown: list = field(default_factory=list)
    foreign_changed: list = field(default_factory=list)
    foreign_id_requests: int = 0
    forged_posts: int = 0
    forged_not_refused: list = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "requests": self.requests,
            "routes": self.routes,
            "routes_reached": len(self.by_route),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "server_errors": len(self.server_errors),
            "foreign_rows_shown": len(self.foreign_shown),
            "foreign_rows_changed": len(self.foreign_changed),
            "foreign_id_requests": self.foreign_id_requests,
            "forged_posts": self.forged_posts,
            "forged_posts_not_refused": len(self.forged_not_refused),
            "seconds": round(self.seconds, 1),
            "examples": {
                "server_errors": self.server_errors[:5],
                "foreign_rows_shown": self.foreign_shown[:5],
                "foreign_rows_changed": self.foreign_changed[:5],
                "forged_posts_not_refused": self.forged_not_refused[:5],
            },
        }


def fuzz_run(*, world: PortalWorld, requests: int, rng_seed: int = 7) -> PortalFuzzReport:
    """Send ``requests`` generated requests through the portal and check each.

    Must run inside a transaction the caller rolls back (the test's, or the command's).
    """
    # Like Django's test client in a test, keep the connection (and the caller's
    # transaction) across requests; the request signals would otherwise close it.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="fuzz-portal-") as exports,
            override_settings(ALLOWED_HOSTS=["testserver"], MEMLEDGER_EXPORT_DIR=exports),
        ):
            return _fuzz(world=world, requests=requests, rng_seed=rng_seed)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _fuzz(*, world: PortalWorld, requests: int, rng_seed: int) -> PortalFuzzReport:
    rng = random.Random(rng_seed)
    clients = {}
    for role, user in (("end_user", world.end_user), ("reviewer", world.reviewer)):
        # A 500 is a finding; the CSRF check runs as it does for a browser.
        clients[role] = Client(enforce_csrf_checks=True, raise_request_exception=False)
        clients[role].force_login(user)
    guarded = {"sibling": _digest(world, subject=world.bob), "foreign": _digest(world)}
    report = PortalFuzzReport(routes=len(ROUTES))
    weights = [route.weight for route in ROUTES]
    started = time.monotonic()
    for _ in range(requests):
        route = rng.choices(ROUTES, weights)[0]
        pool, url = _url(route, world, rng)
        data = _data(route, world, rng)
        client = clients[route.role]
        forged = route.method == "POST" and rng.random() < FORGED_SHARE
        if forged:
            token = rng.choice(["", NOT_THE_SESSIONS_TOKEN])
            before = _digest(world, tenant=world.tenant_a)
        elif route.method == "POST":
            token = _csrf_token(client)
        _as_a_request()
        if route.method == "GET":
            response = client.get(url, data)
        elif route.json:
            body = _json_body(data, rng)
            headers = {"X-CSRFToken": token} if token else {}
            response = client.post(url, body, content_type="application/json", headers=headers)
        else:
            response = client.post(url, data | ({"csrfmiddlewaretoken": token} if token else {}))
        _as_platform()
        if forged:
            report.forged_posts += 1
            if response.status_code != 403 or _digest(world, tenant=world.tenant_a) != before:
                report.forged_not_refused.append(
                    {"route": f"POST {route.name}", "status": response.status_code}
                )
        report.requests += 1
        report.statuses[response.status_code] += 1
        report.by_route[f"{route.method} {route.name}"] += 1
        label = {"route": f"{route.method} {route.name}", "role": route.role, "pool": pool}
        _check(report, route, pool, response, world, guarded, label | {"data": _short(data)})
    report.seconds = time.monotonic() - started
    return report


def _csrf_token(client: Client) -> str:
    """The session's CSRF token, as the page a browser posts from holds it (every portal page
    has the log-out form: opening one sets the cookie)."""
    if "csrftoken" not in client.cookies:
        _as_a_request()
        client.get(reverse("portal:home"), follow=True)
        _as_platform()
    return client.cookies["csrftoken"].value


def _check(report, route, pool, response, world, guarded, label) -> None:
    status = response.status_code
    body = b"".join(response) if response.streaming else response.content
    text = body.decode("utf-8", "replace")
    if status >= 500:
        report.server_errors.append(label | {"status": status, "body": text[:300]})
    hidden = ["foreign"] if route.role == "reviewer" else ["sibling", "foreign"]
    if pool in (SIBLING, FOREIGN):
        report.foreign_id_requests += 1
        if (
            route.method == "GET"
            and status == 200
            and (pool, route.role)
            != (
                SIBLING,
                "reviewer",
            )
        ):
            report.foreign_shown.append(label | {"status": status, "why": "200 for its id"})
    for which in hidden:
        if world.canaries[which] in text:
            report.foreign_shown.append(label | {"status": status, "why": f"{which} canary"})
    for which in hidden:
        now = _digest(world, subject=world.bob) if which == "sibling" else _digest(world)
        if now != guarded[which]:
            report.foreign_changed.append(label | {"status": status, "rows": which})
            guarded[which] = now
    if route.role == "reviewer":
        guarded["sibling"] = _digest(world, subject=world.bob)  # a reviewer may act on bob


def _url(route: Route, world: PortalWorld, rng: random.Random) -> tuple[str, str]:
    if not route.id_kind:
        return OWN, reverse(route.name)
    roll = rng.random()
    pool = OWN if roll < 0.5 else SIBLING if roll < 0.7 else FOREIGN if roll < 0.9 else NOWHERE
    ids = world.ids.get(pool, {}).get(route.id_kind) or []
    if pool == NOWHERE or not ids:
        pool, value = NOWHERE, str(uuid.uuid4())
    else:
        value = rng.choice(ids)
    return pool, reverse(route.name, args=[value])


def _data(route: Route, world: PortalWorld, rng: random.Random) -> dict:
    data = {}
    for name in route.fields:
        if rng.random() < 0.15:
            continue  # left out
        data[name] = _value(name, world, rng)
    if rng.random() < 0.1:
        data[rng.choice(["extra", "tenant", "subject", "id", "page", "csrfmiddlewaretoken"])] = (
            rng.choice(JUNK)
        )
    return data


def _value(name: str, world: PortalWorld, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(JUNK)
    if name in CHOICES:
        return rng.choice(CHOICES[name])
    if name in ("page", "days", "limit", "offset"):
        return rng.choice(NUMBERS)
    if name == "confirm":
        return rng.choice(["on", "on", "true", "1", "off", ""])
    if name == "winner_id":
        pool = rng.choice([OWN, SIBLING, FOREIGN])
        ids = world.ids.get(pool, {}).get("memory") or [str(uuid.uuid4())]
        return rng.choice(ids + ["not-a-uuid"])
    words = ["The", "user", "prefers", "tea", "Python", "deploys", "on", "Fridays", "."]
    return " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))


def _json_body(data: dict, rng: random.Random) -> str:
    """``data`` as JSON, or now and then what a broken client sends instead."""
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(["", "{", "[1, 2]", '"reason"', "null", '{"reason": NaN}'])
    if roll < 0.1:
        return json.dumps({"reason": {"nested": [rng.choice(JUNK)]}})
    return json.dumps(data)


def _short(data: dict) -> dict:
    return {key: (value[:60] + "…" if len(value) > 60 else value) for key, value in data.items()}


def _set(tenant: str, platform: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config(%s, %s, true), set_config(%s, %s, true)",
            [TENANT_SETTING, tenant, PLATFORM_SETTING, platform],
        )


def _as_a_request() -> None:
    """A request starts with no tenant and without platform mode, as in production."""
    _set("", "off")


def _as_platform() -> None:
    _set("", "on")


_DIGEST = """
    SELECT md5(coalesce(string_agg(row, ',' ORDER BY row), '')) FROM (
        SELECT concat_ws('|', id, status, md5(content), updated_at, value::text) AS row
        FROM memory_core_memory WHERE tenant_id = %(tenant)s {subject}
        UNION ALL
        SELECT concat_ws('|', id, state, resolution, candidate_ids::text, reason)
        FROM memory_core_reviewitem WHERE tenant_id = %(tenant)s {subject}
        UNION ALL
        SELECT concat_ws('|', id, status, attempts)
        FROM memory_core_deletionoperation WHERE tenant_id = %(tenant)s {subject}
        UNION ALL
        SELECT concat_ws('|', id, display_name) FROM memory_core_subject
        WHERE tenant_id = %(tenant)s {subject_row}
    ) AS rows
"""


def _digest(world: PortalWorld, *, subject=None, tenant=None) -> str:
    """A digest of the rows one role must never change: tenant B's, or bob's; or
    ``tenant``'s, all of them, which a forged request must leave as they were."""
    if subject is None:
        params = {"tenant": (tenant or world.tenant_b).pk}
        sql = _DIGEST.format(subject="", subject_row="")
    else:
        params = {"tenant": world.tenant_a.pk, "subject": subject.pk}
        sql = _DIGEST.format(
            subject="AND subject_id = %(subject)s", subject_row="AND id = %(subject)s"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def plant(*, prefix: str) -> PortalWorld:
    """Make tenants A and B (each with an ``alice``; A also has ``bob``) with memories, a
    pending sensitive write, an open conflict and a deletion each; an end-user login for A's
    alice and a reviewer login for A. Call in platform mode."""
    from django.contrib.auth import get_user_model

    from memory_core.deletion.services import deletion_request
    from memory_core.models import PortalMembership, Subject
    from memory_core.principals import SystemPrincipal
    from memory_core.services.api_keys import agent_ensure
    from memory_core.services.writes import memory_write

    canaries = {"sibling": f"SIBLING{uuid.uuid4().hex[:10]}"}
    canaries["foreign"] = f"FOREIGN{uuid.uuid4().hex[:10]}"
    ids: dict[str, dict[str, list[str]]] = {OWN: {}, SIBLING: {}, FOREIGN: {}}
    tenants, subjects = {}, {}
    for side, people in (("a", [("alice", OWN), ("bob", SIBLING)]), ("b", [("alice", FOREIGN)])):
        tenant = agent_ensure(tenant_slug=f"{prefix}-{side}", agent_name="fuzz-plant").tenant
        tenants[side] = tenant
        system = SystemPrincipal(tenant_id=tenant.pk, name="fuzz-plant")
        for user, pool in people:
            subjects[side, user] = Subject.objects.get_or_create(tenant=tenant, external_id=user)[0]
            marker = canaries.get(pool, "own words")
            written = [
                memory_write(principal=system, data=_body(user, **body, marker=marker))
                for body in _BODIES
            ]
            memories = [w.memory for w in written if w.memory is not None]
            items = [w.review_item for w in written if w.review_item is not None]
            operation = deletion_request(principal=system, memory_id=memories[-1].pk)
            ids[pool] = {
                "memory": [str(m.pk) for m in memories],
                "item": [str(i.pk) for i in items],
                "operation": [str(operation.pk)],
            }
    # A reviewer of tenant A may act on every subject of A: bob's items are its own.
    ids[OWN]["item"] += ids[SIBLING].pop("item")
    users = get_user_model().objects
    end_user = users.create_user(f"{prefix}-alice", password=None)
    PortalMembership.objects.create(
        user=end_user, tenant=tenants["a"], role="end_user", subject=subjects["a", "alice"]
    )
    reviewer = users.create_user(f"{prefix}-reviewer", password=None)
    PortalMembership.objects.create(user=reviewer, tenant=tenants["a"], role="reviewer")
    return PortalWorld(
        end_user=end_user,
        reviewer=reviewer,
        ids=ids,
        canaries=canaries,
        tenant_a=tenants["a"],
        tenant_b=tenants["b"],
        bob=subjects["a", "bob"],
    )


# What each planted subject has: preferences, an inferred rival on a high-impact key (an
# open conflict), a sensitive write (pending), and a memory the plant deletes.
_BODIES = [
    {"memory_type": "user_preference", "memory_key": "pref.tone", "content": "Likes short answers"},
    {"memory_type": "project_constraint", "memory_key": "deploy.region", "scope": "project:lunest",
     "content": "Deploys go to eu-west-1"},
    {"memory_type": "project_constraint", "memory_key": "deploy.region", "scope": "project:lunest",
     "content": "Deploys go to us-east-1", "source_type": "model_inference"},
    {"memory_type": "user_preference", "memory_key": "health.notes",
     "content": "Has asthma; prefers meetings before noon"},
    {"memory_type": "user_preference", "memory_key": "pref.editor", "content": "Uses vim"},
]  # fmt: skip


def _body(user, *, memory_type, memory_key, content, marker, scope="global",
          source_type="user_input") -> dict:  # fmt: skip
    return {
        "subject": user,
        "memory_type": memory_type,
        "memory_key": memory_key,
        "scope": scope,
        "content": f"{content} ({marker}).",
        "source": {"type": source_type, "conversation_id": "c-fuzz", "message_id": "m-1"},
    }
