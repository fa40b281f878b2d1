"""The operator back-office in the Django admin: games, seed pairs, rounds, bets and the audit trail.

Every write goes through ``games.services`` with the signed-in user as the actor, so the admin
writes exactly what the API writes, audited the same way. Permissions come from the role groups
(``games.roles``); pages a role can only view are read-only.

The server seed of an unrevealed pair never reaches a page: no admin shows the ``server_seed``
field (only ``SeedPair.revealed_server_seed``), none searches it, and no admin accepts a URL lookup
on it (``?server_seed__startswith=`` would otherwise make the changelist an oracle for it).
"""

import json
from decimal import Decimal

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import quote, unquote
from django.contrib.admin.views.main import ERROR_FLAG, PAGE_VAR, ChangeList
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError
from django.db.models import Count, Prefetch, Q, Sum
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpResponseNotAllowed, HttpResponseRedirect, JsonResponse
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils import timezone

from games import exports, selectors, services
from backoffice.admin_paginator import CappedCountPaginator
from games.choices import RoundStatus
from games.engine import RoundResult, label_symbol, third_card_reasons
from games.engine.cards import LABELS
from games.errors import Conflict
from audit.forms import ReasonForm
from games.forms import GameInstanceForm, RotateSeedForm, RoundRecallForm, rtp_preview
from audit.models import AuditEvent
from games.models import Bet, GameInstance, Round, SeedPair
from wallet.models import Account, LedgerEntry
from django.conf import settings
MAX_SETTLEMENT_FAILURES = 5


SECRET_FIELD = "server_seed"
RED_SUITS = ("D", "H")
EMPTY = "—"
# At most this many ids of a small table (games, accounts, users, seed pairs) feed a search.
SEARCH_ID_LIMIT = 1000
# A search arm matching more rows than this is kept as a condition (see indexed_search).
SEARCH_KEYS_CAP = 1000


# --- Shared pieces (settlement.admin uses them too) ------------------------------------------------

def admin_url(obj, action: str = "change") -> str:
    opts = obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{action}", args=[quote(obj.pk)])


def changelist_url(model, **params) -> str:
    opts = model._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    return f"{url}?{urlencode(params)}" if params else url


def link(obj, text=None):
    if obj is None:
        return EMPTY
    return format_html('<a href="{}">{}</a>', admin_url(obj), text if text is not None else obj)


def card_html(label: str):
    colour = "red" if label[-1] in RED_SUITS else "black"
    return format_html('<span class="pf-card pf-card-{}">{}</span>', colour, label_symbol(label))


def cards_html(labels):
    if not labels:
        return EMPTY
    return format_html('<span class="pf-cards">{}</span>',
                       format_html_join(" ", "{}", ((card_html(label),) for label in labels)))


def ledger_entries_html(entries):
    """A bet's ledger entries: kind, signed amount and the balance after, each linked."""
    if not entries:
        return EMPTY
    return format_html_join(
        "<br>", '<a href="{}">{}</a> {} → balance {}',
        ((admin_url(entry), entry.get_kind_display(), entry.amount, entry.balance_after) for entry in entries),
    )


def money(value) -> str:
    """An amount with its two decimal places (SQLite aggregates drop them)."""
    return f"{Decimal(value or 0):.2f}"


def json_html(value):
    if value in (None, "", {}, []):
        return EMPTY
    return format_html('<pre class="pf-json">{}</pre>', json.dumps(value, indent=2, sort_keys=True,
                                                                 ensure_ascii=False))


def service_error_messages(error) -> dict:
    """A ValidationError or Conflict as {field or None: [messages]}."""
    if isinstance(error, Conflict):
        return error.message_dict
    if hasattr(error, "error_dict"):
        return error.message_dict
    return {None: error.messages}


def service_error_text(error) -> str:
    parts = []
    for field, field_messages in service_error_messages(error).items():
        text = " ".join(str(message) for message in field_messages)
        parts.append(f"{field.replace('_', ' ')}: {text}" if field and field != "__all__" else text)
    return "; ".join(parts)


