"""``admit(candidate, principal, context)``: the deterministic admission policy.

Pure: no database, no model calls, no clock other than ``context.now``. The write service
gathers the context (the subject's state, the recent writes about the subject: the agent's
and the shared ones, the head of the memory_key's chain, the tenant's active policy) and
stores the Decision.

The rules run in the order of DESIGN.md ("Write path"); the first rule that refuses ends the
evaluation. Every code a rule adds, refusing or informational, is in ``Decision.rule_codes``;
a refused write's, its refusing codes and those that explain them (``refusal_codes``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memory_core.admission import guards, normalize
from memory_core.admission.candidate import (
    Candidate,
    flag_texts,
    key_words,
    labelled_item_chars,
    labelled_texts,
    leaf_line,
    seams,
    value_line_texts,
    value_stored_bytes,
    value_strings,
    written_and_words,
)
from memory_core.admission.codes import INFORMATIONAL, POLICY_LIMITS, RULE_CODES, codes_of_rules
from memory_core.admission.normalize import holds_space, visible_end, visible_start
from memory_core.models import (
    AUTHORITY_RANK,
    SENSITIVITY_RANK,
    TYPE_CLASS,
    Authority,
    Consent,
    MemoryClass,
    Sensitivity,
    SourceType,
)
from memory_core.policy_check import retention_limit
from memory_core.policy_defaults import DEFAULT_POLICY, stored_section

ACCEPTED = "accepted"
PENDING = "pending_approval"
REJECTED = "rejected"

REFUSING = set(RULE_CODES) - INFORMATIONAL

# What each source may claim, first = the default. A writer never raises authority.
SOURCE_AUTHORITIES = {
    SourceType.USER_INPUT: (Authority.EXPLICIT_USER, Authority.MODEL_INFERENCE),
    SourceType.VERIFIED_TOOL_OUTPUT: (Authority.TOOL_OBSERVATION, Authority.MODEL_INFERENCE),
    SourceType.MODEL_INFERENCE: (Authority.MODEL_INFERENCE,),
    SourceType.ADMIN: (Authority.EXPLICIT_ADMIN, Authority.CONFIRMED_SYSTEM),
}
POINTER_KEYS = {"system", "reference", "kind", "description", "url", "label"}
# A pointer names a record elsewhere: its system, reference and kind are tokens, its url a
# link. Anything else in them is words the class guard must read ("kind": "Refund approved;
# balance is $5,400" made a pointer of a balance).
POINTER_TOKEN_CHARS = 64
POINTER_KIND_CHARS = 32
POINTER_URL_CHARS = 2048
# The most earlier writes the split-write rule joins, as policy_check bounds the knob.
MAX_SPLIT_WINDOW_WRITES = 100
# The start of the content the memory_key is read with (the key's words, then these), in
# characters that show (``normalize.visible_start``: 200 spaces first hid the rest).
KEY_SEAM_CHARS = 200
# The most words of a content or value the memory_key is read as the label of (``key_lines``).
KEY_LABEL_WORDS = 4
# ... and of a longer one, the most words of its first clause (``_label_start``).
KEY_LABEL_START_WORDS = 2
# The most characters the guards read with a key as the label of a value's items: each item of
# a list after its key or path (``candidate.labelled_item_chars``), and the memory_key with
# each item and string of the value (``key_lines``, ``key_value_seams``; a seam that says a
# line's words counted once: ``labelled_chars``). An item repeats its label, and a 64 KiB
# value of short items under a 200-character key is megabytes of text, seconds of the guards.
# The memory_key was read with a list's first 50 items only, and "admin" as the 51st under
# "user.role" was stored active (stop 57's audit of admission): a value past the bound is
# refused (``fields.value_labels_too_long``), never read in part. Within it admission took
# 56 to 297 ms for the largest lists the default 8 KiB admits, up to 1.2 s at 64 KiB
# (measured: docs/api.md, "Admission rules", rule 3).
MAX_LABELLED_CHARS = 32_000


@dataclass(frozen=True)
class Grant:
    """What the writer may do: the agent's grant, or a portal/system principal's."""

    write_types: frozenset[str] | None  # None = every type
    max_sensitivity: str = Sensitivity.RESTRICTED
    any_subject: bool = True
    own_subject: str | None = None  # a subject principal writes only about this subject
    # An agent without any_subject: only the subject of its signed subject token ("" = none).
    bound_subject: str | None = None
    trusted: bool = False  # memledger's own paths (imports) may use source admin

    @classmethod
    def of(cls, principal, *, own_subject_external_id: str | None = None) -> Grant:
        """Return the grant of ``principal`` (an Agent, Subject, Reviewer or System one)."""
        if principal.actor_type == "agent":
            return cls(
                write_types=frozenset(principal.write_types),
                max_sensitivity=principal.max_sensitivity,
                any_subject=principal.any_subject,
                bound_subject=None
                if principal.any_subject
                else (getattr(principal, "bound_user_id", None) or ""),
            )
        if principal.actor_type == "user":
            return cls(write_types=None, any_subject=False, own_subject=own_subject_external_id)
        return cls(write_types=None, trusted=principal.actor_type == "system")


@dataclass
class Head:
    """The active head of the chain a write lands on (only what the rules need)."""

    id: object
    authority: str
    status: str = "active"
    sensitivity: str = ""  # "": not known (a write that lowers it is then not seen as one)


# An earlier write the split-write rule joins a write with: the texts it wrote (its content and
# its value's strings, ``Candidate.written_texts``), or its content alone.
EarlierWrite = str | tuple[str, ...]


@dataclass
class AdmissionContext:
    """Facts from storage the rules need; gathered by the write service."""

    now: datetime
    policy: dict = field(default_factory=lambda: DEFAULT_POLICY)
    policy_version: int | None = None
    subject_exists: bool = True
    recent_texts: list[EarlierWrite] = field(default_factory=list)
    head: Head | None = None
    batch_keys: set = field(default_factory=set)


@dataclass
class Decision:
    """The outcome of admission: what happens to the write, why, and the resolved fields."""

    outcome: str
    rule_codes: list[str]
    policy_version: int | None
    message: str = ""
    authority: str = ""
    confidence: float = 1.0
    consent: str = Consent.EXPLICIT
    sensitivity: str = Sensitivity.PERSONAL
    categories: list[str] = field(default_factory=list)
    valid_until: datetime | None = None
    action: str = "create"  # create | supersede | conflict

    @property
    def refusing_codes(self) -> list[str]:
        return [code for code in self.rule_codes if code in REFUSING]


def describe(codes: list[str], admission: dict | None = None) -> str:
    """Return the human text of ``codes`` joined, for messages; with the policy's
    ``admission`` section, a policy limit's refusal names the limit (``POLICY_LIMITS``)."""
    return " ".join(_sentence(code, admission) for code in codes if code in RULE_CODES)


