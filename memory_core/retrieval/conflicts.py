"""Stage 8: conflicts by memory_key. Decide a winner by rule, or hand the conflict back.

A group is the candidates sharing a non-empty memory_key (after dedup, so they say different
things). Rules, in order (DESIGN.md, "Read path" 8):

1. revoked and expired rows are already gone (stages 4 and 5);
2. ``authority_class``: explicit (user, admin) beats confirmed (system, tool observation),
   which beats model inference; lower classes drop out of the group;
3. ``narrower_scope``: among what remains, a unique narrowest scope wins (task > repo >
   project > user > global); all remaining rows apply to this request, or stage 5 had
   removed them;
3b. ``environment_specific``: among the narrowest, rows tied to an environment beat rows
   that apply in every one (stage 4 kept only the active environment's), and a unique such
   row wins: what holds in staging is more specific than what holds everywhere;
3c. ``higher_authority``: if every remaining row is explicit or confirmed, a unique row of
   the highest rank wins (admin over user, system over tool observation: the write path's
   order, where the lower one is a separate, non-winning chain sent to review);
4. ``newer_confirmed``: otherwise, among those of that rank, the newest wins; but a winner
   by rules 2-4 whose confidence and its strongest rival's are both below
   ``conflict_min_confidence`` (0.8) does not win: the memory is ambiguous (the seed's
   ``choose_winner``). Its rivals are the rows at its place (``at_place``: its scope and
   environment), not those a rule left out that hold at another place (a broader scope,
   every environment; or a narrower one the winner's authority class outranks), which a
   reviewer's choice would revoke there. A weak winner with no rival at its place wins;
   until stop 49 every other row made it ambiguous, was a candidate of its clarification,
   and was revoked where it held when a reviewer chose the winner;
5. otherwise the group is unresolved. A high-impact group (``policy.is_high_impact``) yields a
   clarification and no winner; a low-impact one keeps the best-scored of the rows it is
   undecided between (``best_score_low_impact``), and the rows the rules outranked lose by
   their rule.

A clarification's candidates (and so its review item's, which a reviewer's winner is chosen
among and every other of is revoked) are the rows the group is undecided between
(``contested``): the tie rules 2-3b left standing, not the rows they outranked; for a winner
not sure enough, it and its rivals at its place. A key's rule
for every environment loses to staging's own rules in staging, and holds in production; a
key's global rule loses to a project's, and holds in every other project. Made a candidate at
staging's place, a reviewer's choice there revoked it everywhere.

A group whose contested rows are within a set a reviewer resolved as ``keep_both_scoped``
(``acknowledged``: the sets kept at the group's place) keeps every row of that set: the
reviewer let all of them stand. The rows the rules outranked lose as they would anyway.
Pure: no ORM, no I/O; the pipeline opens the review items.
"""

from __future__ import annotations

from collections.abc import Iterable

from memory_core.models.choices import AUTHORITY_RANK

from .policy import RetrievalPolicy, is_high_impact
from .types import Candidate, Clarification, ConflictOutcome, ConflictPlace, Rejection

STAGE = "conflicts"

# Whether a later keyless conflict has taken over the keyless item ``{item}`` (an SQL alias or
# table) resolved ``ask_user``: one of the subject's, opened after it, that cites one of its
# rows. Since stop 57 such an item holds every row of it still standing
# (``services.conflicts._keyless_conflict_open``) and decides them, as a key's newest item
# does: ``{item}`` is measured no more (``pipeline._KEYLESS_CITED_SQL``) nor taken into a new
# one (``approvals.keyless_rivals_standing``). By ids, not by what the later item holds now: a
# row's new version is followed into the ``ask_user`` item alone (a resolved item is not
# followed), and read so it revived the item a reviewer's later decision had settled (stop
# 57's review of its fixes). An item opened before stop 57 held the memory and the new
# correction only (docs/security.md, "Left open").
ASK_USER_FOLLOWED_SQL = """EXISTS (
    SELECT 1 FROM memory_core_reviewitem later
     WHERE later.tenant_id = {item}.tenant_id AND later.subject_id = {item}.subject_id
       AND later.kind = 'conflict' AND later.memory_key = ''
       AND later.created_at > {item}.created_at
       AND later.candidate_ids && {item}.candidate_ids)"""

# The classes of DESIGN.md's rule "explicit user/admin beats inferred"; inside a class the
# write path's ``AUTHORITY_RANK`` breaks a tie after scope and environment (``_by_rule``).
AUTHORITY_CLASS = {
    "explicit_user": 3,
    "explicit_admin": 3,
    "confirmed_system": 2,
    "tool_observation": 2,
    "model_inference": 1,
}