class BackOfficeAdmin(admin.ModelAdmin):
    """Base of every back-office admin.

    - No URL lookup touches the server seed (see the module docstring).
    - A numeric search term also matches the primary key (and ``numeric_search_fields``) exactly,
      by index, instead of a text match over an integer column.
    - The admins of the big tables (rounds, bets, ledger, audit) say how to search in
      ``search_arms``: each arm an index-backed lookup, combined by ``indexed_search`` (see there)
      instead of Django's OR over joined tables, which reads whole tables at a million rows.
    - Nothing is ever deleted from the back-office: records are retired, voided or reversed.
    """

    numeric_search_fields: tuple = ()
    max_int_search_digits = 18
    # Lists never count a whole table: at most CAP rows, shown as "about N" or "more than N".
    paginator = CappedCountPaginator
    show_full_result_count = False
    # The CSV export of the changelist (games.exports), offered to those who may view the model.
    csv_export: exports.Export | None = None

    class Media:
        css = {"all": ("games/admin.css",)}

    def lookup_allowed(self, lookup, value, request=None):
        if SECRET_FIELD in lookup.split(LOOKUP_SEP):
            return False
        return super().lookup_allowed(lookup, value, request)

    def search_arms(self, request, term: str):
        """None (Django's search over ``search_fields``), or the arms of an index-backed search: see
        ``indexed_search``. ``term`` is stripped and not empty; the numeric matches are added."""
        return None

    def get_search_results(self, request, queryset, search_term):
        base = queryset
        term = search_term.strip()
        if not term:
            return queryset, False
        arms = self.search_arms(request, term)
        if arms is not None:
            if term.isdigit() and len(term) <= self.max_int_search_digits:
                arms = [*arms, *(Q(**{field: int(term)}) for field in ("pk", *self.numeric_search_fields))]
            return indexed_search(base, arms), False
        if self.get_search_fields(request):
            queryset, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        else:
            queryset, may_have_duplicates = base.none(), False
        if term.isdigit() and len(term) <= self.max_int_search_digits:
            for field in ("pk", *self.numeric_search_fields):
                queryset = queryset | base.filter(**{field: int(term)})
        return queryset, may_have_duplicates

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    # CSV export of exactly the rows the changelist shows (its filters, search and ordering).

    def get_changelist(self, request, **kwargs):
        if getattr(request, "_backoffice_export", False):
            return ExportChangeList
        return super().get_changelist(request, **kwargs)

    def export_csv_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        request._backoffice_export = True
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            return HttpResponseRedirect(f"{changelist_url(self.model)}?{ERROR_FLAG}=1")
        return exports.csv_response(self.csv_export, changelist.get_queryset(request))

    def export_url(self, request) -> str:
        query = request.GET.copy()
        query.pop(PAGE_VAR, None)
        query.pop(ERROR_FLAG, None)
        opts = self.opts
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_export")
        return f"{url}?{query.urlencode()}" if query else url

    def changelist_tools(self, request) -> list:
        """Links above the changelist: (url, label, css class)."""
        tools = []
        if self.csv_export is not None and self.has_view_permission(request):
            tools.append((self.export_url(request), "Export CSV", "pf-export-csv"))
        return tools

    def changelist_view(self, request, extra_context=None):
        extra_context = {"backoffice_tools": self.changelist_tools(request), **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def get_urls(self):
        urls = super().get_urls()
        if self.csv_export is None:
            return urls
        info = self.opts.app_label, self.opts.model_name
        return [path("export/", self.admin_site.admin_view(self.export_csv_view), name="%s_%s_export" % info),
                *urls]

    def has_delete_permission(self, request, obj=None):
        return False

    def action_form_response(self, request, *, title, form, objects, submit_label, description="",
                             action=None, queryset=None, original=None, cancel_url=None, details=None):
        """The intermediate page of an action that asks for input (a reason, an amount)."""
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "opts": self.opts,
            "form": form,
            "objects": objects,
            "description": description,
            "details": details or [],
            "submit_label": submit_label,
            "action": action,
            "queryset": queryset if queryset is not None else [],
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "original": original,
            "cancel_url": cancel_url or (admin_url(original) if original is not None
                                         else changelist_url(self.model)),
            "media": self.media + form.media,
        }
        return TemplateResponse(request, "admin/backoffice/action_form.html", context)


def matching_ids(queryset, limit: int = SEARCH_ID_LIMIT) -> list:
    """The primary keys of a lookup on a small table (games, accounts, users, seed pairs), read first
    so that the big table is searched on its own indexed foreign key."""
    return list(queryset.order_by().values_list("pk", flat=True)[:limit])