def _sentence(code: str, admission: dict | None) -> str:
    text = RULE_CODES[code][1]
    if admission is not None and code in POLICY_LIMITS:
        knob, unit = POLICY_LIMITS[code]
        text = f"{text.removesuffix('.')} ({int(admission[knob])} {unit})."
    return text


def policy_section(policy: dict | None, section: str) -> dict:
    """Return a section (``admission``, ``retention``) of a policy document, each knob it
    lacks at its default (a document written before the knob existed)."""
    merged = dict(DEFAULT_POLICY.get(section, {}))
    merged.update(stored_section(policy, section))
    return merged  # retention: as ``policy_defaults.retention_section`` reads it


# What an accepted or pending write's message explains (the other codes are informational).
EXPLAINED_ON_ADMISSION = (
    "sensitivity.review_required",
    "supersession.conflict_lower_authority",
)


def decision_message(outcome: str, codes: list[str], admission: dict | None = None) -> str:
    """Return the message of a decision: the refusing codes' text for a rejection, the review
    and conflict codes' for an admitted write. A function of the codes and the policy's
    ``admission`` section (the limit a size refusal names), so a replayed answer
    (services/idempotency.py, with the decision's policy version) says what the first one
    said."""
    if outcome == REJECTED:
        return describe([c for c in codes if c in REFUSING], admission)
    return describe([c for c in codes if c in EXPLAINED_ON_ADMISSION])


def _policy(context: AdmissionContext, section: str) -> dict:
    return policy_section(context.policy, section)


def _is_token(text, limit: int) -> bool:
    """Whether ``text`` is one word of at most ``limit`` characters (no whitespace, nor an
    invisible character a reading reads as a space: ``holds_space``)."""
    return isinstance(text, str) and 0 < len(text) <= limit and not holds_space(text)


# An assignment inside a token: "=" between two characters that are not "=" (base64's
# padding ends a token, and assigns nothing).
_ASSIGNMENT = re.compile(r"[^=\s]=+[^=\s]")


def _is_id(text, limit: int) -> bool:
    """Whether ``text`` is a pointer's id: a token (``_is_token``) that states nothing. A token
    can be the state itself, written without spaces: as a pointer's reference, kind or
    system, "balance=5400", "role=admin" and "4411:status=refunded" were stored active as
    ``class.pointer``, never read by the class guard, where the same text as the content is
    refused (stop 60's audit of admission). An assignment is no id; a token with a colon is
    one unless the class guard reads state in it ("role:admin", "balance:5400"; not
    "urn:isbn:0451450523")."""
    if not _is_token(text, limit) or _ASSIGNMENT.search(text):
        return False
    return ":" not in text or not guards.class_codes([text])


def _is_pointer(value) -> bool:
    """Whether ``value`` is a pointer to a record elsewhere: ``system`` and ``reference``
    single tokens, ``kind`` a short token (each an id: ``_is_id``) and ``url`` a link when
    present, nothing else but a ``description`` and a ``label`` (read by the class guard as
    any text is)."""
    if not isinstance(value, dict) or not set(value) <= POINTER_KEYS:
        return False
    if not (
        _is_id(value.get("system"), POINTER_TOKEN_CHARS)
        and _is_id(value.get("reference"), POINTER_TOKEN_CHARS)
    ):
        return False
    if "kind" in value and not _is_id(value["kind"], POINTER_KIND_CHARS):
        return False
    if "url" in value:
        url = value["url"]
        if not (
            _is_token(url, POINTER_URL_CHARS) and url.lower().startswith(("https://", "http://"))
        ):
            return False
    return True


def split_window(admission: dict) -> int:
    """Return how many earlier writes the split-write rule joins (``split_window_writes``),
    bounded as policy_check bounds it: a document stored before the bound may say more."""
    try:
        writes = int(admission.get("split_window_writes", 5))
    except (TypeError, ValueError):
        writes = 5
    return min(max(writes, 0), MAX_SPLIT_WINDOW_WRITES)


