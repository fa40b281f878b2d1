"""Rounds in the admin (read-only): cards as cards with their positions, hands and the tableau, the bets
with their ledger entries; voiding with a reason, the recomputation by PF-1, and the round recall."""

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Q, Sum
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from audit.forms import ReasonForm
from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.exports import csv_response
from backoffice.admin.filters import IndexedValuesFieldListFilter
from backoffice.admin.html import (
    admin_url,
    approval_request_link,
    changelist_url,
    link,
    money,
    query_with,
    service_error_text,
)
from backoffice.admin.search import matching_ids
from backoffice.approval_gate import Held, four_eyes_hint, submit
from backoffice.formatting import EMPTY
from backoffice.replica_reads import read_alias
from backoffice.step_up import step_up_required
from core.errors import Conflict
from core.money import money_text
from games import selectors, services
from games.admin.bet import BetInline, outcome_html
from games.admin.cards import card_html, cards_html, dealt_positions, hand_html, round_result
from games.choices import BetStatus, RoundStatus
from games.engine import third_card_reasons
from games.exports import ROUNDS_EXPORT
from games.forms import RoundRecallForm
from games.models import Bet, GameInstance, Round, SeedPair
from wallet.models import Account


class SettlementFilter(admin.SimpleListFilter):
    title = "settlement"
    parameter_name = "settlement"

    def lookups(self, request, model_admin):
        return (("waiting", "Waiting (dealt, not settled)"), ("failed", "Failed at least once"),
                ("stuck", f"Left for operators ({settings.MAX_SETTLEMENT_FAILURES}+ failures)"))

    def queryset(self, request, queryset):
        if self.value() == "waiting":
            return queryset.filter(status=RoundStatus.DEALT)
        if self.value() == "failed":
            return queryset.filter(settlement_failures__gte=1)
        if self.value() == "stuck":
            return queryset.filter(status=RoundStatus.DEALT, settlement_failures__gte=settings.MAX_SETTLEMENT_FAILURES)
        return queryset



