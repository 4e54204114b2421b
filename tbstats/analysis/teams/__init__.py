"""The team counterparts of the audit and the explanation (rules.md Section 9)."""