# The field each of rule 3's codes is about (``field_limits``), for an import's error line.
LIMIT_FIELDS = {
    "fields.content_empty": "content",
    "fields.content_too_long": "content",
    "fields.key_too_long": "memory_key",
    "fields.value_too_large": "value",
    "fields.value_labels_too_long": "value",
}


def field_limits(candidate: Candidate, admission: dict) -> str | None:
    """Return the code of the first of rule 3's checks against the tenant's policy, and of the
    bound on the text the guards read with a key as a label (``MAX_LABELLED_CHARS``), that
    ``candidate`` fails (its shape was checked by the parser), or None. ``import_memories``
    applies them too: a record of zero-width spaces only, or past ``max_content_chars``, was
    imported where a write is refused (stop 53's audit of admission)."""
    if normalize.is_blank(candidate.content):  # zero-width characters alone show nothing
        return "fields.content_empty"
    if len(candidate.content) > int(admission["max_content_chars"]):
        return "fields.content_too_long"
    if len(candidate.memory_key) > int(admission["max_key_chars"]):
        return "fields.key_too_long"
    limit = int(admission.get("max_value_bytes", 8192))
    if candidate.value is not None and value_stored_bytes(candidate.value) > limit:
        return "fields.value_too_large"
    if candidate.value is not None and labelled_chars(candidate) > MAX_LABELLED_CHARS:
        return "fields.value_labels_too_long"
    return None


def labelled_chars(candidate: Candidate) -> int:
    """Return how many characters the guards read with a key as the label of ``candidate``'s
    value's items (``MAX_LABELLED_CHARS``): its lists' items after their keys, and the
    memory_key's lines and seams, a seam that says a line's words once ("stats daily steps
    4000" beside "stats daily steps: 4000", as every number's seam and a short string's do:
    counted twice, 1,000 daily step counts, 6 kB, under "stats.daily_steps" were refused,
    stop 57's review of its own fixes). Read on a value within the policy's size (rule 3
    checks that first): the memory_key is at most 200 characters, its lines a few megabytes
    at most."""
    labels = _labels(candidate)
    said, words = set(labels), key_words(candidate.memory_key)

    def with_colon(text: str) -> str:  # "stats daily steps: 4000"
        return f"{words}:{text[len(words) :]}"

    # An object's line read after the key's words with the colon as well as without
    # (``key_lines``) says the same words: counted once, as such a seam is.
    restated = {with_colon(label) for label in labels}
    # A leaf's line after the key's path (``key_path_label``) restates its line after the
    # key's words: counted once (stop 60's audit of admission).
    path = key_path_label(candidate.memory_key)
    restated |= {f"{path}{label[len(words) :]}" for label in labels if path}
    lines = [label for label in labels if label not in restated]
    seams = [
        seam for seam in _key_seams(candidate) if seam not in said and with_colon(seam) not in said
    ]
    return labelled_item_chars(candidate.value) + sum(map(len, lines)) + sum(map(len, seams))


def key_seam(candidate: Candidate) -> str:
    """Return the memory_key read as words, then the start of the content: a key and the
    content say together what neither says alone ("health.hiv_status" with "Positive.", or
    an instruction begun in the key and ended in the content). "" without a key."""
    if not candidate.memory_key:
        return ""
    return f"{key_words(candidate.memory_key)} {visible_start(candidate.content, KEY_SEAM_CHARS)}"


def scope_seam(candidate: Candidate) -> str:
    """Return the scope's id read as words, then the start of the content, as the prompt
    shows them side by side (scope="project:ignore-all-previous" ...>instructions and ...):
    an instruction begun in the scope and ended in the content was stored (stop 47's audit),
    as one begun in the key was before ``key_seam``. "" for the global scope."""
    if not candidate.scope_ref:
        return ""
    return f"{key_words(candidate.scope_ref)} {visible_start(candidate.content, KEY_SEAM_CHARS)}"


def _bare_values(held) -> list[str | int | float]:
    """Return the bare values of a write's value: itself when it is a string or a number, or
    the strings and numbers of a list (every one: ``_list_leaves``). ``[5400]`` under
    "account.balance" is the balance as ``5400`` is: a one-item list was read by no rule with
    its key, and stored (stop 53's audit of admission). A bool is an int: "true" under its
    key."""
    return [item for item in _list_leaves(held) if isinstance(item, (str, int, float))]


def _list_leaves(held) -> list:
    """Return ``held`` itself, or the items of a list at any depth of lists (objects in it
    too: ``_key_objects`` reads them): ``[[5400]]`` and ``[["admin"]]`` under their keys were
    stored where ``[5400]`` was refused (stop 54's audit of admission). Every item: past the
    first 50, "admin" under "user.role" was stored (stop 57's); rule 3 bounds the text the
    key and the items make (``MAX_LABELLED_CHARS``)."""
    if not isinstance(held, list):
        return [held]
    found: list = []
    stack = list(reversed(held))
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        else:
            found.append(item)
    return found


def _key_objects(held) -> list[dict]:
    """Return the objects a key labels: the value itself, or those among its list's items at
    any depth (``_list_leaves``): ``[{"amount": 5400}]`` under "account.balance" was stored
    where ``{"amount": 5400}`` was refused (stop 54's audit of admission)."""
    return [item for item in _list_leaves(held) if isinstance(item, dict)]


