"""The games' pages of the back-office admin, one module per model.

Every write goes through ``games.services`` with the signed-in user as the actor, so the admin
writes exactly what the API writes, audited the same way. Permissions come from the role groups
(``backoffice.roles``); pages a role can only view are read-only. ``ledger`` extends the wallet's
pages with the bets behind ledger entries.
"""

from games.admin import bet, game, ledger, policy, round, seed_pair  # noqa: F401  (each registers its admin)