def conflict_groups(candidates: list[Candidate]) -> dict[str, list[Candidate]]:
    """Return the memory_key groups with more than one candidate."""
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        if c.memory_key:
            groups.setdefault(c.memory_key, []).append(c)
    return {key: members for key, members in groups.items() if len(members) > 1}


def conflict_place(members: list[Candidate]) -> ConflictPlace:
    """Return where a group's conflict stands: the place of its narrowest rows.

    Every row left by stage 5 applies to this request, so the rows of one specificity share
    one scope (the request's task, repo, project, user or global), and a tied row's
    environment is the request's: the narrowest rows' scope, with the environment if any of
    them is tied to it. The write path's conflict on a chain stands at the chain's own scope
    and environment, which is this place for a request in that scope and environment.
    """
    narrowest = max(c.specificity for c in members)
    narrow = [c for c in members if c.specificity == narrowest]
    scope_kind, scope_ref = min((c.scope_kind, c.scope_ref) for c in narrow)
    return ConflictPlace(scope_kind, scope_ref, max(c.environment for c in narrow))


def decide(
    members: list[Candidate], *, min_confidence: float = 0.0
) -> tuple[Candidate | None, str]:
    """Return the winner of one group by rules 2-4 and the rule that decided, or (None, "")
    when no rule decides or the winner and its strongest rival at its place (``at_place``)
    are both below ``min_confidence``."""
    winner, rule = _by_rule(members)
    if winner is not None and winner.confidence < min_confidence:
        rivals = [c.confidence for c in at_place(winner, members) if c.id != winner.id]
        if rivals and max(rivals) < min_confidence:
            return None, ""
    return winner, rule


def _narrowing(members: list[Candidate]) -> list[tuple[str, list[Candidate]]]:
    """Return the rows each of rules 2-3c leaves standing, in order, with the rule's name: the
    highest authority class; of those, the narrowest scope; of those, the rows tied to the
    request's environment if any is (else all of them); and, when those are explicit or
    confirmed, the rows of the highest rank among them (3c: a class below has no rank order,
    so an inference's tie stands). Rule 4 picks the newest among the last rows."""
    top_class = max(AUTHORITY_CLASS.get(c.authority, 0) for c in members)
    remaining = [c for c in members if AUTHORITY_CLASS.get(c.authority, 0) == top_class]
    narrowest = max(c.specificity for c in remaining)
    narrow = [c for c in remaining if c.specificity == narrowest]
    tied = [c for c in narrow if c.environment] or narrow
    stages = [
        ("authority_class", remaining),
        ("narrower_scope", narrow),
        ("environment_specific", tied),
    ]
    if top_class >= AUTHORITY_CLASS["confirmed_system"]:
        # Within a class the write path's order still holds: a user's write on an admin's
        # key (a system fact on a tool's) is a separate, non-winning chain until a reviewer
        # decides (admission rule 10, ``supersession.conflict_lower_authority``).
        strongest = max(AUTHORITY_RANK.get(c.authority, 0) for c in tied)
        ranked = [c for c in tied if AUTHORITY_RANK.get(c.authority, 0) == strongest]
        stages.append(("higher_authority", ranked))
    return stages


def at_place(winner: Candidate, members: list[Candidate]) -> list[Candidate]:
    """Return the rows of a group at ``winner``'s place: its scope and environment. The
    others hold where it does not (a key's global rule in every other project, its rule for
    every environment in production), or only where it does (a project's inference under a
    global rule stated by the user), so a reviewer choosing among rows of two places would
    revoke one where it still holds."""
    place = (winner.scope_kind, winner.scope_ref, winner.environment)
    return [c for c in members if (c.scope_kind, c.scope_ref, c.environment) == place]


def contested(members: list[Candidate]) -> list[Candidate]:
    """Return the rows of a group no rule decides between: the tie rules 2-3b leave when they
    leave two or more rows, else (a winner that is not sure enough, ``decide``'s
    ``min_confidence``) the winner and its rivals at its place (``at_place``). Rule 3c does
    not narrow the tie: it is one place's rows of one class, which a reviewer's choice and a
    ``keep_both_scoped`` set cover whole (the write path sends the lower authority's chain
    to a reviewer too)."""
    standing = dict(_narrowing(members))["environment_specific"]
    return standing if len(standing) > 1 else at_place(standing[0], members)