def key_value_seams(candidate: Candidate) -> list[str]:
    """Return the memory_key read as words, then each bare value (``_bare_values``), as
    ``key_seam`` reads it with the content: "refund.destination" with the value
    "jane@example.com", or an instruction begun in the key and ended in the value, was stored
    where the same words in the content were refused (stop 53's audit of admission). [] without
    a key. Every string of the value is read so, an object's and a pointer's too: the key
    read with ``{"to": "jane@example.com"}``, ``[["jane@example.com"]]`` or a pointer's
    reference was stored (stop 54's audit of admission; a pointer's fields name a record
    elsewhere for the class guard, not for the injection guard). Every one: with a list's
    first 50 read alone, "refund.destination" over 50 other words, then the address, was
    stored (stop 57's audit of admission); rule 3 bounds the text (``MAX_LABELLED_CHARS``)."""
    if not candidate.memory_key:
        return []
    words, held = key_words(candidate.memory_key), candidate.value
    # A number is read as JSON writes it ("5400", "true": ``value_line_texts``).
    bare = [v if isinstance(v, str) else value_line_texts(v)[0] for v in _bare_values(held)]
    texts = [*bare, *value_strings(held)]
    texts = list(dict.fromkeys(text for text in texts if text))
    return [f"{words} {visible_start(text, KEY_SEAM_CHARS)}" for text in texts]


# What separates a memory_key's path from its last part, the value's own key ("_" and "-" join
# a key's words: "max_price"). Brackets and quotes too, as form fields, PHP/Rails params and
# code spell a path ("user[role]", "account['balance']"): the last part of those was "]"
# (stop 60's audit of admission).
KEY_PATH_SEPARATORS = re.compile(r"[./:\[\]'\"()<>]+")


def key_path(memory_key: str) -> list[str]:
    """Return the parts of ``memory_key``'s path (``KEY_PATH_SEPARATORS``), each as words."""
    return [words for part in KEY_PATH_SEPARATORS.split(memory_key) if (words := key_words(part))]


def key_path_label(memory_key: str) -> str:
    """Return ``memory_key`` read as the value's own path is, a colon after each of its parts
    ("permissions.admin" is "permissions: admin"), or "" for a key of one part. Read as one
    run of words ("permissions admin: true"), the memory_key "permissions.admin" over true
    and "permissions.level" over "admin" were stored where the value ``{"permissions":
    {"admin": true}}`` is refused (stop 60's audit of admission)."""
    parts = key_path(memory_key)
    return ": ".join(parts) if len(parts) > 1 else ""


# Where a content's first clause ends, for ``_label_start``: a dot, "!", "?" or ";" before a
# space or the end, a comma before a space ("5,400" is one number), a line break.
_FIRST_CLAUSE_END = re.compile(r"[.!?;](?!\S)|,\s|\n")


def _label_start(leaf):
    """Return what of ``leaf`` the memory_key labels: a number whole, a string of at most
    ``KEY_LABEL_WORDS`` words whole, a longer one's first clause cut to its first
    ``KEY_LABEL_START_WORDS`` words. A longer string was read on its own alone, so padding a
    state past four words ("admin, as of this morning.", "Shipped on Monday via UPS.")
    stored it active under "user.role" or "order.status", where "admin" and "Shipped." are
    refused (stop 60's audit of admission). Two words, not four: a sentence's start says
    nothing under its key ("user role: User is"), where its fourth word may be a role's
    ("User is a root beer enthusiast.")."""
    if not isinstance(leaf, str) or len(leaf.split()) <= KEY_LABEL_WORDS:
        return leaf
    end = _FIRST_CLAUSE_END.search(leaf, 0, KEY_SEAM_CHARS)
    clause = leaf[: end.start() if end else KEY_SEAM_CHARS]
    return " ".join(clause.split()[:KEY_LABEL_START_WORDS])


def key_lines(candidate: Candidate, *, value: bool = True) -> list[str]:
    """Return the memory_key read as the label of a bare value the write holds, for the class
    guard: "account balance: 5400" is business state that neither the key
    ("account.balance") nor the content ("5400") says alone. The key labels the content, and
    a string or number value, when it is a bare value of at most ``KEY_LABEL_WORDS`` words (a
    longer one by its first clause's first words, ``_label_start``: "user role: User is a root
    beer enthusiast." is no access rule), each after the key's words and after its path read
    as the value's is (``key_path_label``: "permissions: admin: true"), a number under a key
    naming a bound without the colon, as in the value's lines ("travel max price 300":
    ``leaf_line``); an object's top-level line is read after the
    key's words, with the colon the value's own path has and without it ("account balance:
    amount: 5400", "account balance amount: 5400"). ``value``: False for a pointer, whose
    fields name a record elsewhere. [] without a key."""
    if not candidate.memory_key:
        return []
    held = candidate.value if value else None
    words = key_words(candidate.memory_key)
    # The key's last part is the value's own key, its first parts a path, as in the value's
    # lines: "travel.max_price" over 300 names a bound by "max_price", as {"max_price": 300}
    # does (``leaf_line``). A path is split at each of its separators (".", "/", ":"), not
    # the dot alone: "budget/balance" over 5400 was read as a bound named "budget balance"
    # and stored (stop 56's fourth review).
    named = (key_path(candidate.memory_key) or [""])[-1]
    labels = [words, *filter(None, [key_path_label(candidate.memory_key)])]
    lines = [
        leaf_line(label, _label_start(leaf), named=named, limit=KEY_SEAM_CHARS)
        for leaf in [candidate.content, *_bare_values(held)]
        for label in labels
    ]
    for held_object in _key_objects(held):
        for line in value_line_texts(held_object)[:1]:
            line = visible_start(line, KEY_SEAM_CHARS)
            # Without the colon alone, "user role current: admin" was no access rule, and the
            # memory_key "user.role" over {"current": "admin"} was stored where {"user":
            # {"role": {"current": "admin"}}}, "user role: current: admin", is refused (stop
            # 59's audit of admission). Not instead: "bank account: 12345678" (the key "bank"
            # over {"account": ...}) is finance where "bank: account: ..." is not.
            lines += [f"{words} {line}", f"{words}: {line}"]
    return list(dict.fromkeys(lines))  # a list's repeated items read once


