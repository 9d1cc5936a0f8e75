"""The default policy document a new tenant starts with (version 1).

Every admission decision, retrieval trace and deletion records the version it ran under.
"""

DEFAULT_POLICY = {
    "admission": {
        "max_content_chars": 4000,
        "max_key_chars": 200,
        "confidence_floor": 0.0,
        "inferred_max_confidence": 0.8,
        "max_value_bytes": 8192,
        # Preference-class types a workflow (not the user's explicit consent) may write.
        "workflow_consent_types": ["project_constraint", "repository_rule"],
        # How far back the split-instruction check joins a write with the recent writes
        # about the same subject (the agent's own and the shared ones): minutes, and writes
        # (0 to 100).
        "split_window_minutes": 1440,
        "split_window_writes": 5,
        "sensitive_categories": [
            "health",
            "finance",
            "credentials",
            "government_id",
            "precise_location",
            "religion",
            "sexual_orientation",
            "political_opinion",
            "criminal_record",
            "biometric",
            "ethnic_origin",
            "union_membership",
            "immigration_status",
        ],
    },
    # Retention belongs to the class: working memory hours, episodes days, preferences until
    # revoked (null = no expiry).
    "retention": {
        "working_hours": 24,
        "episodic_days": 90,
        "preference_days": None,
        "inferred_days": 30,
        # Writes a reviewer refused (status rejected): kept this long after the decision.
        "rejected_days": 30,
        # Retrieval traces (ids, hashes, scores, reasons: ~17 kB stored each) are kept this long.
        "trace_days": 30,
    },
    "half_life_days": {
        "user_preference": 365,
        "project_constraint": 180,
        "repository_rule": 90,
        "task_state": 2,
        "previous_decision": 90,
        "incident": 45,
        "successful_procedure": 60,
        "episode": 30,
    },
    "ranking_weights": {
        "semantic": 0.35,
        "task_fit": 0.15,
        "scope": 0.15,
        "authority": 0.15,
        "freshness": 0.1,
        "confidence": 0.1,
        "conflict_penalty": 0.2,
        "redundancy_penalty": 0.15,
    },
    "budget": {
        "max_items": 8,
        "max_tokens": 800,
        "max_items_per_type": 3,
        "confidence_floor": 0.3,
    },
}

# What a tenant without an active policy is held to: the defaults' admission and ranking, and
# no retention limit (every key null), as retrieval, the sweep, the pages and the export read
# "no policy" (``retention_section(None)``). Admission read the defaults' retention for it:
# an episode got a 90-day end, was expired then and kept with no end (stop 56's audit).
NO_POLICY = {**DEFAULT_POLICY, "retention": dict.fromkeys(DEFAULT_POLICY["retention"])}


def stored_section(document, name: str) -> dict:
    """Return the section ``name`` of a stored policy document, {} when the document or the
    section is not a JSON object: one stored before today's checks (which refuse it) reads
    as absent, as retrieval reads it. Read as stored, a list or a string failed every write
    of the tenant (a 500) and every run of its retention sweep (stop 53's audit of
    retention)."""
    section = document.get(name) if isinstance(document, dict) else None
    return section if isinstance(section, dict) else {}


def retention_section(document) -> dict:
    """Return the retention of a stored policy ``document`` as every part of memledger reads
    it (admission, retrieval, the sweep, the pages, the export, the journal): each key the
    document lacks at its default (so too every key of a section or a document that is not a
    JSON object: ``stored_section``), ``null`` no limit; {} for no document (None: without an
    active policy nothing is limited). Admission filled a missing key with its default and
    the sweep read it as no limit: an episode got admission's 90 days and was then kept,
    expired, with no end (stop 54's audit of retention)."""
    if document is None:
        return {}
    return {**DEFAULT_POLICY["retention"], **stored_section(document, "retention")}
