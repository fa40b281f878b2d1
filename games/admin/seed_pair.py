"""Seed pairs in the admin (read-only): the server seed shows only once the pair is revealed."""

from django.contrib import admin
from django.utils.html import format_html

from backoffice.admin.base import ReadOnlyAdmin
from backoffice.admin.html import changelist_url
from games.models import Round, SeedPair
from games.selectors import seed_pair_round_counts


def rounds_label(pair) -> str:
    """The rounds of a pair counted by seed_pair_round_counts, as its public page counts them:
    "12 rounds, 2 voided"."""
    label = f"{pair.dealt_rounds} round{'' if pair.dealt_rounds == 1 else 's'}"
    return f"{label}, {pair.voided_rounds} voided" if pair.voided_rounds else label


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
    # The hash's first characters in the list (all 64 on hover and on the pair's page), so the list fits.
    list_display = ("id", "game", "hash_start", "client_seed", "next_nonce", "revealed", "created_at",
                    "revealed_at")
    list_filter = (RevealedFilter, "game", "created_at", "revealed_at")
    list_select_related = ("game",)
    search_fields = ("=server_seed_hash", "client_seed", "game__slug")
    search_help_text = ("Server seed hash (exact), client seed or game slug (or part of either); a number matches "
                        "the id.")
    fields = ("id", "game", "server_seed_hash", "client_seed", "next_nonce", "created_at", "revealed_at",
              "server_seed_shown", "rounds_link")
    readonly_fields = fields

    @admin.display(description="server seed hash")
    def hash_start(self, obj):
        return format_html('<code title="{}">{}…</code>', obj.server_seed_hash, obj.server_seed_hash[:16])

    @admin.display(boolean=True, description="revealed", ordering="revealed_at")
    def revealed(self, obj):
        return obj.is_revealed

    @admin.display(description="server seed")
    def server_seed_shown(self, obj):
        seed = obj.revealed_server_seed
        if seed is None:
            return "Secret until the pair is revealed (rotate the game's seed)."
        return format_html("<code>{}</code>", seed)

    def get_object(self, request, object_id, from_field=None):
        # Only a pair's own page shows its rounds: counting them in the list's query grouped every
        # round of every pair (134 ms at 100,000 rounds, growing with them).
        pair = super().get_object(request, object_id, from_field)
        if pair is not None:
            counts = seed_pair_round_counts(pair=pair)
            pair.dealt_rounds, pair.voided_rounds = counts["dealt_rounds"], counts["voided_rounds"]
        return pair

    @admin.display(description="rounds dealt")
    def rounds_link(self, obj):
        return format_html('{} — <a href="{}">rounds played with this pair</a>', rounds_label(obj),
                           changelist_url(Round, seed_pair__id__exact=obj.pk))