# A write's labelled lines and value lines, made once per admission (``guards.derived``): rule
# 3's bound, the class and injection guards and the sensitive categories each read them, and
# thousands of a value's items were labelled three times over.
def _labels(candidate: Candidate) -> list[str]:
    """Return ``key_lines`` of ``candidate`` as every rule reads them (a pointer's fields
    name a record elsewhere, not a labelled value)."""
    return guards.derived(
        "key_lines", candidate, lambda: key_lines(candidate, value=not _is_pointer(candidate.value))
    )


def _key_seams(candidate: Candidate) -> list[str]:
    """Return ``key_value_seams`` of ``candidate``."""
    return guards.derived("key_value_seams", candidate, lambda: key_value_seams(candidate))


def _texts(candidate: Candidate) -> list[str]:
    """Return ``candidate.texts()``: the content, the value's strings and its lines."""
    return guards.derived("texts", candidate, candidate.texts)


def sensitivity_texts(candidate: Candidate) -> list[str]:
    """Return the texts the sensitive categories read (rule 8): the content and the value
    (``Candidate.texts``: its strings joined, as an account number split over two of them
    is whole only there, stop 58's review of its admission fixes) and where each of its
    texts as written meets the next (``seams``), the key with the content
    ("health.hiv_status" and "Positive." say it together, ``key_seam``), the scope's id as
    written and as words (``Candidate.scope_text``): the prompt shows it, and "project:user
    has HIV" was stored personal, readable by every agent of the scope; the message's id when
    it is a sentence and a correction's reason, which GET and the memory's events answer to
    agents ("User has HIV." as either was read by the injection guard only: stop 47's audit).
    Not the subject: it is the tenant's name for a person. ``import_memories`` reads the
    same."""
    message = candidate.source_message_id
    said = message if message in candidate.sentence_ids() else ""
    extra = (key_seam(candidate), candidate.scope_text(), candidate.reason, said)
    # The key as the label of a bare content or value ("email password: Hunter2024!"), as the
    # class guard reads it: the credential rule reads a label, and "email.password" with
    # "Hunter2024!" was stored personal (stop 53's audit of admission).
    labelled = _labels(candidate)
    # Read by the class and injection guards alone, "User's email password is" with the
    # value "Hunter2024!", which GET answers side by side, was stored personal (stop 61's
    # audit of admission); so was that content with the value 4921, a JSON number GET answers
    # beside it as well (a bare number or boolean as JSON writes it; an object's lines are
    # never read across, ``value_line_texts``).
    bare = [] if isinstance(candidate.value, (dict, list)) else value_line_texts(candidate.value)
    joined = seams([*candidate.written_texts(), *bare])
    texts = _texts(candidate) + [text for text in extra if text]
    return texts + joined + labelled_texts(labelled)


# The characters on each side of a seam that a split instruction is read across: the guards'
# rules span a sentence of at most ~80 characters. Joining whole texts made the rule's cost
# grow with both texts' lengths, times the policy's window (up to 100 earlier writes), times
# the write's texts: seconds a write for an 8 kB value and a window of 100.
SPLIT_SEAM_CHARS = 500


def _split_between(previous: str, content: str) -> bool:
    """Whether ``previous`` and ``content`` joined say an instruction that ``previous`` alone
    does not (``content`` alone says none): either order, as retrieval ranks by score, so the
    half written later may come first. Each order is read ``SPLIT_SEAM_CHARS`` around its
    seam."""
    # Counted in characters that show: 500 spaces at a text's end hid its half.
    width = SPLIT_SEAM_CHARS
    ahead, behind = visible_end(previous, width), visible_start(previous, width)
    start, end = visible_start(content, width), visible_end(content, width)
    joined = guards.joined_injection_codes([f"{ahead} {start}", f"{end} {behind}"])
    # One text when the earlier write is short (the same reading, cached across writes).
    return bool(set(joined) - set(guards.injection_codes(list(dict.fromkeys((ahead, behind))))))


