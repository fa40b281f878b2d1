"""Which Django permissions only read: shared by the role matrix (backoffice.roles, whose read-only
roles may hold nothing else) and the API tokens' scopes (apitokens: a ``read`` token may use only
these)."""

# The reads that are not a view_ permission: a round recomputed by PF-1 (GET only), the dashboard.
READ_PERMISSIONS = frozenset({"games.verify_round", "settlement.view_dashboard"})


def is_read_permission(code: str) -> bool:
    """``"app_label.codename"`` -> whether it only lets its holder read."""
    return code.split(".")[1].startswith("view_") or code in READ_PERMISSIONS
