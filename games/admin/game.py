"""Game instances in the admin: created and changed through the services (with the signed-in user as
the actor, audited as the API's writes are), the exact return to player of the configuration being
entered, and seed rotation."""

from decimal import Decimal

from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError
from django.http import HttpResponseRedirect, JsonResponse
from django.template.defaultfilters import pluralize
from django.urls import path
from django.utils.html import format_html, format_html_join

from audit.forms import ReasonForm
from backoffice.admin.base import BackOfficeAdmin
from backoffice.admin.html import (
    admin_url,
    approval_request_link,
    changelist_url,
    link,
    service_error_messages,
    service_error_text,
)
from backoffice.approval_gate import Held, four_eyes_hint, submit
from backoffice.formatting import EMPTY, timestamp
from core.errors import Conflict
from games import selectors, services
from games.admin.seed_pair import rounds_label
from games.choices import RoundStatus
from games.forms import GameInstanceForm, RotateSeedForm, rtp_policy_from, rtp_preview
from games.models import GameInstance, Round, SeedPair
from games.paytable_text import side_bets_text


def multiplier_text(value) -> str:
    """2.0000 → "2.00", 1.9500 → "1.95", 1.9625 → "1.9625": the places that say something, two at least."""
    text = f"{value.normalize():f}"
    whole, _dot, places = text.partition(".")
    return f"{whole}.{places.ljust(2, '0')}"


def _rtp_class(bet: dict) -> str:
    return "pf-rtp-over" if bet["over_100"] else "pf-rtp"


class ServiceRejected(Exception):
    """A service refused a write the form had validated; the form is shown again with its errors."""

    def __init__(self, errors: dict):
        super().__init__(errors)
        self.errors = errors