def check_content(
    candidate: Candidate, recent_texts: Sequence[EarlierWrite] = (), *, window: int | None = None
) -> list[str]:
    """Return the class and injection guard codes for ``candidate`` (rules 4 and 5);
    ``recent_texts``: the earlier writes the split-write rule joins it with, oldest first;
    ``window``: how many of the last of them it joins (None: all of them, the caller bounded
    them)."""
    writes = list(recent_texts)
    if window is not None:
        writes = writes[max(len(writes) - window, 0) :] if window > 0 else []
    # Each text an earlier write wrote, its value's as well as its content: an instruction
    # begun in a value reads whole beside the next write's content, as retrieval shows both.
    recent = list(
        dict.fromkeys(
            text
            for write in writes
            for text in ((write,) if isinstance(write, str) else write)
            if text
        )
    )
    with guards.reading_memo():  # the guards below share the readings of the write's texts
        return _check_content(candidate, recent)


def _check_content(candidate: Candidate, recent: list[str]) -> list[str]:
    written = candidate.written_texts()  # content and the value's strings
    # The class guard reads the value's structure too (``value_lines``: "balance: 5400",
    # "role: admin"); the injection guard does not, as its keys read as speakers there
    # ("system: billing" is a pointer's system, not a system message).
    class_texts = _texts(candidate)
    class_written = written  # the texts as written whose seams the class guard reads
    if _is_pointer(candidate.value):
        # A pointer's system, reference, kind and url name a record elsewhere ("billing",
        # "INV-1"): the class guard reads the content and the pointer's own words (its
        # description and label), and the injection guard reads all of it.
        words = [candidate.value.get(key) for key in ("description", "label")]
        class_written = [candidate.content, *(w for w in words if isinstance(w, str))]
        class_texts = list(class_written)
    # Each guard reads where one of its texts as written meets the next (``seams``), as GET
    # answers them side by side: read by the injection guard alone, "The customer's
    # outstanding balance is" with the value "$5,400." was stored (stop 61's audit of
    # admission).
    joined, class_joined = seams(written), seams(class_written)
    # The key and the scope's reference are the writer's words too, and the prompt shows
    # them (an item's scope="...", a clarification's key): the injection guard reads them.
    # The key is read with the content too (``key_seam``), and the message's id, which GET
    # answers. The other ids are ids (``_identifier``), but "_", ".", "-" and "/" still join
    # words: the injection guard reads them as written and as words, the subject too
    # (``id_texts``); the class guard reads the subject and the scope's id when they are
    # sentences ("project:refund approved, balance is $5,400" was accepted), never an
    # identifier ("refund-approved-handler" names code).
    ids = candidate.id_texts()
    id_injection = id_codes(ids)
    scope = candidate.scope_text()
    # A correction's reason is kept in its event, which agents read: the injection guard
    # reads it too.
    extra = (
        candidate.memory_key,
        candidate.scope_ref,
        key_seam(candidate),
        scope_seam(candidate),
        candidate.reason,
    )
    texts = written + [t for t in (*extra, candidate.source_message_id) if t]
    texts += flag_texts(candidate.value)  # "is_admin: true" (stop 60's audit of admission)
    # The memory_key's seams and lines, one per item, packed as the value's texts are: read
    # each alone, the guards paid a text's readings an item (``candidate.LABEL_SEPARATOR``).
    texts += labelled_texts(_key_seams(candidate))
    class_texts += labelled_texts(_labels(candidate))
    class_texts += [scope] if scope else []
    class_texts += candidate.sentence_ids()
    class_texts += [candidate.reason] if candidate.reason else []
    codes = guards.class_codes(class_texts + class_joined)
    injection = _merged(guards.injection_codes(texts + joined), id_injection)
    codes += injection
    # An instruction split with an earlier write may end in the value as well as the content.
    if not injection and any(
        _split_between(previous, text) for previous in recent for text in written
    ):
        codes.append("injection.split_write")
    # Every text a guard read (the class guard's structure lines and the seams too), so a
    # match on a line is not taken for one found only in a de-obfuscated reading.
    read = texts + class_texts + ids + joined + class_joined
    if codes and guards.is_obfuscated(list(dict.fromkeys(read)), codes):
        codes.append("injection.obfuscated")
    return codes


def subject_codes(subject: str) -> list[str]:
    """Return the refusing codes a write would be refused with for its ``subject`` alone:
    the injection guard's of the id as written and as words (``Candidate.id_texts``) and,
    when it is a sentence, the class guard's (``Candidate.sentence_ids``). A subject token's
    issue reads a new subject so (``subject_tokens.subject_ensure``)."""
    codes = id_codes([written_and_words(subject, key_words(subject))])
    if holds_space(subject):  # a sentence, as ``Candidate.sentence_ids`` reads it
        codes = _merged(guards.class_codes([subject]), codes)
    return [code for code in codes if code in REFUSING]


def _merged(codes: list[str], more: list[str]) -> list[str]:
    return codes + [code for code in more if code not in codes]


# The codes of each id text, remembered per tenant as the injection guard's are (inside
# ``guards.cache_scope``, keyed by a digest of the tenant and the text, never the text): a
# write's ids repeat from write to write (its subject, its conversation, its session), and
# read alone, as written and as words, they cost a short text's readings each, more than
# the guards' reading of a sentence's content. Keyed by tenant for the reason the injection
# guard's cache is: a text another tenant wrote must not be answered faster. The cache's
# class, its digest and its tenant are the guards' own (they have no public names yet).
_ID_CODES = guards._DigestCache(4096)


