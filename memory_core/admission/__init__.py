"""The write path's admission policy: deterministic rules, no model calls (DESIGN.md, "Write path").

``admit(candidate, grant, context) -> Decision`` decides; ``memory_core.services.writes`` gathers
the context from storage, stores the decision and the memory.
"""

from memory_core.admission.candidate import (
    Candidate,
    correction_fields,
    parse_batch,
    parse_candidate,
    parse_correction,
)
from memory_core.admission.policy import (
    ACCEPTED,
    PENDING,
    REJECTED,
    RULE_CODES,
    AdmissionContext,
    Decision,
    Grant,
    Head,
    admit,
    check_content,
    decision_message,
    read_source,
)

__all__ = [
    "ACCEPTED",
    "PENDING",
    "REJECTED",
    "RULE_CODES",
    "AdmissionContext",
    "Candidate",
    "Decision",
    "Grant",
    "Head",
    "admit",
    "check_content",
    "correction_fields",
    "decision_message",
    "parse_batch",
    "parse_candidate",
    "parse_correction",
    "read_source",
]