def _outranked_by(candidate: Candidate, members: list[Candidate]) -> str:
    """Return the rule of 2-3c that leaves ``candidate`` out of its group's tie, or ""."""
    for rule, rows in _narrowing(members):
        if all(c.id != candidate.id for c in rows):
            return rule
    return ""


def _by_rule(members: list[Candidate]) -> tuple[Candidate | None, str]:
    """Return the winner of rules 2-4 and the rule that decided, or (None, "") for a tie of
    inferences, which no rank or age decides."""
    stages = _narrowing(members)
    for rule, rows in stages:
        if len(rows) == 1:
            return rows[0], rule
    last_rule, ranked = stages[-1]
    if last_rule == "higher_authority":
        newest = max(ranked, key=lambda c: (c.updated_at, c.version, c.id))
        return newest, "newer_confirmed"
    return None, ""


def resolve_conflicts(
    candidates: list[Candidate],
    *,
    policy: RetrievalPolicy,
    acknowledged: dict[str, set[frozenset[str]]] | None = None,
) -> tuple[list[Candidate], list[ConflictOutcome], list[Clarification], list[Rejection]]:
    """Return the candidates left after conflicts, the outcomes, clarifications, rejections."""
    acknowledged = acknowledged or {}
    dropped: set[str] = set()
    outcomes: list[ConflictOutcome] = []
    clarifications: list[Clarification] = []
    rejections: list[Rejection] = []
    for key, members in conflict_groups(candidates).items():
        ids = sorted(c.id for c in members)
        high = is_high_impact(policy, memory_key=key, memory_types={c.memory_type for c in members})
        undecided = contested(members)
        asked = {c.id for c in undecided}
        kept = next((s for s in acknowledged.get(key, ()) if s.issuperset(asked)), None)
        if kept is not None:
            outcomes.append(ConflictOutcome(key, ids, None, "kept_both_by_reviewer", high))
            for c in members:
                if c.id not in kept:
                    dropped.add(c.id)
                    rejections.append(
                        Rejection(c.id, STAGE, f"lost_conflict:{_outranked_by(c, members)}")
                    )
            continue
        winner, rule = decide(members, min_confidence=float(policy["conflict_min_confidence"]))
        if winner is None and high:
            outcomes.append(ConflictOutcome(key, ids, None, "unresolved", high, clarification=True))
            clarifications.append(
                Clarification(memory_key=key, candidates=sorted(undecided, key=lambda c: -c.score))
            )
            for c in members:
                dropped.add(c.id)
                reason = (
                    "unresolved_high_impact_conflict"
                    if c.id in asked
                    else f"lost_conflict:{_outranked_by(c, members)}"
                )
                rejections.append(Rejection(c.id, STAGE, reason))
            continue
        by_score: set[str] = set()
        if winner is None:
            # Among the rows no rule decides between only, as a high-impact group asks about
            # them: over every row, a global inference that explicit project rows outranked
            # won by score, and the user's statements were dropped (stop 60's audit of
            # retrieval). Those rows lose by the score; the rows the rules outranked lose by
            # their rule, as in a high-impact group.
            winner = max(undecided, key=lambda c: (c.score, c.id))
            rule = "best_score_low_impact"
            by_score = asked
        outcomes.append(ConflictOutcome(key, ids, winner.id, rule, high))
        for c in members:
            if c.id != winner.id:
                dropped.add(c.id)
                # Each loser by the rule that left it out (2-3c), and those left standing to
                # the end by the rule that decided among them. Until stop 63 every loser was
                # given the deciding rule: an inference at the winner's scope lost by
                # "narrower_scope", a global row newer than the others by "newer_confirmed"
                # (stop 63's audit), and a user's row newer than two of an administrator's
                # by "newer_confirmed" too (stop 63's review).
                lost = "" if c.id in by_score else _outranked_by(c, members)
                rejections.append(Rejection(c.id, STAGE, f"lost_conflict:{lost or rule}"))
    kept = [c for c in candidates if c.id not in dropped]
    return kept, outcomes, clarifications, rejections