def id_codes(ids: list[str]) -> list[str]:
    """Return the injection guard's codes for a write's ids (``Candidate.id_texts``), each
    text read alone. The class guard reads an id only when it is a sentence
    (``Candidate.sentence_ids``)."""
    found: list[str] = []
    for text in ids:
        found = _merged(found, list(_id_text_codes(text)))
    return found


def _id_text_codes(text: str) -> tuple[str, ...]:
    tenant = guards._CACHE_TENANT.get()
    if tenant is None:  # outside any scope nothing is remembered, as in the guards
        return _read_id(text)
    key = guards._digest([tenant, text])
    codes = _ID_CODES.get(key)
    if codes is None:
        codes = _ID_CODES.put(key, _read_id(text))
    return codes


def _read_id(text: str) -> tuple[str, ...]:
    # Never remembered by the injection guard's cache: this one remembers the pair.
    return tuple(guards.joined_injection_codes([text]))


@dataclass(frozen=True)
class SourceReading:
    """What rules 6 and 7 make of a write's source: the first code refusing it (or ""), and
    the authority, confidence and consent it is kept with (a refused reading's too: an
    import with --no-screen keeps them)."""

    refusal: str
    authority: str
    confidence: float
    consent: str
    codes: list[str] = field(default_factory=list)  # informational (source.confidence_capped)


def read_source(candidate: Candidate, admission: dict, *, trusted: bool) -> SourceReading:
    """Return rules 6 (source and authority) and 7 (consent) read on ``candidate`` under the
    policy's ``admission`` section; ``trusted``: memledger's own paths, which may write with
    source admin, claim any authority and explicit consent. Admission and ``import_memories``
    both decide by it."""
    source = candidate.source_type
    allowed = SOURCE_AUTHORITIES[source]
    authority = candidate.authority or allowed[0]
    confidence = 1.0 if candidate.confidence is None else candidate.confidence
    # No explicit consent stated: the user's own words give it, any other source a workflow's.
    consent = candidate.consent or (
        Consent.EXPLICIT if source == SourceType.USER_INPUT else Consent.WORKFLOW
    )
    # An inference's confidence is capped before any rule below refuses, so that a refused
    # reading carries the values a write is kept with too: an import with --no-screen keeps
    # them whatever the reading refused, and kept a model's inference without its tool at
    # 1.0 (stop 56's audit of imports).
    capped = []
    if authority == Authority.MODEL_INFERENCE:
        cap = float(admission.get("inferred_max_confidence", 0.8))
        if candidate.confidence is None:
            confidence = cap
        elif confidence > cap:
            confidence = cap
            capped.append("source.confidence_capped")

    def reading(refusal: str = "", codes: tuple = ()) -> SourceReading:
        return SourceReading(refusal, authority, confidence, consent, list(codes))

    # 6. Source and authority. A write refused here was never said to be capped: its
    # decision lists the refusal alone, as it did before the cap was read first.
    if source == SourceType.ADMIN and not trusted:
        return reading("source.admin_not_allowed")
    if source == SourceType.VERIFIED_TOOL_OUTPUT and not candidate.source_tool:
        return reading("source.tool_required")
    if authority not in allowed and not trusted:
        return reading("source.authority_not_allowed")
    codes = capped
    # The tenant's floor for what is kept at all (0: none), on the confidence kept: the
    # policy held it, bounded it, and admission read nothing of it (stop 49's audit).
    if confidence < float(admission.get("confidence_floor", 0.0)):
        return reading("source.confidence_below_floor", codes)

    # 7. Consent: preferences need explicit consent or a workflow the policy approves. Only
    # the user's own words carry explicit consent: a writer can't claim it for what a model
    # inferred or a tool observed, as it can't raise authority.
    if candidate.consent == Consent.EXPLICIT and source != SourceType.USER_INPUT and not trusted:
        return reading("consent.explicit_not_allowed", codes)
    memory_class = TYPE_CLASS[candidate.memory_type]
    if memory_class == MemoryClass.PREFERENCE and consent == Consent.WORKFLOW:
        if candidate.memory_type not in admission.get("workflow_consent_types", []):
            return reading("consent.workflow_not_approved", codes)
    return reading(codes=codes)


# The informational codes a refusal lists, each beside a code it explains: the instruction or
# the business state was hidden (``injection.obfuscated``), the confidence below the floor is
# the capped one. The others say how an admitted write is kept (a pointer, waiting for a
# reviewer, its end, the version it replaces), and a refused write is kept nowhere: a
# sensitive write refused for its past end was answered, stored and counted on the reviewers'
# "rejected writes by rule" page as waiting for a reviewer (stop 57's audit of admission).
EXPLAINS_REFUSAL: dict[str, frozenset[str]] = {
    "injection.obfuscated": codes_of_rules(4, 5) & REFUSING,
    "source.confidence_capped": frozenset({"source.confidence_below_floor"}),
}


def refusal_codes(codes: list[str]) -> list[str]:
    """Return the codes a refused write lists, in their order: its refusing codes and the
    informational ones that explain them (``EXPLAINS_REFUSAL``)."""
    found = set(codes)
    return [
        code
        for code in codes
        if code in REFUSING or EXPLAINS_REFUSAL.get(code, frozenset()) & found
    ]


def admit(candidate: Candidate, grant: Grant, context: AdmissionContext) -> Decision:
    """Return the Decision for ``candidate`` written under ``grant`` (DESIGN.md rules 1-10)."""
    # The guards of rules 4, 5 and 8 read the same texts: their readings are computed once,
    # for this write only (``guards.reading_memo``).
    with guards.reading_memo():
        return _admit(candidate, grant, context)