@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    # The two scores share a column, so the list (outcome and time included) fits a laptop screen.
    list_display = ("id", "game", "status", "nonce", "cards_column", "scores", "natural", "outcome", "opened_at")
    # The shoe sizes played are read from round_decks_filter_idx, not from every round.
    list_filter = ("status", "outcome", "natural", "game", ("decks", IndexedValuesFieldListFilter), SettlementFilter,
                   "opened_at")
    list_select_related = ("game",)
    # What search_arms matches, in Django's notation (a game's slug in part, the rest exactly).
    search_fields = ("game__slug", "=seed_pair__server_seed_hash", "=bets__account__external_id")
    search_help_text = ("Game slug (or part of it), server seed hash (exact) or account external id (exact: the "
                        "rounds the account bet on); a number matches the round id.")
    inlines = [BetInline]
    actions = ["void_rounds"]
    csv_export = ROUNDS_EXPORT
    change_list_template = "admin/backoffice/change_list.html"
    fieldsets = (
        (None, {"fields": ("id", "game_link", "status", "opened_at", "dealt_at", "settled_at", "voided_at",
                           "void_reason", "settlement_failures")}),
        ("Deal", {"fields": ("cards_shown", "player_hand", "banker_hand", "natural", "outcome", "tableau")}),
        ("Provably fair", {"fields": ("seed_pair_link", "server_seed_hash", "client_seed", "nonce", "decks",
                                      "server_seed_shown", "verification")}),
        ("Money", {"fields": ("bet_totals",)}),
    )
    readonly_fields = ("id", "game_link", "status", "opened_at", "dealt_at", "settled_at", "voided_at",
                       "void_reason", "settlement_failures", "cards_shown", "player_hand", "banker_hand", "natural",
                       "outcome", "tableau", "seed_pair_link", "server_seed_hash", "client_seed", "nonce", "decks",
                       "server_seed_shown", "verification", "bet_totals")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("game", "seed_pair")

    @admin.display(description="scores")
    def scores(self, obj):
        if obj.player_score is None:
            return EMPTY
        return format_html('<span class="pf-nowrap" title="Player – Banker">{} – {}</span>', obj.player_score,
                           obj.banker_score)

    @admin.display(description="cards")
    def cards_column(self, obj):
        return cards_html(obj.cards)

    @admin.display(description="cards in dealt order")
    def cards_shown(self, obj):
        if not obj.cards:
            return EMPTY
        positions = format_html_join(
            "", '<li><span class="pf-position">{}</span> {} {}</li>',
            ((position, hand, card_html(label)) for position, hand, label in dealt_positions(obj)),
        )
        return format_html('{}<ol class="pf-positions">{}</ol>', cards_html(obj.cards), positions)

    @admin.display(description="game")
    def game_link(self, obj):
        return link(obj.game)

    @admin.display(description="player")
    def player_hand(self, obj):
        return hand_html(obj.player_cards, obj.player_score)

    @admin.display(description="banker")
    def banker_hand(self, obj):
        return hand_html(obj.banker_cards, obj.banker_score)

    @admin.display(description="third cards (tableau)")
    def tableau(self, obj):
        result = round_result(obj)
        if result is None:
            return EMPTY
        return format_html("<ul class='pf-reasons'>{}</ul>",
                           format_html_join("", "<li>{}</li>", ((reason,) for reason in third_card_reasons(result))))

    @admin.display(description="seed pair")
    def seed_pair_link(self, obj):
        return link(obj.seed_pair)

    @admin.display(description="server seed hash")
    def server_seed_hash(self, obj):
        return format_html("<code>{}</code>", obj.seed_pair.server_seed_hash)

    @admin.display(description="client seed")
    def client_seed(self, obj):
        return format_html("<code>{}</code>", obj.seed_pair.client_seed)

    @admin.display(description="server seed")
    def server_seed_shown(self, obj):
        seed = obj.seed_pair.revealed_server_seed
        if seed is None:
            return "Secret until the seed pair is revealed."
        return format_html("<code>{}</code>", seed)

    @admin.display(description="verification")
    def verification(self, obj):
        if not self.is_verifiable(obj):
            if obj.seed_pair.revealed_at is None:
                return "Possible once the seed pair is revealed."
            return "Never dealt: nothing to verify."
        return format_html(
            "The seed pair is revealed: “Recompute by PF-1” (above) recomputes the round and compares it. "
            'Players verify it themselves on <a href="{}" class="pf-public-pair">the public page of its seed pair</a>.',
            reverse("public-pair", args=[obj.seed_pair.server_seed_hash]))

    @admin.display(description="bets")
    def bet_totals(self, obj):
        totals = obj.bets.aggregate(count=Count("id"), staked=Sum("stake"), paid=Sum("payout"))
        if not totals["count"]:
            return "No bets."
        return format_html('{} bet{}, staked {}, returned {} {} · <a href="{}">list</a>', totals["count"],
                           pluralize(totals["count"]),
                           money(totals["staked"]), money(totals["paid"]), obj.game.currency,
                           changelist_url(Bet, round__id__exact=obj.pk))

    def search_arms(self, request, term):
        accounts = matching_ids(Account.objects.filter(external_id=term))
        return [
            Q(game_id__in=matching_ids(GameInstance.objects.filter(slug__icontains=term))),
            Q(seed_pair_id__in=matching_ids(SeedPair.objects.filter(server_seed_hash=term))),
            Bet.objects.filter(account_id__in=accounts).values_list("round_id", flat=True),
        ]

    # Voiding.

    def has_void_round_permission(self, request, obj=None):
        return request.user.has_perm("games.void_round")

    def _void(self, request, round_, reason) -> bool:
        """Void (or send for approval); True when the round was voided now."""
        try:
            outcome = submit(services.round_void, round_id=round_.pk, actor=request.user, reason=reason)
        except (Conflict, ValidationError) as error:
            self.message_user(request, f"Round {round_.pk} not voided. {service_error_text(error)}", messages.ERROR)
            return False
        if isinstance(outcome, Held):
            self.message_user(request, format_html("Round {}: voiding a dealt round needs a second person; sent for "
                                                   "approval ({}).", round_.pk,
                                                   approval_request_link(outcome.approval["id"])), messages.WARNING)
            return False
        # The audit trail holds the void; the admin's log shows it under "Recent actions" and History.
        self.log_change(request, round_, f"Voided, bets refunded: {reason}")
        return True

    @step_up_required
    @admin.action(description="Void selected rounds and refund their bets…", permissions=["void_round"])
    def void_rounds(self, request, queryset):
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            voided = sum(self._void(request, round_, form.cleaned_data["reason"]) for round_ in queryset.order_by("pk"))
            if voided:
                self.message_user(request, f"Voided {voided} round(s); their bets were refunded.", messages.SUCCESS)
            return None
        return self.action_form_response(
            request, title="Void rounds", form=form, objects=[link(round_) for round_ in queryset],
            action="void_rounds", queryset=queryset, submit_label="Void and refund",
            description="Voiding refunds every pending bet of each round. Only open or dealt rounds can be "
                        "voided."
                        + four_eyes_hint("round.void"),
        )

    @step_up_required
    def void_round_view(self, request, round_):
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            if self._void(request, round_, form.cleaned_data["reason"]):
                self.message_user(request, f"Round {round_.pk} voided; its bets were refunded.", messages.SUCCESS)
            return HttpResponseRedirect(admin_url(round_))
        return self.action_form_response(
            request, title=f"Void round {round_.pk}", form=form, objects=[], original=round_,
            details=[("Status", round_.get_status_display()), ("Game", round_.game.slug),
                     ("Pending bets", round_.bets.filter(status=BetStatus.PENDING).count())],
            submit_label="Void and refund",
            description="Voiding refunds every pending bet of the round. Only open or dealt rounds can be voided."
                        + four_eyes_hint("round.void"),
        )

    # Verification by PF-1, on request.

    def has_verify_round_permission(self, request, obj=None):
        return request.user.has_perm("games.verify_round")

    @staticmethod
    def is_verifiable(round_) -> bool:
        return round_.seed_pair.revealed_at is not None and bool(round_.cards)

    def verify_round_view(self, request, round_):
        """GET: recompute the round from its revealed seed pair (selectors.round_verification) and show
        the stored and recomputed deal side by side. Nothing is written, so the page can be linked and
        reloaded."""
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        try:
            verification = selectors.round_verification(round_=round_)
        except Conflict as conflict:
            self.message_user(request, f"Round {round_.pk} not verified. {conflict.message}", messages.ERROR)
            return HttpResponseRedirect(admin_url(round_))
        if verification["verified"]:
            self.message_user(request, f"Round {round_.pk} recomputed by PF-1: it matches the stored round.",
                              messages.SUCCESS)
        else:
            self.message_user(request, f"Round {round_.pk} recomputed by PF-1: it does NOT match "
                                       f"({', '.join(verification['mismatches'])} differ).", messages.ERROR)
        stored, recomputed = verification["stored"], verification["recomputed"]
        comparison = [
            (label, render(stored), render(recomputed), key not in verification["mismatches"])
            for key, label, render in (
                ("server_seed_hash", "Server seed hash",
                 lambda d: format_html("<code>{}</code>", d["server_seed_hash"])),
                ("cards", "Cards in dealt order", lambda d: cards_html(d["cards"])),
                ("player", "Player", lambda d: hand_html(d["player"]["cards"], d["player"]["score"])),
                ("banker", "Banker", lambda d: hand_html(d["banker"]["cards"], d["banker"]["score"])),
                ("natural", "Natural", lambda d: "yes" if d["natural"] else "no"),
                ("outcome", "Outcome", lambda d: d["outcome"]),
            )
        ]
        context = {
            **self.admin_site.each_context(request),
            "title": f"Round {round_.pk} recomputed by PF-1",
            "opts": self.opts,
            "original": round_,
            "verification": verification,
            "comparison": comparison,
            # Each bet type's event on the deal, once the stored deal is the one its seeds give.
            "bet_events": selectors.round_bet_events(round_=round_) if verification["verified"] else None,
            "media": self.media,
        }
        return TemplateResponse(request, "admin/games/round/verification.html", context)

    # Round recall: find rounds by id, account, game or time.

    RECALL_PER_PAGE = 50

    def recall_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = RoundRecallForm(request.GET or None)
        results, account_bets = None, None
        if form.is_valid():
            try:
                page = int(request.GET.get("page", 1))
            except ValueError:
                page = 1
            criteria = form.criteria()
            results = selectors.round_search_page(page=page, per_page=self.RECALL_PER_PAGE, using=read_alias(request),
                                                  **criteria)
            if criteria["account"]:  # what the player bet on each round, and why it won or lost
                account_bets = selectors.account_bets_of_rounds(
                    account=criteria["account"], round_ids=[round_.pk for round_ in results.rounds],
                    using=read_alias(request))

        context = {
            **self.admin_site.each_context(request),
            "title": "Round recall",
            "opts": self.opts,
            "form": form,
            "results": results,
            "account_bets": account_bets is not None,
            "rows": [] if results is None else [
                {"round": round_, "url": admin_url(round_), "cards": cards_html(round_.cards),
                 "staked": money_text(round_.staked, round_.game.currency) if round_.bet_count else EMPTY,
                 "paid": money_text(round_.paid, round_.game.currency) if round_.paid is not None else EMPTY,
                 "account_bets": [(admin_url(bet), bet, money_text(bet.stake, round_.game.currency), outcome_html(bet))
                                  for bet in (account_bets or {}).get(round_.pk, [])]}
                for round_ in results.rounds
            ],
            "export_url": (f"{self.own_url('recall_export')}?{request.GET.urlencode()}"
                           if results and results.rounds else None),
            "next_url": query_with(request, page=results.page + 1) if results and results.has_next else None,
            "previous_url": (query_with(request, page=results.page - 1) if results and results.has_previous
                             else None),
            "media": self.media + form.media,
        }
        return TemplateResponse(request, "admin/games/round/recall.html", context)

    def recall_export_view(self, request):
        """Every round the recall search finds (all pages), as the rounds' CSV export."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = RoundRecallForm(request.GET)
        if not form.is_valid():
            return HttpResponseRedirect(f"{self.own_url('recall')}?{request.GET.urlencode()}")
        return csv_response(ROUNDS_EXPORT, selectors.round_search(using=read_alias(request), **form.criteria()))

    def changelist_tools(self, request) -> list:
        return [(self.own_url("recall"), "Round recall", "pf-round-recall"),
                *super().changelist_tools(request)]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        round_ = self.get_object(request, unquote(object_id))
        if (round_ is not None and round_.status in (RoundStatus.OPEN, RoundStatus.DEALT)
                and self.has_void_round_permission(request, round_)):
            extra_context["void_url"] = self.own_url("void", quote(round_.pk))
        if round_ is not None and self.is_verifiable(round_) and self.has_verify_round_permission(request, round_):
            extra_context["verify_url"] = self.own_url("verify", quote(round_.pk))
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        return [
            path("recall/", self.admin_site.admin_view(self.recall_view), name=self.url_name("recall")),
            path("recall/export/", self.admin_site.admin_view(self.recall_export_view),
                 name=self.url_name("recall_export")),
            path("<path:object_id>/void/", self.object_view(self.void_round_view, self.has_void_round_permission,
                                                             "games.void_round"),
                 name=self.url_name("void")),
            path("<path:object_id>/verify/", self.object_view(self.verify_round_view,
                                                               self.has_verify_round_permission,
                                                               "games.verify_round"),
                 name=self.url_name("verify")),
            *super().get_urls(),
        ]