def indexed_search(queryset, arms, cap: int = SEARCH_KEYS_CAP):
    """``queryset`` narrowed to the rows any arm matches, each arm answered by an index.

    An arm is a ``Q`` on the model's own indexed columns (``account_id__in=[ids]``, ``hash=term``),
    or a ``values_list(…, flat=True)`` queryset of primary keys from another table (the rounds an
    account bet on: ``Bet.objects.filter(account_id__in=ids).values_list("round_id", flat=True)``).
    An arm of an empty id list (``__in=[]``) matches nothing.

    Each arm's keys are read first, by its own index, up to ``cap`` of them; the list then asks for
    ``pk IN (those keys)``, which it reads newest first from the primary key. An OR of the arms
    instead would let PostgreSQL walk the primary key from the newest row and test each against
    every arm, hoping for early matches: a read of the whole table for an account that last played
    months ago. An arm with more than ``cap`` rows (a game's rounds, an actor's events) matches
    densely: it is kept as a condition (``pk IN (…)`` or the ``Q``), where that walk stops early.
    """
    keys, wide = set(), []
    for arm in arms:
        found = list((queryset.model._base_manager.filter(arm).values_list("pk", flat=True)
                      if isinstance(arm, Q) else arm).order_by()[: cap + 1])
        if len(found) > cap:
            wide.append(arm if isinstance(arm, Q) else Q(pk__in=arm))
        else:
            keys.update(found)
    if not keys and not wide:
        return queryset.none()
    condition = Q(pk__in=sorted(keys)) if keys else Q()
    for arm in wide:
        condition |= arm
    return queryset.filter(condition)


class ExportChangeList(ChangeList):
    """A changelist that only builds its queryset: an export reads every row itself, streamed, so no
    page is fetched and no COUNT runs."""

    def get_results(self, request):
        self.result_count = self.full_result_count = None
        self.result_list = []
        self.can_show_all = self.multi_page = False
        self.paginator = None