def _admit(candidate: Candidate, grant: Grant, context: AdmissionContext) -> Decision:
    codes: list[str] = []
    admission = _policy(context, "admission")
    retention = _policy(context, "retention")

    def refuse(*refusing: str) -> Decision:
        codes.extend(code for code in refusing if code not in codes)
        listed = refusal_codes(codes)
        return Decision(
            outcome=REJECTED,
            rule_codes=listed,
            policy_version=context.policy_version,
            message=decision_message(REJECTED, listed, admission),
        )

    # 1. Tenant boundary: the subject must belong to the writer's tenant (or be creatable).
    if grant.own_subject is not None and candidate.subject != grant.own_subject:
        return refuse("tenant.subject_mismatch")
    # A bound agent learns nothing about subjects outside its token, not even whether they exist.
    if grant.bound_subject is not None and candidate.subject != grant.bound_subject:
        return refuse("tenant.subject_not_granted")
    if not context.subject_exists and not grant.any_subject:
        return refuse("tenant.subject_unknown")

    # 2. The grant: memory types and maximum sensitivity.
    if grant.write_types is not None and candidate.memory_type not in grant.write_types:
        return refuse("grant.type_not_allowed")
    max_rank = SENSITIVITY_RANK[grant.max_sensitivity]
    if candidate.sensitivity and SENSITIVITY_RANK[candidate.sensitivity] > max_rank:
        return refuse("grant.sensitivity_above_max")

    # 3. Fields and sizes against the tenant's policy (shape was checked by the parser).
    if (limit := field_limits(candidate, admission)) is not None:
        return refuse(limit)
    if candidate.memory_key and candidate.chain_identity in context.batch_keys:
        return refuse("fields.duplicate_in_batch")

    # 4 and 5. Class guard and injection guard, whatever the source.
    content_codes = check_content(candidate, context.recent_texts, window=split_window(admission))
    if any(code in REFUSING for code in content_codes):
        return refuse(*content_codes)
    if _is_pointer(candidate.value):
        codes.append("class.pointer")

    # 6 and 7. Source and authority, then consent.
    reading = read_source(candidate, admission, trusted=grant.trusted)
    codes.extend(reading.codes)
    if reading.refusal:
        return refuse(reading.refusal)
    authority, confidence, consent = reading.authority, reading.confidence, reading.consent
    memory_class = TYPE_CLASS[candidate.memory_type]

    # 8. Sensitivity: declared or detected; above the grant is refused, sensitive waits.
    categories = guards.sensitive_categories(
        sensitivity_texts(candidate), list(admission.get("sensitive_categories", []))
    )
    sensitivity = candidate.sensitivity or Sensitivity.PERSONAL
    if categories and SENSITIVITY_RANK[sensitivity] < SENSITIVITY_RANK[Sensitivity.SENSITIVE]:
        sensitivity = Sensitivity.SENSITIVE
    # A new version of a memory (a correction, a write on its key) is kept at least as
    # sensitive as its head: an agent may not lower a chain's sensitivity (a correction
    # declaring "personal" made a reviewed health fact readable by agents capped at personal;
    # stored waiting for a reviewer at "personal", it was listed to them). The head is one the
    # writer may see (``writes._heads``), so this never lifts a write above its grant.
    # memledger's own paths are trusted with a lower one.
    head = context.head
    if (
        head is not None
        and head.sensitivity
        and not grant.trusted
        and SENSITIVITY_RANK[sensitivity] < SENSITIVITY_RANK[head.sensitivity]
    ):
        sensitivity = head.sensitivity
        codes.append("sensitivity.kept_from_head")
    if SENSITIVITY_RANK[sensitivity] > max_rank:
        return refuse("sensitivity.above_agent_max")
    needs_review = SENSITIVITY_RANK[sensitivity] >= SENSITIVITY_RANK[Sensitivity.SENSITIVE]
    if needs_review:
        codes.append("sensitivity.review_required")

    # 9. TTL: defaults from the class retention, capped by it; inferred memories live shorter.
    limit = retention_limit(memory_class, authority, retention)
    valid_until = candidate.valid_until
    if valid_until is not None and valid_until <= context.now:
        return refuse("ttl.in_past")
    if limit is not None:
        cap = context.now + limit
        if valid_until is None:
            valid_until = cap
            codes.append("ttl.defaulted")
        elif valid_until > cap:
            valid_until = cap
            codes.append("ttl.capped")

    # 10. Supersession: equal or higher authority supersedes; lower is kept as a conflict.
    action = "create"
    if head is not None:
        if head.status != "active":
            return refuse("supersession.not_head")
        if AUTHORITY_RANK[authority] >= AUTHORITY_RANK[head.authority]:
            action = "supersede"
            codes.append("supersession.supersedes")
        else:
            action = "conflict"
            codes.append("supersession.conflict_lower_authority")

    return Decision(
        outcome=PENDING if needs_review else ACCEPTED,
        rule_codes=codes,
        policy_version=context.policy_version,
        message=decision_message(ACCEPTED, codes),
        authority=authority,
        confidence=confidence,
        consent=consent,
        sensitivity=sensitivity,
        categories=categories,
        valid_until=valid_until,
        action=action,
    )
