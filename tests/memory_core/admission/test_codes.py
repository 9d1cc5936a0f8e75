"""The admission rule codes: which of them mark a write refused at the tenant's boundary."""

from memory_core.admission import codes
from memory_core.admission.codes import RULE_CODES, SCOPE_CODES, SCOPE_RULES, codes_of_rules


def test_the_boundary_codes_are_the_tenancy_and_grant_rules():
    """The health page counted a refusal as cross-scope when its code held "scope", "tenant",
    "subject", "other_agent", "cross", "not_visible" or "grant": four of those matched no
    code, and any future code naming the subject would have counted. The selection is by
    rule: the same five codes as the words picked until now."""
    assert SCOPE_RULES == (1, 2)
    assert SCOPE_CODES == {
        "tenant.subject_unknown",
        "tenant.subject_mismatch",
        "tenant.subject_not_granted",
        "grant.type_not_allowed",
        "grant.sensitivity_above_max",
    }
    assert SCOPE_CODES == {code for code, (rule, _) in RULE_CODES.items() if rule in (1, 2)}


def test_a_new_code_of_another_rule_naming_the_subject_is_not_a_boundary_code(monkeypatch):
    monkeypatch.setitem(codes.RULE_CODES, "fields.subject_too_long", (3, "Too long."))
    monkeypatch.setitem(codes.RULE_CODES, "tenant.scope_unknown", (1, "No such scope."))
    selected = codes_of_rules(*SCOPE_RULES)
    assert "fields.subject_too_long" not in selected
    assert "tenant.scope_unknown" in selected