class ReadOnlyAdmin(BackOfficeAdmin):
    """Viewable by those with the view permission; nobody adds or changes rows here by hand."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# --- Game instances -------------------------------------------------------------------------------

class ServiceRejected(Exception):
    """A service refused a write the form had validated; the form is shown again with its errors."""

    def __init__(self, errors: dict):
        super().__init__(errors)
        self.errors = errors


@admin.register(GameInstance)
class GameInstanceAdmin(BackOfficeAdmin):
    form = GameInstanceForm
    list_display = ("slug", "name", "status", "decks", "player_multiplier", "banker_multiplier",
                    "tie_multiplier", "rtp_summary", "min_bet", "max_bet", "currency", "updated_at")
    list_display_links = ("slug", "name")
    list_filter = ("status", "decks", "currency")
    search_fields = ("slug", "name")
    search_help_text = "Slug or name (or part of either); a number matches the id."
    actions = ["rotate_seeds"]

    class Media:
        js = ("games/rtp_preview.js",)

    # Fieldsets: the RTP panel follows the one named PAYOUTS (see the change_form template).
    PAYOUTS = "Shoe and payouts"

    def get_fieldsets(self, request, obj=None):
        fieldsets = [
            (None, {"fields": ("slug", "name", "status")}),
            (self.PAYOUTS, {"fields": ("decks", "player_multiplier", "banker_multiplier", "tie_multiplier")}),
            ("Bets", {"fields": ("min_bet", "max_bet", "currency")}),
        ]
        if obj is None:
            fieldsets.append(("Provably fair", {"fields": ("client_seed",)}))
            return fieldsets
        if self.has_change_permission(request, obj):
            fieldsets.append(("Reason for the change", {"fields": ("reason",)}))
        fieldsets.append(("Provably fair", {"fields": ("active_seed_pair", "revealed_seed_pairs")}))
        fieldsets.append(("Record", {"fields": ("id", "rounds_link", "created_at", "updated_at")}))
        return fieldsets

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("slug", "id", "rounds_link", "active_seed_pair", "revealed_seed_pairs", "created_at",
                "updated_at")

    def get_prepopulated_fields(self, request, obj=None):
        return {"slug": ("name",)} if obj is None else {}

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        errors = getattr(request, "_game_service_errors", None)
        if errors:
            class FormWithServiceErrors(form):
                service_errors = errors

            return FormWithServiceErrors
        return form

    # Writes: through the services, with the signed-in user as the actor.

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        try:
            if change:
                game = services.game_update(game_id=obj.pk, actor=request.user, reason=data.get("reason", ""),
                                            changes=form.configuration())
            else:
                game = services.game_create(actor=request.user, client_seed=data.get("client_seed"),
                                            slug=data["slug"], **form.configuration())
        except (ValidationError, Conflict) as error:
            raise ServiceRejected(service_error_messages(error)) from error
        except IntegrityError as error:
            raise ServiceRejected({None: [f"The game could not be saved: {error}"]}) from error
        obj.pk = game.pk
        obj.refresh_from_db()

    def save_related(self, request, form, formsets, change):
        pass  # no relations are edited here; the services wrote everything

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ServiceRejected as rejected:
            # The transaction of the first attempt was rolled back: show the form again, with the
            # service's errors on their fields.
            request._game_service_errors = rejected.errors
            return super().changeform_view(request, object_id, form_url, extra_context)

    def construct_change_message(self, request, form, formsets, add=False):
        message = super().construct_change_message(request, form, formsets, add)
        reason = form.cleaned_data.get("reason")
        if reason and message:
            message.append({"reason": reason})
        return message

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        form = context["adminform"].form

        def value(name):
            if name in form.fields:
                return form[name].value()
            return getattr(obj, name) if obj is not None else form.fields.get(name)

        context["rtp_preview"] = rtp_preview(
            decks=value("decks"), player=value("player_multiplier"), banker=value("banker_multiplier"),
            tie=value("tie_multiplier"),
        )
        context["rtp_preview_url"] = reverse("admin:games_gameinstance_rtp_preview")
        context["rtp_fieldset"] = self.PAYOUTS
        if obj is not None and self.has_rotate_seeds_permission(request, obj):
            context["rotate_seed_url"] = reverse("admin:games_gameinstance_rotate_seed", args=[quote(obj.pk)])
        return super().render_change_form(request, context, add, change, form_url, obj)

    # Read-only displays.

    @admin.display(description="Return to player")
    def rtp_summary(self, obj):
        preview = rtp_preview(decks=obj.decks, player=obj.player_multiplier, banker=obj.banker_multiplier,
                              tie=obj.tie_multiplier)
        if not preview["ok"]:
            return EMPTY
        return format_html_join(
            " · ", '<span class="{}" title="house edge {} %">{} {} %</span>',
            (("pf-rtp-over" if bet["over_100"] else "pf-rtp", bet["house_edge"], bet["label"][0], bet["rtp"])
             for bet in preview["bets"]),
        )

    @admin.display(description="Active seed pair")
    def active_seed_pair(self, obj):
        pair = selectors.seed_pair_active(game=obj)
        if pair is None:
            return EMPTY
        return format_html(
            'Server seed hash <code>{}</code><br>Client seed <code>{}</code> · next nonce {} · committed {}'
            '<br><a href="{}">Seed pair details</a>',
            pair.server_seed_hash, pair.client_seed, pair.next_nonce, pair.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            admin_url(pair),
        )

    @admin.display(description="Revealed seed pairs (latest 5)")
    def revealed_seed_pairs(self, obj):
        pairs = list(obj.seed_pairs.filter(revealed_at__isnull=False).order_by("-revealed_at", "-id")[:5])
        if not pairs:
            return "None yet: rotate the seed to reveal the active pair."
        rows = format_html_join(
            "", "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            ((pair.server_seed_hash, pair.revealed_server_seed, pair.next_nonce,
              pair.revealed_at.strftime("%Y-%m-%d %H:%M:%S")) for pair in pairs),
        )
        return format_html(
            '<table class="pf-table"><thead><tr><th>Hash</th><th>Server seed</th><th>Rounds</th>'
            '<th>Revealed</th></tr></thead><tbody>{}</tbody></table><a href="{}">All seed pairs of this game</a>',
            rows, changelist_url(SeedPair, game__id__exact=obj.pk),
        )

    @admin.display(description="Rounds")
    def rounds_link(self, obj):
        return format_html('<a href="{}">Rounds of this game</a>', changelist_url(Round, game__id__exact=obj.pk))

    # Seed rotation.

    def has_rotate_seeds_permission(self, request, obj=None):
        return request.user.has_perm("games.rotate_seeds")

    @admin.action(description="Rotate seeds: reveal the active seed pair and start a new one",
                  permissions=["rotate_seeds"])
    def rotate_seeds(self, request, queryset):
        for game in queryset.order_by("pk"):
            self._rotate(request, game, client_seed=None)

    def _rotate(self, request, game, client_seed) -> bool:
        try:
            revealed, new_pair = services.seed_rotate(game_id=game.pk, actor=request.user, client_seed=client_seed)
        except Conflict as conflict:
            self.message_user(request, f"{game.slug}: seed not rotated. {conflict.message}", messages.ERROR)
            return False
        except ValidationError as error:
            self.message_user(request, f"{game.slug}: seed not rotated. {service_error_text(error)}", messages.ERROR)
            return False
        self.message_user(
            request,
            f"{game.slug}: revealed the pair with hash {revealed.server_seed_hash[:16]}… "
            f"({revealed.next_nonce} round{pluralize(revealed.next_nonce)}); "
            f"the new pair's hash is {new_pair.server_seed_hash}.",
            messages.SUCCESS,
        )
        return True

    def rotate_seed_view(self, request, object_id):
        game = self.get_object(request, unquote(object_id))
        if game is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_rotate_seeds_permission(request, game):
            raise PermissionDenied
        pair = selectors.seed_pair_active(game=game)
        form = RotateSeedForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            self._rotate(request, game, form.cleaned_data["client_seed"])
            return HttpResponseRedirect(admin_url(game))
        details = []
        if pair is not None:
            open_rounds = pair.rounds.filter(status=RoundStatus.OPEN).count()
            details = [
                ("Server seed hash", pair.server_seed_hash),
                ("Client seed", pair.client_seed),
                ("Rounds played (next nonce)", pair.next_nonce),
                ("Open rounds", f"{open_rounds} (a pair is not revealed while any of its rounds is open)"
                 if open_rounds else "0"),
            ]
        return self.action_form_response(
            request, title=f"Rotate the seed of {game.slug}", form=form, original=game,
            objects=[], details=details, submit_label="Reveal and rotate",
            description="Rotation reveals the active pair's server seed (from then on anyone may verify "
                        "its rounds) and commits a new pair whose hash is published at once.",
        )

    # Live return-to-player preview.

    def rtp_preview_view(self, request):
        if not (self.has_add_permission(request) or self.has_change_permission(request)):
            raise PermissionDenied
        preview = rtp_preview(decks=request.GET.get("decks", ""), player=request.GET.get("player", ""),
                              banker=request.GET.get("banker", ""), tie=request.GET.get("tie", ""))
        return JsonResponse(preview, status=200 if preview["ok"] else 400)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path("rtp-preview/", self.admin_site.admin_view(self.rtp_preview_view),
                 name="%s_%s_rtp_preview" % info),
            path("<path:object_id>/rotate-seed/", self.admin_site.admin_view(self.rotate_seed_view),
                 name="%s_%s_rotate_seed" % info),
        ] + super().get_urls()


# --- Seed pairs -----------------------------------------------------------------------------------

class RevealedFilter(admin.SimpleListFilter):
    title = "revealed"
    parameter_name = "revealed"

    def lookups(self, request, model_admin):
        return (("yes", "Revealed"), ("no", "Active (secret)"))

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(revealed_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(revealed_at__isnull=True)
        return queryset


@admin.register(SeedPair)
class SeedPairAdmin(ReadOnlyAdmin):
    list_display = ("id", "game", "server_seed_hash", "client_seed", "next_nonce", "revealed", "created_at",
                    "revealed_at")
    list_filter = (RevealedFilter, "game", "created_at", "revealed_at")
    list_select_related = ("game",)
    search_fields = ("=server_seed_hash", "client_seed", "game__slug")
    search_help_text = ("Server seed hash (exact), client seed or game slug (or part of either); a number matches "
                        "the id.")
    show_full_result_count = False
    fields = ("id", "game", "server_seed_hash", "client_seed", "next_nonce", "created_at", "revealed_at",
              "server_seed_shown", "rounds_link")
    readonly_fields = fields

    @admin.display(boolean=True, description="revealed", ordering="revealed_at")
    def revealed(self, obj):
        return obj.is_revealed

    @admin.display(description="server seed")
    def server_seed_shown(self, obj):
        seed = obj.revealed_server_seed
        if seed is None:
            return "Secret until the pair is revealed (rotate the game's seed)."
        return format_html("<code>{}</code>", seed)

    @admin.display(description="rounds")
    def rounds_link(self, obj):
        return format_html('<a href="{}">Rounds played with this pair</a>',
                           changelist_url(Round, seed_pair__id__exact=obj.pk))


# --- Rounds and bets ------------------------------------------------------------------------------

_LABEL_INDEX = {label: index for index, label in enumerate(LABELS)}


def dealt_positions(round_) -> list:
    """Each card of a dealt round as (position, hand): Player, Banker, Player, Banker, then the third
    cards, the Player's first when it drew."""
    hands = ["Player", "Banker", "Player", "Banker"]
    if len(round_.player_cards) == 3:
        hands.append("Player")
    if len(round_.banker_cards) == 3:
        hands.append("Banker")
    return [(position, hand, label) for position, (hand, label) in enumerate(zip(hands, round_.cards), start=1)]