def keyless_rivals(
    candidates: list[Candidate],
    cited: list[list[tuple[str, str]]],
    *,
    kept: list[frozenset[str]] = (),
) -> tuple[list[Candidate], list[Rejection]]:
    """Return the candidates left, and the rejections, once each open conflict of memories
    without a key has measured the rows it cites by authority class (rule 2), as a key's
    group is: a candidate it cites below the highest class of its rows still in use
    (``cited``: each item's (id, authority) of those) drops out until a reviewer decides.
    Such a conflict has no key to group by (a correction of lower authority of a keyless
    incident, approved or written), and agents were given the model's inference beside the
    user's own account (stop 54's audit of the reviewer's side). Every row in use counts,
    not only the candidates: the higher one left out by the relevance gate, or folded by
    dedup into a copy, left the rival given alone as settled (the audit of retrieval); so
    does a rival folded into a copy, keyed or not: the copy drops out with it (stop 64's
    audit and review), unless it carries a row of the highest standing or one kept. Rows
    of one class all stay, but among stated or confirmed ones the higher authority (rule 3c:
    an administrator's over the user's, a system's over a tool's), as in a key's group: the
    user's correction of an administrator's keyless memory was given beside it (stop 54's
    review). Each row is traced by the rule that left it out (``_lost_by``). The item waits
    for a reviewer, and so does one resolved ``ask_user`` (the pipeline reads its rows too:
    nothing changes).

    ``kept``: the rows of each keyless conflict a reviewer resolved ``keep_both_scoped``.
    As a key's group within a kept set keeps every row of it (``resolve_conflicts``), a row
    of any set that holds every row of the highest standing stays: a later conflict holds the
    rows kept beside the memory too (``services.conflicts._keyless_conflict_open``), and
    until a reviewer decides it, agents are given what the reviewer kept."""
    by_id = {c.id: c for c in candidates}
    given_as = _given_as(candidates)
    dropped: dict[str, str] = {}
    for rows in cited:
        if rows:
            top = max(_standing(authority) for _, authority in rows)
            highest = {i for i, authority in rows if _standing(authority) == top}
            # Every set a reviewer kept beside them: kept twice (a rival, then a second
            # correction beside both), the first set alone was read, in the query's order,
            # and the second correction dropped (stop 62's review).
            allowed = frozenset().union(*(s for s in kept if s >= highest))
            for i, authority in rows:
                if _standing(authority) == top or i in allowed:
                    continue
                # The row given for it: itself, or the candidate stage 6 folded it into, as
                # a reviewer's winner revokes such a copy with the loser (``_folded_copies``):
                # the rival's words written again by the model were given under the copy's id
                # (stop 64's audit of retrieval), and under a keyed copy's too (stop 64's
                # review). Not a row of the top standing, nor one carrying a row of the top
                # standing or one a reviewer kept: a copy carrying the kept row was dropped
                # for a later twin of its words (stop 64's review).
                given = by_id.get(given_as.get(i, i))
                if (
                    given is None
                    or _standing(given.authority) >= top
                    or not {given.id, *given.merged_from}.isdisjoint(allowed | highest)
                ):
                    continue
                # Rule 2 before rule 3c, whatever order the conflicts were read in.
                if dropped.get(given.id) != "authority_class":
                    dropped[given.id] = _lost_by(given.authority, top)
    rejections = [Rejection(i, STAGE, f"lost_conflict:{dropped[i]}") for i in sorted(dropped)]
    return [c for c in candidates if c.id not in dropped], rejections


def _given_as(candidates: Iterable[Candidate]) -> dict[str, str]:
    """Return, for each row stage 6 folded into a candidate (``merged_from``, which follows
    chains of merges), that candidate's id. A keyed one too: stage 6 keeps a keyed row before
    an unkeyed copy of its words (``dedup.keeper_order``)."""
    return {merged: c.id for c in candidates for merged in c.merged_from}


def _lost_by(authority: str, top: tuple[int, int]) -> str:
    """Return the rule that leaves a keyless conflict's row of ``authority`` out below its
    ``top`` standing: a class below the top class (rule 2), else a rank below (rule 3c). Until
    stop 64 every such row was traced ``authority_class``, a user's beside an
    administrator's too (stop 64's audit of retrieval), which a key's group traces by
    ``higher_authority`` (``_outranked_by``)."""
    return "authority_class" if _standing(authority)[0] < top[0] else "higher_authority"


def _standing(authority: str) -> tuple[int, int]:
    """Return how ``authority`` ranks in a keyless conflict: its class (rule 2), then, among
    stated or confirmed ones, its rank (rule 3c)."""
    cls = AUTHORITY_CLASS.get(authority, 0)
    rank = AUTHORITY_RANK.get(authority, 0) if cls >= AUTHORITY_CLASS["confirmed_system"] else 0
    return cls, rank
