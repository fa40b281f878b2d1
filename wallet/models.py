from django.db import models
from django.db.models import Q

from wallet.choices import LedgerKind
from wallet.fields import money_field
from wallet.validators import CURRENCY_CHECK_PATTERN, CURRENCY_MAX_LENGTH, MAX_BALANCE, validate_currency


class Account(models.Model):
    """A player's wallet, known to us by the operator's external player id."""

    external_id = models.CharField(max_length=100, unique=True)
    currency = models.CharField(max_length=CURRENCY_MAX_LENGTH, default="USD", validators=[validate_currency])
    balance = money_field("balance", default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "settlement_account"  # its name from the first release, when settlement held it
        ordering = ["external_id"]
        permissions = [("adjust_account", "Can adjust account balances")]
        constraints = [
            models.CheckConstraint(condition=Q(balance__gte=0), name="account_balance_non_negative"),
            models.CheckConstraint(
                condition=Q(currency__regex=CURRENCY_CHECK_PATTERN), name="account_currency_code"
            ),
        ]

    def __str__(self):
        return f"{self.external_id} ({self.currency})"


class LedgerEntry(models.Model):
    """Append-only: every change of a balance, signed, with the balance after it.

    ``bet_id`` names the bet whose stake, payout or refund the entry is. The wallet knows nothing
    of bets; the database holds the foreign key to the bets table (created by the first release's
    migrations), and LedgerEffect's primary key (bet_id, kind), written with every entry of a bet,
    stops any money effect of a bet from happening twice.
    """

    # No index of its own: ledger_account_idx leads with the account (one write less per entry).
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="ledger", db_index=False)
    bet_id = models.BigIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=10, choices=LedgerKind.choices)
    amount = money_field("amount")
    balance_after = money_field("balance after")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "settlement_ledgerentry"
        ordering = ["-id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=LedgerKind.values), name="ledger_kind_valid"),
            models.CheckConstraint(condition=Q(balance_after__gte=0), name="ledger_balance_non_negative"),
            models.CheckConstraint(
                condition=Q(kind=LedgerKind.ADJUSTMENT, bet_id__isnull=True)
                | Q(~Q(kind=LedgerKind.ADJUSTMENT), bet_id__isnull=False),
                name="ledger_bet_xor_adjustment",
            ),
            models.CheckConstraint(
                condition=Q(kind=LedgerKind.STAKE, amount__lt=0)
                | Q(kind__in=[LedgerKind.PAYOUT, LedgerKind.REFUND], amount__gt=0)
                | (Q(kind=LedgerKind.ADJUSTMENT) & ~Q(amount=0)),
                name="ledger_amount_sign_matches_kind",
            ),
            models.CheckConstraint(
                condition=~Q(kind=LedgerKind.ADJUSTMENT) | Q(amount__gte=-MAX_BALANCE, amount__lte=MAX_BALANCE),
                name="ledger_adjustment_within_max_balance",
            ),
        ]
        indexes = [
            # A bet's entries (not unique: LedgerEffect holds the one-effect rule).
            models.Index(fields=["bet_id", "kind"], name="ledger_bet_kind_idx"),
            models.Index(fields=["account", "-id"], name="ledger_account_idx"),
            # The admin's filter by kind, newest first (adjustments are rare among a million entries):
            # read backwards. Ascending, as every index led by a few values and ending in a growing
            # column: PostgreSQL packs the pages of one it appends to, not of one it prepends to.
            models.Index(fields=["kind", "id"], name="ledger_kind_id_idx"),
            # An account's adjustments over the four-eyes window (approvals.actions), adjustments only.
            models.Index(fields=["account", "created_at"], name="ledger_adjustment_window_idx",
                         condition=Q(kind=LedgerKind.ADJUSTMENT)),
        ]

    def __str__(self):
        return f"{self.kind} {self.amount} on {self.account.external_id}"


class LedgerEffect(models.Model):
    """A bet's money effect of one kind, its stake, payout or refund: at most one, by the database's
    primary key (bet_id, kind).

    Written with each ledger entry that carries a bet, in the same statement (wallet.writes, and the
    single bet's statement in games.writes) or transaction (ledger_post): a second payout of a bet
    fails its write with an IntegrityError on ``wallet_ledgereffect_pkey``. A table of its own rather
    than a unique index on the ledger, so that the ledger can be partitioned by month (every unique
    index of a partitioned table must hold its partition key, and a payout may come in the month
    after its stake).
    """

    pk = models.CompositePrimaryKey("bet_id", "kind")
    bet_id = models.BigIntegerField()
    kind = models.CharField(max_length=10, choices=LedgerKind.choices)

    def __str__(self):
        return f"{self.kind} of bet {self.bet_id}"
