"""Bets in the admin (read-only), each with its ledger entries and why it won or lost: on its own page and
inline on its round's."""

from functools import cached_property

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.forms.models import BaseInlineFormSet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from backoffice import formatting
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import admin_url, link
from backoffice.admin.search import matching_ids
from backoffice.formatting import EMPTY
from games import selectors
from games.choices import BetStatus
from games.engine import bet_outcome, paytable_lines
from games.exports import BETS_EXPORT
from games.models import UNPAID_BET_STATUSES, Bet
from wallet.models import Account


def ledger_entries_html(entries):
    """A bet's ledger entries: kind, signed amount and the balance after, each linked."""
    if not entries:
        return EMPTY
    return format_html_join(
        mark_safe("<br>"), '<a href="{}">{}</a> {} → balance {}',
        ((admin_url(entry), entry.get_kind_display(), entry.amount, entry.balance_after) for entry in entries),
    )


def outcome_html(bet):
    """Why the bet won or lost: its event on the round and what it was paid at ("Pair: × 12", "No pair:
    lost", "Natural tie: push"), the paytable it settles on in the title. Reads ``bet.round``."""
    round_ = bet.round
    outcome = bet_outcome(bet.bet_type, bet.multiplier, bet.paytable, round_.cards, round_.player_cards,
                          round_.banker_cards)
    if outcome is None:
        return EMPTY
    if bet.status == BetStatus.REFUNDED:  # a dealt round voided: the deal stands, the stake came back
        paid = "refunded"
    elif bet.status in UNPAID_BET_STATUSES:
        paid = f"{outcome.paid} once settled"
    else:
        paid = outcome.paid
    return format_html('<span class="pf-bet-outcome" data-event="{}" title="{}">{}: {}</span>', outcome.event,
                       outcome.paytable_text, outcome.event_label, paid)


def paytable_html(bet):
    """A side bet's paytable as accepted, one row an event; EMPTY for a main bet (its multiplier)."""
    if bet.paytable is None:
        return EMPTY
    rows = format_html_join("", '<tr data-event="{}"><th scope="row">{}</th><td>{}</td></tr>',
                            paytable_lines(bet.bet_type, bet.paytable))
    return format_html('<table class="pf-bet-paytable"><tbody>{}</tbody></table><p class="help">Any other event '
                       "loses.</p>", rows)


class BetsWithLedgerFormSet(BaseInlineFormSet):
    """The bets of a round, each given its ledger entries (``bet.ledger_entries_shown``) by one query
    for all of them. The formset's forms take their bets from this one evaluated queryset."""

    @cached_property
    def _bets_with_ledger(self):
        bets = super().get_queryset()
        entries = selectors.ledger_entries_of_bets(bet.pk for bet in bets)
        for bet in bets:
            bet.ledger_entries_shown = entries.get(bet.pk, [])
        return bets

    def get_queryset(self):
        return self._bets_with_ledger


class BetInline(admin.TabularInline):
    model = Bet
    formset = BetsWithLedgerFormSet
    fields = ("bet_link", "account", "bet_type", "stake_shown", "multiplier", "status", "event_paid", "payout_shown",
              "ledger", "placed_at", "hold_reason")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("account", "round")

    @admin.display(description="bet")
    def bet_link(self, obj):
        return link(obj, f"#{obj.pk}")

    @admin.display(description="ledger entries")
    def ledger(self, obj):
        return ledger_entries_html(obj.ledger_entries_shown)

    @admin.display(description="event · paid")
    def event_paid(self, obj):
        return outcome_html(obj)

    @admin.display(description="stake")
    def stake_shown(self, obj):
        return money_in_currency(obj.stake, obj)

    @admin.display(description="payout")
    def payout_shown(self, obj):
        return money_in_currency(obj.payout, obj)


def money_in_currency(amount, bet) -> str:
    """A bet's amount at its currency's places, with the currency (the column holds eight places)."""
    return EMPTY if amount is None else formatting.money(amount, bet.account.currency)


class PlacedAtFilter(admin.DateFieldListFilter):
    """Django's date filter on ``placed_at``, with the ids of the months it spans beside it: a bet's id
    carries its month, so only those months' partitions are read (without it, a week read every
    month's bets: 503 ms at 10 million bets over three months)."""

    def queryset(self, request, queryset):
        queryset = super().queryset(request, queryset)
        since, until = (self._moment(name) for name in (self.lookup_kwarg_since, self.lookup_kwarg_until))
        if since is None or until is None:
            return queryset
        return queryset.filter(selectors.bet_ids_placed(since=since, until=until, using=queryset.db))

    def _moment(self, name):
        values = self.used_parameters.get(name) or [None]
        moment = parse_datetime(str(values[-1]))  # valid: the filter above has parsed it
        if moment is not None and timezone.is_naive(moment):
            moment = timezone.make_aware(moment)
        return moment


@admin.register(Bet)
class BetAdmin(ReadOnlyAdmin):
    # The event and what it paid rather than the multiplier (a side bet's is only its paytable's
    # highest), so that the list fits a laptop's screen; the bet's page shows both.
    list_display = ("id", "round_link", "game", "account", "bet_type", "stake_shown", "status", "event_paid",
                    "payout_shown", "placed_at")
    list_filter = ("status", "bet_type", "round__game", ("placed_at", PlacedAtFilter))
    list_select_related = ("round__game", "account")
    search_fields = ("=account__external_id", "=idempotency_key", "=client__username")
    search_help_text = ("Account external id, idempotency key or client user name (each exact); a number matches "
                        "the bet id or the round id.")
    numeric_search_fields = ("round_id",)
    csv_export = BETS_EXPORT
    change_list_template = "admin/backoffice/change_list.html"
    fields = ("id", "round_link", "game", "account", "client", "bet_type", "stake_shown", "multiplier",
              "paytable_shown", "idempotency_key", "status", "event_paid", "payout_shown", "placed_at", "settled_at",
              "hold_reason", "held_at", "ledger")
    readonly_fields = fields

    @admin.display(description="stake", ordering="stake")
    def stake_shown(self, obj):
        return money_in_currency(obj.stake, obj)

    @admin.display(description="payout", ordering="payout")
    def payout_shown(self, obj):
        return money_in_currency(obj.payout, obj)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("round__game", "account", "client")

    def search_arms(self, request, term):
        return [
            Q(account_id__in=matching_ids(Account.objects.filter(external_id=term))),
            Q(client_id__in=matching_ids(get_user_model().objects.filter(username=term))),
            Q(idempotency_key=term),  # on bet_idempotency_key_idx
        ]

    @admin.display(description="round", ordering="round_id")
    def round_link(self, obj):
        return link(obj.round, f"#{obj.round_id}")

    @admin.display(description="game")
    def game(self, obj):
        return obj.round.game.slug

    @admin.display(description="ledger entries")
    def ledger(self, obj):
        return ledger_entries_html(selectors.ledger_entries_of_bets([obj.pk]).get(obj.pk, []))

    @admin.display(description="event · paid")
    def event_paid(self, obj):
        return outcome_html(obj)

    @admin.display(description="paytable")
    def paytable_shown(self, obj):
        return paytable_html(obj)