@admin.register(GameInstance)
class GameInstanceAdmin(BackOfficeAdmin):
    form = GameInstanceForm
    # Compact columns (multipliers, RTP and limits one column each), so the list fits a laptop screen.
    list_display = ("slug", "name", "status", "decks", "multipliers", "rtp_summary", "bet_limits", "updated_at")
    list_display_links = ("slug", "name")
    list_filter = ("status", "decks", "currency", "rtp_policy")
    search_fields = ("slug", "name")
    search_help_text = "Slug or name (or part of either); a number matches the id."
    actions = ["rotate_seeds"]

    class Media:
        js = ("games/rtp_preview.js",)

    # Fieldsets: the RTP panel follows the one named SIDE_BETS, after PAYOUTS (see the change_form template).
    PAYOUTS = "Shoe and payouts"
    SIDE_BETS = "Side bets and their paytables"

    def get_fieldsets(self, request, obj=None):
        fieldsets = [
            (None, {"fields": ("slug", "name", "status")}),
            (self.PAYOUTS, {"fields": ("decks", "player_multiplier", "banker_multiplier", "tie_multiplier",
                                       "rtp_policy")}),
            # Those who may only view read the paytables as text, not as the editor's inputs.
            (self.SIDE_BETS, {"fields": ("side_bets" if obj is None or self.has_change_permission(request, obj)
                                         else "paytables",)}),
            ("Bets", {"fields": ("min_bet", "max_bet", "currency")}),
        ]
        if obj is None:
            fieldsets.append(("Provably fair", {"fields": ("client_seed",)}))
            fieldsets.append(("Reason", {"fields": ("reason",)}))
            return fieldsets
        if self.has_change_permission(request, obj):
            fieldsets.append(("Reason for the change", {"fields": ("reason",),
                                                        "description": four_eyes_hint("game.update").strip()}))
        fieldsets.append(("Provably fair", {"fields": ("active_seed_pair", "revealed_seed_pairs")}))
        fieldsets.append(("Record", {"fields": ("id", "rounds_link", "created_at", "updated_at")}))
        return fieldsets

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return ("slug", "id", "rounds_link", "active_seed_pair", "revealed_seed_pairs", "created_at",
                "updated_at", "paytables")

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
                outcome = submit(services.game_update, game_id=obj.pk, actor=request.user,
                                 reason=data.get("reason", ""), changes=form.configuration())
                if isinstance(outcome, Held):
                    request._game_change_held = outcome.approval
                    obj.refresh_from_db()
                    return
                game = outcome.result
            else:
                outcome = submit(services.game_create, actor=request.user, reason=data.get("reason", ""),
                                 client_seed=data.get("client_seed"), slug=data["slug"], **form.configuration())
                if isinstance(outcome, Held):
                    request._game_change_held = outcome.approval
                    return
                game = outcome.result
        except (ValidationError, Conflict) as error:
            raise ServiceRejected(service_error_messages(error)) from error
        except IntegrityError as error:
            raise ServiceRejected({None: [f"The game could not be saved: {error}"]}) from error
        obj.pk = game.pk
        obj.refresh_from_db()

    def log_change(self, request, obj, message):
        if getattr(request, "_game_change_held", None) is None:  # a held change is in the audit trail
            return super().log_change(request, obj, message)
        return None

    def log_addition(self, request, obj, message):
        if getattr(request, "_game_change_held", None) is None:  # a held creation is in the audit trail
            return super().log_addition(request, obj, message)
        return None

    def response_add(self, request, obj, post_url_continue=None):
        approval = getattr(request, "_game_change_held", None)
        if approval is None:
            return super().response_add(request, obj, post_url_continue)
        self.message_user(request, format_html(
            "Game {}: a new active game needs a second person; sent for approval ({}). The game does not exist yet.",
            request.POST.get("slug", ""), approval_request_link(approval["id"])), messages.WARNING)
        return HttpResponseRedirect(changelist_url(GameInstance))

    def response_change(self, request, obj):
        approval = getattr(request, "_game_change_held", None)
        if approval is None:
            return super().response_change(request, obj)
        what = ("activating a game" if approval["action"] == "game.activate"
                else "this game has taken bets, so the change")
        self.message_user(request, format_html("Game {}: {} needs a second person; sent for approval ({}). Nothing "
                                               "changed yet.", obj.slug, what, approval_request_link(approval["id"])),
                          messages.WARNING)
        return HttpResponseRedirect(admin_url(obj))

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
            tie=value("tie_multiplier"), side_bets=value("side_bets"), policy=rtp_policy_from(value("rtp_policy")),
        )
        context["rtp_preview_url"] = self.own_url("rtp_preview")
        context["rtp_fieldset"] = self.SIDE_BETS
        if obj is not None and self.has_rotate_seeds_permission(request, obj):
            context["rotate_seed_url"] = self.own_url("rotate_seed", quote(obj.pk))
        return super().render_change_form(request, context, add, change, form_url, obj)

    # Read-only displays.

    @admin.display(description="multipliers P / B / T")
    def multipliers(self, obj):
        return format_html('<span class="pf-nowrap">{}</span>', " / ".join(
            multiplier_text(value) for value in (obj.player_multiplier, obj.banker_multiplier, obj.tie_multiplier)))

    @admin.display(description="bet limits", ordering="max_bet")
    def bet_limits(self, obj):
        return format_html('<span class="pf-nowrap">{} – {} {}</span>', obj.min_bet, obj.max_bet, obj.currency)

    @admin.display(description="Return to player")
    def rtp_summary(self, obj):
        preview = rtp_preview(decks=obj.decks, player=obj.player_multiplier, banker=obj.banker_multiplier,
                              tie=obj.tie_multiplier, side_bets=obj.side_bets)
        if not preview["ok"]:
            return EMPTY
        main = [bet for bet in preview["bets"] if not bet["side"]]
        shown = format_html_join(
            " ", '<span class="pf-nowrap {}" title="house edge {} %">{} {} %</span>',
            ((_rtp_class(bet), bet["house_edge"], bet["label"][0], bet["rtp"]) for bet in main),
        )
        side = [bet for bet in preview["bets"] if bet["side"]]
        if not side:
            return shown
        # The side bets in one short entry (the list stays narrow), each named in its title.
        highest = max(side, key=lambda bet: Decimal(bet["rtp"]))
        return format_html(
            '{} <span class="pf-nowrap {}" title="{}">+{} side, up to {} %</span>', shown, _rtp_class(highest),
            "; ".join(f"{bet['label']} {bet['rtp']} %" for bet in side), len(side), highest["rtp"])

    @admin.display(description="Side bets and their paytables")
    def paytables(self, obj):
        return side_bets_text(obj.side_bets)

    @admin.display(description="Active seed pair")
    def active_seed_pair(self, obj):
        pair = selectors.seed_pair_active(game=obj)
        if pair is None:
            return EMPTY
        return format_html(
            'Server seed hash <code>{}</code><br>Client seed <code>{}</code> · next nonce {} · committed {}'
            '<br><a href="{}">Seed pair details</a>',
            pair.server_seed_hash, pair.client_seed, pair.next_nonce, timestamp(pair.created_at),
            admin_url(pair),
        )

    @admin.display(description="Revealed seed pairs (latest 5)")
    def revealed_seed_pairs(self, obj):
        pairs = list(selectors.with_round_counts(obj.seed_pairs.filter(revealed_at__isnull=False))
                     .order_by("-revealed_at", "-id")[:5])
        if not pairs:
            return "None yet: rotate the seed to reveal the active pair."
        rows = format_html_join(
            "", "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            ((pair.server_seed_hash, pair.revealed_server_seed, rounds_label(pair),
              timestamp(pair.revealed_at)) for pair in pairs),
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

    @admin.action(description="Rotate seeds: reveal the active seed pair and start a new one…",
                  permissions=["rotate_seeds"])
    def rotate_seeds(self, request, queryset):
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            for game in queryset.order_by("pk"):
                self._rotate(request, game, reason=form.cleaned_data["reason"], client_seed=None)
            return None
        return self.action_form_response(
            request, title="Rotate seeds", form=form, objects=[link(game) for game in queryset.order_by("pk")],
            action="rotate_seeds", queryset=queryset, submit_label="Reveal and rotate",
            description="Rotation reveals each game's active pair (from then on anyone may verify its rounds) and "
                        "commits a new pair whose hash is published at once; each keeps its client seed.",
        )

    def _rotate(self, request, game, *, reason, client_seed) -> bool:
        try:
            retired, new_pair = services.seed_rotate(game_id=game.pk, actor=request.user, reason=reason,
                                                     client_seed=client_seed)
        except Conflict as conflict:
            self.message_user(request, f"{game.slug}: seed not rotated. {conflict.message}", messages.ERROR)
            return False
        except ValidationError as error:
            self.message_user(request, f"{game.slug}: seed not rotated. {service_error_text(error)}", messages.ERROR)
            return False
        outcome = (f"revealed the pair with hash {retired.server_seed_hash[:16]}…" if retired.is_revealed else
                   f"retired the pair with hash {retired.server_seed_hash[:16]}…, revealed automatically once "
                   "its open rounds are dealt or voided")
        self.log_change(request, game, f"Seed pair rotated: {outcome}; new {new_pair.server_seed_hash[:16]}…: {reason}")
        self.message_user(
            request,
            f"{game.slug}: {outcome} ({retired.next_nonce} round{pluralize(retired.next_nonce)}); "
            f"the new pair's hash is {new_pair.server_seed_hash}.",
            messages.SUCCESS,
        )
        return True

    def rotate_seed_view(self, request, game):
        pair = selectors.seed_pair_active(game=game)
        form = RotateSeedForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            self._rotate(request, game, reason=form.cleaned_data["reason"],
                         client_seed=form.cleaned_data["client_seed"])
            return HttpResponseRedirect(admin_url(game))
        details = []
        if pair is not None:
            open_rounds = pair.rounds.filter(status=RoundStatus.OPEN).count()
            details = [
                ("Server seed hash", pair.server_seed_hash),
                ("Client seed", pair.client_seed),
                ("Rounds played (next nonce)", pair.next_nonce),
                ("Open rounds", f"{open_rounds} (the new pair takes the next rounds at once; this one is "
                 "revealed when its last open round is dealt or voided)" if open_rounds else "0"),
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
                              banker=request.GET.get("banker", ""), tie=request.GET.get("tie", ""),
                              side_bets=request.GET.get("side_bets", ""),  # JSON text of the editor's rows
                              policy=rtp_policy_from(request.GET.get("policy")))
        return JsonResponse(preview, status=200 if preview["ok"] else 400)

    def get_urls(self):
        return [
            path("rtp-preview/", self.admin_site.admin_view(self.rtp_preview_view), name=self.url_name("rtp_preview")),
            path("<path:object_id>/rotate-seed/", self.object_view(self.rotate_seed_view,
                                                                    self.has_rotate_seeds_permission,
                                                                    "games.rotate_seeds"),
                 name=self.url_name("rotate_seed")),
            *super().get_urls(),
        ]
