from django.db import models
from django.db.models import F, Q

from games.validators import BET_TYPE_MAX_LENGTH
from wallet.fields import money_field
from wallet.models import Account
from wallet.validators import CURRENCY_MAX_LENGTH


class BatchOutcome(models.TextChoices):
    OK = "ok", "OK"
    FAILED = "failed", "Failed"


class SettlementBatch(models.Model):
    """One run of the settlement worker: what it claimed, what it paid, and how it ended."""

    Outcome = BatchOutcome

    worker = models.CharField(max_length=150)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    rounds = models.PositiveIntegerField(default=0)
    bets = models.PositiveIntegerField(default=0)
    # The sums of a batch in one currency; NULL for one whose rounds play in several (amounts of two
    # currencies are never added): ``totals`` has each currency's.
    total_staked = money_field("total staked", default=0, null=True, blank=True)
    total_paid = money_field("total paid out", default=0, null=True, blank=True)
    totals = models.JSONField(default=dict, blank=True,
                              help_text='By currency: {"USD": {"bets": 12, "staked": "120.00", "paid": "98.50"}}.')
    round_ids = models.JSONField(default=list, blank=True)
    outcome = models.CharField(max_length=8, choices=BatchOutcome.choices)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "settlement batches"
        permissions = [("request_sweep", "Can request a settlement sweep")]
        constraints = [
            models.CheckConstraint(
                condition=Q(outcome__in=BatchOutcome.values), name="batch_outcome_valid"
            ),
            models.CheckConstraint(condition=Q(total_paid__gte=0, total_staked__gte=0),
                                   name="batch_totals_non_negative"),
        ]

    def __str__(self):
        return f"Batch {self.pk} ({self.outcome}, {self.rounds} rounds)"


# --- Daily aggregates of settled play (settlement.aggregates keeps them; the dashboard reads them) ---
#
# A day is the UTC date on which the round was settled (when its money moved). Amounts are whole
# minor units of the game's currency (cents, yen, fils, satoshis) so that sums are exact; the
# theoretical return is in 10^-8 of the currency, a millionth of a cent (see settlement.aggregates).


class DailyBetTotals(models.Model):
    """Settled bets of one game and bet type on one day."""

    day = models.DateField()
    game = models.ForeignKey("games.GameInstance", on_delete=models.PROTECT, related_name="+")
    bet_type = models.CharField(max_length=BET_TYPE_MAX_LENGTH)  # any registered bet type, side bets too
    bets = models.BigIntegerField(default=0)
    won = models.BigIntegerField(default=0)
    lost = models.BigIntegerField(default=0)
    pushed = models.BigIntegerField(default=0)
    handle_cents = models.BigIntegerField(default=0, help_text="Total staked, in minor units of the game's currency.")
    paid_out_cents = models.BigIntegerField(default=0, help_text="Total returned (stakes included), in minor units.")
    expected_return_ucents = models.BigIntegerField(
        default=0, help_text="Σ stake × exact RTP of the bet's multiplier and shoe, in 10^-8 of the currency.")

    class Meta:
        ordering = ["-day", "game", "bet_type"]
        verbose_name_plural = "daily bet totals"
        permissions = [("view_dashboard", "Can view the operations dashboard")]
        constraints = [
            models.UniqueConstraint(fields=["day", "game", "bet_type"], name="daily_bets_one_row_per_key"),
        ]

    def __str__(self):
        return f"{self.day} {self.game_id} {self.bet_type}: {self.bets} bets"


class DailyRoundTotals(models.Model):
    """Settled rounds of one game and shoe size on one day, and how long they waited for settlement."""

    day = models.DateField()
    game = models.ForeignKey("games.GameInstance", on_delete=models.PROTECT, related_name="+")
    decks = models.PositiveSmallIntegerField()
    rounds = models.BigIntegerField(default=0)
    player_wins = models.BigIntegerField(default=0)
    banker_wins = models.BigIntegerField(default=0)
    ties = models.BigIntegerField(default=0)
    naturals = models.BigIntegerField(default=0)
    lag_ms_sum = models.BigIntegerField(default=0, help_text="Σ (settled − dealt), in milliseconds.")
    lag_ms_max = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["-day", "game", "decks"]
        verbose_name_plural = "daily round totals"
        constraints = [
            models.UniqueConstraint(fields=["day", "game", "decks"], name="daily_rounds_one_row_per_key"),
        ]

    def __str__(self):
        return f"{self.day} {self.game_id} {self.decks} decks: {self.rounds} rounds"


class ActiveAccountMonth(models.Model):
    """The days of one month on which an account had a bet settled on one game: bit d − 1 of ``days``
    is day d. Distinct accounts over any period read one row per account, game and month of the
    period (the days of the period as a mask), not one per account and day."""

    month = models.DateField(help_text="The first day of the month.")
    game = models.ForeignKey("games.GameInstance", on_delete=models.PROTECT, related_name="+")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+", db_index=False)
    days = models.BigIntegerField(default=0, help_text="Bit d − 1 set: active on day d of the month.")

    class Meta:
        verbose_name = "active account month"
        constraints = [
            models.UniqueConstraint(fields=["month", "game", "account"], name="active_month_one_row_per_key"),
        ]
        # An account's months, for the days around one it is first active on (ReturningAccounts); it
        # serves the account's foreign key too. The game included: the nearest month of a scope is
        # found in the index alone; not the days, which every batch changes.
        indexes = [models.Index(fields=["account", "month"], include=["game"], name="active_month_by_account")]

    def __str__(self):
        return f"{self.month:%Y-%m} {self.game_id} account {self.account_id}: {self.days:b}"

    def active_days(self) -> list:
        return [day for day in range(1, 32) if self.days >> (day - 1) & 1]


class ReturningAccounts(models.Model):
    """How many accounts were active on ``day`` with ``previous_day`` as their active day before it
    (NULL: their first), on one game or, with ``game`` NULL, on any game of ``currency``.

    Each account active in a period has exactly one active day in it whose previous active day falls
    before the period: so the distinct accounts of any period are the sum of the rows with ``day`` in
    it and ``previous_day`` before it (or NULL), at most days² / 2 rows per scope whatever the number
    of accounts. A row may come down to 0 when a day is recorded between two others (a held bet
    settled later); it then counts nothing. (No CHECK on ``accounts``: PostgreSQL checks the row an
    upsert proposes, the −1 that lowers a row, before it finds the row to add it to.)"""

    currency = models.CharField(max_length=CURRENCY_MAX_LENGTH)
    game = models.ForeignKey("games.GameInstance", on_delete=models.PROTECT, related_name="+", null=True,
                             help_text="None: every game of the currency.")
    day = models.DateField()
    previous_day = models.DateField(null=True, help_text="None: the accounts' first active day.")
    accounts = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = "returning accounts"
        verbose_name_plural = "returning accounts"
        constraints = [
            models.UniqueConstraint(fields=["currency", "game", "day", "previous_day"], nulls_distinct=False,
                                    name="returning_one_row_per_key"),
            models.CheckConstraint(condition=Q(previous_day__isnull=True) | Q(previous_day__lt=F("day")),
                                   name="returning_previous_day_before_day"),
        ]

    def __str__(self):
        return f"{self.currency} {self.game_id or 'all'} {self.day} after {self.previous_day}: {self.accounts}"
