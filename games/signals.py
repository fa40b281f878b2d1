"""Signals the games app sends; other apps (settlement) subscribe, games knows none of them."""

from django.dispatch import Signal

# Sent once the transaction that dealt rounds has committed, with ``round_ids``.
round_dealt = Signal()

# Sent inside the transaction that voided a round, with ``round_``: a receiver's writes (a webhook
# outbox row) commit or roll back with the void.
round_voided = Signal()

# Sent inside the transaction that revealed a seed pair, with ``pair``.
seeds_revealed = Signal()

# Sent by the bet endpoints once they have answered, with ``accepted`` (the new bets, their rounds and
# games loaded) and ``refused`` (the errors that refused bets); by the bulk endpoint also with
# ``bulk_size`` (the bets it was asked for). Cached per sender: a bet's cost when nothing listens.
bets_answered = Signal(use_caching=True)
