"""The pages the benchmark times: every admin list (with the filters and searches operators use on
the big ones), round pages, the dashboard and every GET endpoint of the API."""

import re
import urllib.parse
from datetime import timedelta

from django.contrib import admin
from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from audit.models import AuditEvent, AuditLeaf
from games.choices import RoundStatus
from games.models import Bet, GameInstance, Round
from wallet.models import Account, LedgerEntry


def changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def admin_label(model) -> str:
    return f"admin {model._meta.app_label}.{model._meta.model_name}"


def pages(days: int) -> list:
    """(label, path, auth) for every page to time; auth is "session" or "token"."""
    found = []
    for model, _model_admin in sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label):
        found.append((f"{admin_label(model)} list", changelist(model), "session"))
    game = GameInstance.objects.order_by("pk").first()
    account = Account.objects.order_by("pk")[min(10, Account.objects.count() - 1)]
    last = Round.objects.order_by("-pk").values_list("pk", flat=True).first()
    # As the admin's date filter writes them ("Past 7 days").
    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    week_ago = urllib.parse.quote(str(today - timedelta(days=7)))
    tomorrow = urllib.parse.quote(str(today + timedelta(days=1)))
    # A page deep in the bet list (the 50th of a full-size data set), one that exists in a small one.
    deep_page = max(1, min(50, Bet.objects.count() // admin.site._registry[Bet].list_per_page // 2))
    variants = [
        (Bet, "status__exact=WON"), (Bet, "bet_type__exact=TIE"), (Bet, f"round__game__id__exact={game.pk}"),
        (Bet, f"placed_at__gte={week_ago}&placed_at__lt={tomorrow}"), (Bet, f"q={account.external_id}"),
        (Bet, f"q={last}"), (Bet, f"p={deep_page}"),
        (Round, "status__exact=DEALT"), (Round, "status__exact=VOID"), (Round, "outcome__exact=TIE"),
        (Round, f"game__id__exact={game.pk}"), (Round, "settlement=waiting"), (Round, "natural__exact=1"),
        (Round, f"q={last}"),
        (AuditEvent, "action__exact=game.configured"), (AuditEvent, "object_type__exact=round"),
        (AuditEvent, f"q={last}"),
    ]
    for model, query in variants:
        found.append((f"{admin_label(model)} ?{query}", f"{changelist(model)}?{query}", "session"))
    found += [
        (f"{admin_label(LedgerEntry)} ?kind__exact=ADJUSTMENT", f"{changelist(LedgerEntry)}?kind__exact=ADJUSTMENT",
         "session"),
        (f"{admin_label(LedgerEntry)} ?q=account", f"{changelist(LedgerEntry)}?q={account.external_id}", "session"),
        (f"{admin_label(Account)} ?q=account", f"{changelist(Account)}?q={account.external_id}", "session"),
    ]
    settled = list(Round.objects.filter(status=RoundStatus.SETTLED, seed_pair__revealed_at__isnull=False)
                   .order_by("-pk").values_list("pk", flat=True)[:1])
    if settled:
        found.append(("admin round page (settled, verified)", reverse("admin:games_round_change", args=settled),
                      "session"))
    found.append(("admin round page (dealt)", reverse("admin:games_round_change", args=[last - 10]), "session"))
    try:  # the round recall of the admin, where it has one
        recall = reverse("admin:games_round_recall")
    except NoReverseMatch:
        recall = None
    if recall:
        found += [
            ("admin round recall ?round_id=", f"{recall}?round_id={last - 10}", "session"),
            ("admin round recall ?account=", f"{recall}?account={account.external_id}", "session"),
            ("admin round recall ?game=", f"{recall}?game={game.slug}", "session"),
        ]
    start = (timezone.now() - timedelta(days=days)).date().isoformat()
    end = timezone.now().date().isoformat()
    dashboard = reverse("admin:dashboard")
    found += [
        ("dashboard (last 30 days)", dashboard, "session"),
        ("dashboard (whole period)", f"{dashboard}?start={start}&end={end}", "session"),
        ("dashboard (one game, whole period)", f"{dashboard}?start={start}&end={end}&game={game.slug}", "session"),
    ]
    samples = {"slug": game.slug, "external_id": account.external_id, "round_id": str(settled[0] if settled else last),
               "bet_id": str(Bet.objects.order_by("-pk").values_list("pk", flat=True).first())}
    for label, path in api_paths(samples):
        found.append((f"api {label}", path + proof_query(label), "token"))
    found += [
        ("api bets ?game=", f"/api/v1/bets/?game={game.slug}", "token"),
        ("api bets ?status=WON", "/api/v1/bets/?status=WON", "token"),
        ("api bets ?account=", f"/api/v1/bets/?account={account.external_id}", "token"),
        ("api rounds ?status=DEALT", "/api/v1/rounds/?status=DEALT", "token"),
        ("api rounds ?game=&status=SETTLED", f"/api/v1/rounds/?game={game.slug}&status=SETTLED", "token"),
    ]
    return found


def proof_query(name: str) -> str:
    """The query string a proof endpoint needs: an event in the middle of the log, half its size."""
    size = AuditLeaf.objects.count()
    if name == "audit-inclusion-proof":
        return f"?event_id={AuditLeaf.objects.get(index=size // 2).event_id}"
    if name == "audit-consistency-proof":
        return f"?first={size // 2}"
    return ""


def api_paths(samples: dict) -> list:
    """Every GET endpoint under /api/v1/, its arguments filled with sample values."""
    found = []

    def walk(patterns, prefix):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                route = prefix + str(pattern.pattern)
                view = getattr(pattern.callback, "view_class", None)
                needs = getattr(view, "required_permissions", {}) or {}
                if not route.startswith("api/v1/") or "GET" not in needs:
                    continue
                if any(name not in samples for name in pattern.pattern.converters):
                    continue
                path = re.sub(r"<(?:\w+:)?(\w+)>", lambda match: samples[match.group(1)], route)
                found.append((pattern.name or route, "/" + path))

    walk(get_resolver().url_patterns, "")
    return found