def round_result(round_) -> RoundResult | None:
    """The stored deal as the engine's RoundResult (card indices within one deck suffice)."""
    if not round_.cards or round_.outcome is None:
        return None
    return RoundResult(
        card_indices=tuple(_LABEL_INDEX[label] for label in round_.cards),
        player_indices=tuple(_LABEL_INDEX[label] for label in round_.player_cards),
        banker_indices=tuple(_LABEL_INDEX[label] for label in round_.banker_cards),
        player_score=round_.player_score, banker_score=round_.banker_score, natural=bool(round_.natural),
        outcome=round_.outcome,
    )


class SettlementFilter(admin.SimpleListFilter):
    title = "settlement"
    parameter_name = "settlement"

    def lookups(self, request, model_admin):
        return (("waiting", "Waiting (dealt, not settled)"), ("failed", "Failed at least once"),
                ("stuck", f"Left for operators ({MAX_SETTLEMENT_FAILURES}+ failures)"))

    def queryset(self, request, queryset):
        if self.value() == "waiting":
            return queryset.filter(status=RoundStatus.DEALT)
        if self.value() == "failed":
            return queryset.filter(settlement_failures__gte=1)
        if self.value() == "stuck":
            return queryset.filter(status=RoundStatus.DEALT, settlement_failures__gte=MAX_SETTLEMENT_FAILURES)
        return queryset


