# ruff: noqa: E501
"""The admission rule codes: stable identifiers, the rule (1-10 of DESIGN.md) each belongs to,
and the sentence a human reads (agents in the 422 message, reviewers in the portal)."""

# Every rule code, what it means (shown to agents and reviewers), and the rule it belongs to.
RULE_CODES: dict[str, tuple[int, str]] = {
    "tenant.subject_unknown": (
        1,
        "The subject does not exist in this tenant and the agent may not create subjects.",
    ),
    "tenant.subject_mismatch": (1, "This principal may only write memories about its own subject."),
    "tenant.subject_not_granted": (
        1,
        "The agent may act only for the subject of a valid subject token (X-Memledger-Subject-Token).",
    ),
    "grant.type_not_allowed": (2, "The agent's grant does not allow writing this memory type."),
    "grant.sensitivity_above_max": (2, "The declared sensitivity is above the agent's maximum."),
    "fields.content_empty": (3, "The content is empty (or holds only invisible characters)."),
    "fields.content_too_long": (3, "The content is longer than the tenant policy allows."),
    "fields.key_too_long": (3, "The memory_key is longer than the tenant policy allows."),
    "fields.value_too_large": (3, "The structured value is larger than the tenant policy allows."),
    "fields.value_labels_too_long": (
        3,
        "The value's items, each read after its key and after the memory_key, make more than the 32,000 characters admission reads; write fewer or shorter items, or a shorter key.",
    ),
    "fields.duplicate_in_batch": (
        3,
        "The batch already holds a write for this memory_key, type, scope and environment.",
    ),
    "class.business_state": (
        4,
        "Business state (balances, orders, refunds, prices) is never stored; store a pointer {system, reference} to the owning system.",
    ),
    "class.access_rule": (
        4,
        "Roles, permissions and access rules are never stored as memory; they live in the identity system.",
    ),
    "class.policy": (4, "Policy is versioned configuration, never a memory."),
    "class.pointer": (
        4,
        "Stored as a pointer to the owning system (value.system + value.reference).",
    ),
    "injection.instruction_override": (5, "The text tries to override the model's instructions."),
    "injection.persistent_override": (
        5,
        "The text tries to install a standing order ('from now on always ...').",
    ),
    "injection.identity_claim": (
        5,
        "The text claims an identity, role or verification status; memory can't change identity.",
    ),
    "injection.privilege_escalation": (
        5,
        "The text tries to grant rights or switch security checks off.",
    ),
    "injection.payment_redirect": (5, "The text tries to route money to an account."),
    "injection.exfiltration": (5, "The text tries to send data to an outside address or link."),
    "injection.extraction": (
        5,
        "The text tries to make the model reveal its prompt or other people's data.",
    ),
    "injection.trigger": (5, "The text plants a trigger that fires a harmful action."),
    "injection.entity_redirect": (
        5,
        "The text tries to redirect one person's or record's data to another.",
    ),
    "injection.split_write": (
        5,
        "Together with a recent write about the same subject (this agent's, or a shared memory; its content or its value), the text forms an instruction.",
    ),
    "injection.obfuscated": (
        5,
        "The instruction was hidden (invisible characters, look-alike letters, leetspeak, encoding).",
    ),
    "source.tool_required": (6, "verified_tool_output needs the name of the tool (source.tool)."),
    "source.admin_not_allowed": (6, "Only memledger's trusted paths may write with source admin."),
    "source.authority_not_allowed": (
        6,
        "This source can't claim this authority: a writer may keep its source's or lower it "
        "to model_inference, never raise it.",
    ),
    "source.confidence_capped": (
        6,
        "Model inference is capped at the policy's maximum confidence.",
    ),
    "source.confidence_below_floor": (
        6,
        "The confidence (after the cap for model inference) is below the tenant policy's floor for what is kept (admission.confidence_floor).",
    ),
    "consent.explicit_not_allowed": (
        7,
        "Only the user's own words (source user_input) carry explicit consent; a writer can't "
        "claim it for a model's inference or a tool's output.",
    ),
    "consent.workflow_not_approved": (
        7,
        "This memory type needs the user's explicit consent; workflow consent is not approved for it.",
    ),
    "sensitivity.above_agent_max": (8, "The content's sensitivity is above the agent's maximum."),
    "sensitivity.review_required": (
        8,
        "A sensitive category: a reviewer must approve the write before it is used.",
    ),
    "sensitivity.kept_from_head": (
        8,
        "Kept at the sensitivity of the version it replaces: an agent may not lower it.",
    ),
    "ttl.in_past": (9, "valid_until is not in the future."),
    "ttl.defaulted": (9, "valid_until defaulted from the class retention policy."),
    "ttl.capped": (9, "valid_until was capped by the class retention policy."),
    "supersession.supersedes": (
        10,
        "Supersedes the current version of this memory_key (equal or higher authority).",
    ),
    "supersession.conflict_lower_authority": (
        10,
        "Lower authority than the current version: kept as a separate, non-winning chain and sent to review as a conflict.",
    ),
    "supersession.not_head": (10, "Only the active head of a chain can be superseded."),
}


def codes_of_rules(*rules: int) -> frozenset[str]:
    """Return the rule codes that belong to any of ``rules`` (their numbers in RULE_CODES)."""
    return frozenset(code for code, (rule, _sentence) in RULE_CODES.items() if rule in rules)


# The rules of the tenant's boundary: who the write is about (1, tenancy) and what the agent's
# grant lets it write (2). A write refused by one of their codes is a cross-scope denial (the
# reviewers' health page counts them).
SCOPE_RULES = (1, 2)
SCOPE_CODES = codes_of_rules(*SCOPE_RULES)


# Codes that explain an accepted or pending write; every other code refuses it.
INFORMATIONAL = {
    "class.pointer",
    "source.confidence_capped",
    "sensitivity.review_required",
    "sensitivity.kept_from_head",
    "ttl.defaulted",
    "ttl.capped",
    "supersession.supersedes",
    "supersession.conflict_lower_authority",
    "injection.obfuscated",
}


# The refusals of a policy limit, and the admission knob and unit their message quotes: "The
# content is longer than the tenant policy allows (4000 characters)."
POLICY_LIMITS: dict[str, tuple[str, str]] = {
    "fields.content_too_long": ("max_content_chars", "characters"),
    "fields.key_too_long": ("max_key_chars", "characters"),
    "fields.value_too_large": ("max_value_bytes", "bytes"),
}