class BetInline(admin.TabularInline):
    model = Bet
    fields = ("bet_link", "account", "bet_type", "stake", "multiplier", "status", "payout", "ledger", "placed_at")
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
        entries = LedgerEntry.objects.select_related("account").order_by("pk")
        return (super().get_queryset(request).select_related("account")
                .prefetch_related(Prefetch("ledger_entries", queryset=entries)))

    @admin.display(description="bet")
    def bet_link(self, obj):
        return link(obj, f"#{obj.pk}")

    @admin.display(description="ledger entries")
    def ledger(self, obj):
        return ledger_entries_html(obj.ledger_entries.all())


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    list_display = ("id", "game", "status", "nonce", "cards_column", "player_score", "banker_score", "natural",
                    "outcome", "opened_at")
    list_filter = ("status", "outcome", "natural", "game", "decks", SettlementFilter, "opened_at")
    list_select_related = ("game",)
    # What search_arms matches, in Django's notation (a game's slug in part, the rest exactly).
    search_fields = ("game__slug", "=seed_pair__server_seed_hash", "=bets__account__external_id")
    search_help_text = ("Game slug (or part of it), server seed hash (exact) or account external id (exact: the "
                        "rounds the account bet on); a number matches the round id.")
    show_full_result_count = False
    inlines = [BetInline]
    actions = ["void_rounds"]
    csv_export = exports.ROUNDS_EXPORT
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
                       "void_reason", "settlement_failures", "cards_shown", "player_hand", "banker_hand", "natural", "outcome",
                       "tableau", "seed_pair_link", "server_seed_hash", "client_seed", "nonce", "decks",
                       "server_seed_shown", "verification", "bet_totals")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("game", "seed_pair")

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

    def _hand(self, cards, score):
        if not cards:
            return EMPTY
        return format_html("{} &nbsp;→ <strong>{}</strong>", cards_html(cards), score)

    @admin.display(description="player")
    def player_hand(self, obj):
        return self._hand(obj.player_cards, obj.player_score)

    @admin.display(description="banker")
    def banker_hand(self, obj):
        return self._hand(obj.banker_cards, obj.banker_score)

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
        return "The seed pair is revealed: “Recompute by PF-1” (above) recomputes the round and compares it."

    @admin.display(description="bets")
    def bet_totals(self, obj):
        totals = obj.bets.aggregate(count=Count("id"), staked=Sum("stake"), paid=Sum("payout"))
        if not totals["count"]:
            return "No bets."
        return format_html('{} bets, staked {}, returned {} {} · <a href="{}">list</a>', totals["count"],
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
        try:
            services.round_void(round_id=round_.pk, actor=request.user, reason=reason)
        except (Conflict, ValidationError) as error:
            self.message_user(request, f"Round {round_.pk} not voided. {service_error_text(error)}", messages.ERROR)
            return False
        return True

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
                        "voided.",
        )

    def void_round_view(self, request, object_id):
        round_ = self.get_object(request, unquote(object_id))
        if round_ is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_void_round_permission(request, round_):
            raise PermissionDenied
        form = ReasonForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            if self._void(request, round_, form.cleaned_data["reason"]):
                self.message_user(request, f"Round {round_.pk} voided; its bets were refunded.", messages.SUCCESS)
            return HttpResponseRedirect(admin_url(round_))
        return self.action_form_response(
            request, title=f"Void round {round_.pk}", form=form, objects=[], original=round_,
            details=[("Status", round_.get_status_display()), ("Game", round_.game.slug),
                     ("Pending bets", round_.bets.filter(status="PENDING").count())],
            submit_label="Void and refund",
            description="Voiding refunds every pending bet of the round. Only open or dealt rounds can be voided.",
        )

    # Verification by PF-1, on request.

    def has_verify_round_permission(self, request, obj=None):
        return request.user.has_perm("games.verify_round")

    @staticmethod
    def is_verifiable(round_) -> bool:
        return round_.seed_pair.revealed_at is not None and bool(round_.cards)

    def verify_round_view(self, request, object_id):
        """POST: recompute the round from its revealed seed pair (selectors.round_verification) and show
        the stored and recomputed deal side by side. Nothing is written."""
        round_ = self.get_object(request, unquote(object_id))
        if round_ is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_verify_round_permission(request, round_):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
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
                ("server_seed_hash", "Server seed hash", lambda d: format_html("<code>{}</code>", d["server_seed_hash"])),
                ("cards", "Cards in dealt order", lambda d: cards_html(d["cards"])),
                ("player", "Player", lambda d: self._hand(d["player"]["cards"], d["player"]["score"])),
                ("banker", "Banker", lambda d: self._hand(d["banker"]["cards"], d["banker"]["score"])),
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
            "media": self.media,
        }
        return TemplateResponse(request, "admin/games/round/verification.html", context)

    # Round recall: find rounds by id, account, game or time.

    RECALL_PER_PAGE = 50

    def recall_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = RoundRecallForm(request.GET or None)
        results = None
        if form.is_valid():
            try:
                page = int(request.GET.get("page", 1))
            except ValueError:
                page = 1
            results = selectors.round_search_page(page=page, per_page=self.RECALL_PER_PAGE, **form.criteria())

        def page_url(number):
            query = request.GET.copy()
            query["page"] = number
            return f"?{query.urlencode()}"

        context = {
            **self.admin_site.each_context(request),
            "title": "Round recall",
            "opts": self.opts,
            "form": form,
            "results": results,
            "rows": [] if results is None else [
                {"round": round_, "url": admin_url(round_), "cards": cards_html(round_.cards),
                 "staked": money(round_.staked) if round_.bet_count else EMPTY,
                 "paid": money(round_.paid) if round_.paid is not None else EMPTY}
                for round_ in results.rounds
            ],
            "export_url": (f"{reverse('admin:games_round_recall_export')}?{request.GET.urlencode()}"
                           if results and results.rounds else None),
            "next_url": page_url(results.page + 1) if results and results.has_next else None,
            "previous_url": page_url(results.page - 1) if results and results.has_previous else None,
            "media": self.media + form.media,
        }
        return TemplateResponse(request, "admin/games/round/recall.html", context)

    def recall_export_view(self, request):
        """Every round the recall search finds (all pages), as the rounds' CSV export."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = RoundRecallForm(request.GET)
        if not form.is_valid():
            return HttpResponseRedirect(f"{reverse('admin:games_round_recall')}?{request.GET.urlencode()}")
        return exports.csv_response(exports.ROUNDS_EXPORT, selectors.round_search(**form.criteria()))

    def changelist_tools(self, request) -> list:
        return [(reverse("admin:games_round_recall"), "Round recall", "pf-round-recall"),
                *super().changelist_tools(request)]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        round_ = self.get_object(request, unquote(object_id))
        if (round_ is not None and round_.status in (RoundStatus.OPEN, RoundStatus.DEALT)
                and self.has_void_round_permission(request, round_)):
            extra_context["void_url"] = reverse("admin:games_round_void", args=[quote(round_.pk)])
        if round_ is not None and self.is_verifiable(round_) and self.has_verify_round_permission(request, round_):
            extra_context["verify_url"] = reverse("admin:games_round_verify", args=[quote(round_.pk)])
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            path("recall/", self.admin_site.admin_view(self.recall_view), name="%s_%s_recall" % info),
            path("recall/export/", self.admin_site.admin_view(self.recall_export_view),
                 name="%s_%s_recall_export" % info),
            path("<path:object_id>/void/", self.admin_site.admin_view(self.void_round_view), name="%s_%s_void" % info),
            path("<path:object_id>/verify/", self.admin_site.admin_view(self.verify_round_view),
                 name="%s_%s_verify" % info),
        ] + super().get_urls()


@admin.register(Bet)
class BetAdmin(ReadOnlyAdmin):
    list_display = ("id", "round_link", "game", "account", "bet_type", "stake", "multiplier", "status", "payout",
                    "placed_at")
    list_filter = ("status", "bet_type", "round__game", "placed_at")
    list_select_related = ("round__game", "account")
    search_fields = ("=account__external_id", "=idempotency_key", "=client__username")
    search_help_text = ("Account external id, idempotency key or client user name (each exact); a number matches "
                        "the bet id or the round id.")
    numeric_search_fields = ("round_id",)
    show_full_result_count = False
    csv_export = exports.BETS_EXPORT
    change_list_template = "admin/backoffice/change_list.html"
    fields = ("id", "round_link", "game", "account", "client", "bet_type", "stake", "multiplier",
              "idempotency_key", "status", "payout", "placed_at", "settled_at", "ledger")
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("round__game", "account", "client")

    def search_arms(self, request, term):
        return [
            Q(account_id__in=matching_ids(Account.objects.filter(external_id=term))),
            Q(client_id__in=matching_ids(get_user_model().objects.filter(username=term))),
            Q(idempotency_key=term),  # games.0007 indexes it
        ]

    @admin.display(description="round", ordering="round_id")
    def round_link(self, obj):
        return link(obj.round, f"#{obj.round_id}")

    @admin.display(description="game")
    def game(self, obj):
        return obj.round.game.slug

    @admin.display(description="ledger entries")
    def ledger(self, obj):
        return ledger_entries_html(list(obj.ledger_entries.order_by("pk")))


# --- Audit trail ----------------------------------------------------------------------------------

@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("id", "created_at", "actor", "action", "object_type", "object_id", "short_reason")
    list_filter = ("action", "object_type", "created_at")
    # What search_arms matches, in Django's notation (games.0007 indexes each column).
    search_fields = ("=object_id", "^actor", "=request_id", "=hash")
    search_help_text = ("Object id (exact), actor (its beginning: “olivia” finds olivia-operator, “system:” the "
                        "workers), request id or event hash (exact); a number also matches the event id.")

    def search_arms(self, request, term):
        return [Q(object_id=term), Q(actor__startswith=term), Q(request_id=term), Q(hash=term)]
    show_full_result_count = False
    csv_export = exports.AUDIT_EXPORT
    change_list_template = "admin/games/auditevent/change_list.html"
    fields = ("id", "created_at", "actor", "actor_user", "action", "object_type", "object_id", "reason",
              "before_shown", "after_shown", "request_id", "source_ip", "prev_hash", "hash")
    readonly_fields = fields

    @admin.display(description="reason")
    def short_reason(self, obj):
        return obj.reason if len(obj.reason) <= 60 else obj.reason[:59] + "…"

    @admin.display(description="before")
    def before_shown(self, obj):
        return json_html(obj.before)

    @admin.display(description="after")
    def after_shown(self, obj):
        return json_html(obj.after)

    # The head of the chain, to publish outside the database.

    def head_view(self, request):
        """The newest event's id and hash as JSON: publish it (or keep it elsewhere) to pin the chain;
        ``manage.py audit_verify`` later confirms the chain still ends in it."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        head = selectors.audit_head()
        # The keys of ``audit_verify --json``, so a published head compares with a later check at a glance.
        body = {"head_id": head["id"], "head_hash": head["hash"],
                "head_created_at": head["created_at"].isoformat() if head["created_at"] else None,
                "taken_at": timezone.now().isoformat()}
        response = JsonResponse(body, json_dumps_params={"indent": 2})
        if "download" in request.GET:
            response["Content-Disposition"] = f'attachment; filename="audit-head-{head["id"] or 0}.json"'
        return response

    def changelist_tools(self, request) -> list:
        head_url = reverse("admin:games_auditevent_head")
        return [*super().changelist_tools(request), (f"{head_url}?download=1", "Download head (JSON)",
                                                      "pf-audit-head")]

    def changelist_view(self, request, extra_context=None):
        extra_context = {"audit_head": selectors.audit_head(),
                         "audit_head_url": reverse("admin:games_auditevent_head"), **(extra_context or {})}
        return super().changelist_view(request, extra_context)

    def get_urls(self):
        return [path("head.json", self.admin_site.admin_view(self.head_view), name="games_auditevent_head"),
                *super().get_urls()]
