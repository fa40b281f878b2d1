"""No server seed that is still secret leaks anywhere after a full demo run.

``seed_demo`` plays rounds through the real services (seed pairs committed, rotated and revealed,
rounds dealt and voided, bets settled). Afterwards every seed pair not yet revealed holds a secret,
and neither the secret nor any 16-character piece of it may appear in:

- what the command printed, and every log record of the run and of the requests below (every logger
  at DEBUG);
- any audit event (every field);
- any admin page an administrator can open: the index and app pages, every registered model's
  changelist (every page of it, every filter choice), add page, and change and history page of
  every object, and every custom admin page (rotate seed, void, adjust, exports, …) for every object;
- every GET route of the API (every app's routes under /api/v1/), for every real id,
  following the pagination;
- the public verification page;
- every CSV export URL there is (any URL named or routed "export").

Revealed seeds must show where they belong (the audit trail, the public page, the admin): checking
that they do proves the scanner would have seen a secret there.
"""

import json
import logging
import re
from io import StringIO

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from alerts import services as alert_services
from alerts.checks import Finding
from alerts.models import Incident
from apitokens.models import ApiToken
from approvals.models import Approval
from approvals.services import approval_gate
from audit.models import AuditEvent
from baccarat_site import urls as site_urls
from games import services as game_services
from games.models import Bet, GameInstance, Round, RtpPolicy, SeedPair
from settlement.api import urls as settlement_api_urls
from tests.conftest import api_client_for, verified_login
from wallet import services as wallet_services
from wallet.models import Account
from webhooks import services as webhook_services
from webhooks.models import Endpoint

PIECE = 16  # hex characters: the shortest fragment of a secret that may not appear
HEX_RUN = re.compile(rf"[0-9a-fA-F]{{{PIECE},}}")
OK_STATUSES = {200, 302, 400, 403, 404, 405, 409}
HISTORY_PAGES = 3
OBJECT_ID_PARAMETERS = ("object_id", "id", "pk")  # the object of an admin URL (auth's <id>/password/)
API_PARAMETERS = {  # URL parameter of an API route -> the real values to fill in
    "slug": lambda: list(GameInstance.objects.values_list("slug", flat=True)),
    "round_id": lambda: list(Round.objects.values_list("pk", flat=True)),
    "bet_id": lambda: list(Bet.objects.values_list("pk", flat=True)),
    "external_id": lambda: list(Account.objects.values_list("external_id", flat=True)),
    "policy_id": lambda: list(RtpPolicy.objects.values_list("pk", flat=True)),
    "approval_id": lambda: list(Approval.objects.values_list("pk", flat=True)),
    "endpoint_id": lambda: list(Endpoint.objects.values_list("pk", flat=True)),
    "token_id": lambda: list(ApiToken.objects.values_list("pk", flat=True)),
    "incident_id": lambda: list(Incident.objects.values_list("pk", flat=True)),
}


class Scanner:
    """Looks for every secret, and any 16-character piece of one, in each text it is shown."""

    def __init__(self, secrets, revealed):
        self.secrets = secrets
        self.pieces = {secret[i:i + PIECE]: secret for secret in secrets for i in range(len(secret) - PIECE + 1)}
        self.revealed = revealed
        self.leaks = []
        self.revealed_seen = set()
        self.scanned = {}

    def __call__(self, where: str, kind: str, text: str) -> None:
        self.scanned[kind] = self.scanned.get(kind, 0) + 1
        for run in HEX_RUN.findall(text):
            run = run.lower()
            for i in range(len(run) - PIECE + 1):
                secret = self.pieces.get(run[i:i + PIECE])
                if secret is not None:
                    whole = "the whole secret" if secret in run else f"{run[i:i + PIECE]}… of a secret"
                    self.leaks.append(f"{kind}: {where}: {whole} (seed pair hash "
                                      f"{SeedPair.objects.get(server_seed=secret).server_seed_hash[:16]}…)")
                    break
        for seed in self.revealed:
            if seed in text:
                self.revealed_seen.add((kind, seed))

    def response(self, where: str, kind: str, response) -> None:
        assert response.status_code in OK_STATUSES, (where, response.status_code)
        body = b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content
        headers = "\n".join(f"{name}: {value}" for name, value in response.items())
        self(where, kind, headers + "\n" + body.decode("utf-8", errors="replace"))

    def revealed_seen_in(self, kind: str) -> int:
        return len({seed for seen_kind, seed in self.revealed_seen if seen_kind == kind})


@pytest.fixture
def every_log_record(caplog):
    """caplog at DEBUG on every logger, including those that do not propagate to the root."""
    caplog.set_level(logging.DEBUG)
    attached = []
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if not isinstance(logger, logging.Logger):
            continue
        caplog.set_level(logging.DEBUG, logger=name)
        if not logger.propagate:
            logger.addHandler(caplog.handler)
            attached.append(logger)
    yield caplog
    for logger in attached:
        logger.removeHandler(caplog.handler)


def record_text(record: logging.LogRecord) -> str:
    parts = [record.name, str(record.msg), repr(record.args)]
    try:
        parts.append(record.getMessage())
    except Exception as error:  # a bad format string must not hide what the record holds
        parts.append(repr(error))
    if record.exc_info:
        parts.append(logging.Formatter().formatException(record.exc_info))
    parts.extend(f"{key}={value!r}" for key, value in vars(record).items()
                 if key not in logging.LogRecord("", 0, "", 0, "", (), None).__dict__)
    return "\n".join(parts)


# --- URL walking ------------------------------------------------------------------------------------

def walk_patterns(patterns, prefix=""):
    """(route, pattern) of every URL pattern, with the route of its resolvers in front."""
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from walk_patterns(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def api_get_urls(patterns, namespace: str, mount: str) -> list:
    """Every GET URL of API routes, for every real value of their parameters."""
    urls = []
    for pattern in patterns:
        permissions = getattr(pattern.callback.view_class, "required_permissions", {})
        if "GET" not in permissions:
            continue
        names = list(pattern.pattern.converters)
        assert len(names) <= 1, f"route {pattern.pattern} takes {names}: teach this test to fill them"
        if not names:
            urls.append(reverse(f"{namespace}:{pattern.name}"))
            continue
        name = names[0]
        assert name in API_PARAMETERS, f"route {pattern.pattern} takes {name}: teach this test its real values"
        values = API_PARAMETERS[name]()
        assert values, f"the demo made nothing to fill {name} of {pattern.pattern} with"
        urls.extend(reverse(f"{namespace}:{pattern.name}", kwargs={name: value}) for value in values)
    assert urls and mount in urls[0]
    return urls


def get_every_page(client, url, scan, kind):
    """GET the URL and every further page its cursor pagination links to."""
    seen = set()
    while url and url not in seen:
        seen.add(url)
        response = client.get(url)
        scan.response(url, kind, response)
        data = response.json() if response.get("Content-Type", "").startswith("application/json") else None
        url = data.get("next") if isinstance(data, dict) else None
    return len(seen)


def admin_object_ids(model, model_admin, request) -> list:
    return [obj.pk for obj in model_admin.get_queryset(request)]


def admin_urls(client, admin_user) -> list:
    """Every admin page: index, app pages, changelists (each page, each filter choice), add pages,
    change page of every object (history pages of a few), and every custom admin URL for every object."""
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = admin_user
    urls = [reverse("admin:index")]
    for model, model_admin in sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label):
        opts = model._meta
        info = f"admin:{opts.app_label}_{opts.model_name}"
        urls.append(reverse("admin:app_list", args=[opts.app_label]))
        changelist = reverse(f"{info}_changelist")
        urls.append(changelist)
        response = client.get(changelist)
        if response.status_code == 200 and response.context and "cl" in response.context:
            cl = response.context["cl"]
            urls.extend(f"{changelist}?p={number}" for number in range(1, cl.paginator.num_pages + 1))
            for spec in cl.filter_specs:
                urls.extend(f"{changelist}{choice['query_string']}" for choice in spec.choices(cl))
        urls.append(reverse(f"{info}_add"))
        ids = admin_object_ids(model, model_admin, request)
        standard = {f"{opts.app_label}_{opts.model_name}_{action}"
                    for action in ("changelist", "add", "change", "history", "delete")}
        urls.extend(reverse(f"{info}_change", args=[pk]) for pk in ids)
        # History pages list the admin's log entries (the demo writes none): a few per model suffice.
        urls.extend(reverse(f"{info}_history", args=[pk]) for pk in ids[:HISTORY_PAGES])
        # The admin's own pages beyond the standard ones (rotate seed, void, adjust, exports, …).
        for pattern in model_admin.get_urls():
            if not isinstance(pattern, URLPattern) or pattern.name in standard or pattern.name is None:
                continue
            params = list(pattern.pattern.converters)
            if not params:
                urls.append(reverse(f"admin:{pattern.name}"))
            elif len(params) == 1 and params[0] in OBJECT_ID_PARAMETERS:
                urls.extend(reverse(f"admin:{pattern.name}", args=[pk]) for pk in ids)
            else:
                raise AssertionError(f"admin URL {pattern.pattern} takes {params}: teach this test to fill them")
    return list(dict.fromkeys(urls))


def export_urls(admin_user) -> list:
    """Every URL of the site named or routed 'export' (CSV exports), filled with real ids if it needs them."""
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = admin_user
    urls = []
    for route, pattern in walk_patterns(get_resolver().url_patterns):
        if "export" not in (pattern.name or "").lower() and "export" not in route.lower():
            continue
        params = list(pattern.pattern.converters)
        name = pattern.name
        namespace = route.split("/")[0] == "admin" and "admin:" or ""
        if not params:
            urls.append(reverse(f"{namespace}{name}") if name else "/" + route)
        elif len(params) == 1 and params[0] in OBJECT_ID_PARAMETERS and namespace:
            model = next(m for m, a in admin.site._registry.items()
                         if name.startswith(f"{m._meta.app_label}_{m._meta.model_name}_"))
            ids = admin_object_ids(model, admin.site._registry[model], request)
            urls.extend(reverse(f"admin:{name}", args=[pk]) for pk in ids)
        else:
            raise AssertionError(f"export URL {route} takes {params}: teach this test to fill them")
    return urls


# --- The test ---------------------------------------------------------------------------------------

def test_no_unrevealed_server_seed_leaks_anywhere_after_a_demo_run(transactional_db, every_log_record, capsys):
    out, err = StringIO(), StringIO()
    call_command("seed_demo", "--rounds", "60", "--force", stdout=out, stderr=err)
    printed = capsys.readouterr()

    secrets = list(SeedPair.objects.filter(revealed_at__isnull=True).values_list("server_seed", flat=True))
    revealed = list(SeedPair.objects.filter(revealed_at__isnull=False).values_list("server_seed", flat=True))
    games = GameInstance.objects.count()
    assert len(secrets) == games == 4, "every demo game holds one active (secret) pair"
    assert len(revealed) >= 3, "the demo rotates seeds, so revealed pairs exist to check the scanner with"
    assert Round.objects.filter(seed_pair__revealed_at__isnull=True).exclude(cards=[]).exists(), \
        "rounds were dealt with a pair still secret: their pages are where a leak would be"
    scan = Scanner(secrets, revealed)

    # What the command printed, and every log record.
    assert "Demo data is ready" in out.getvalue()
    scan("seed_demo stdout", "output", out.getvalue())
    scan("seed_demo stderr", "output", err.getvalue())
    scan("sys.stdout/stderr", "output", printed.out + printed.err)

    # Every audit event, every field.
    events = list(AuditEvent.objects.order_by("pk").values())
    assert len(events) > 100
    for event in events:
        scan(f"audit event {event['id']} {event['action']}", "audit", json.dumps(event, default=str))
    assert scan.revealed_seen_in("audit") == len(revealed), "every reveal is in the audit trail, with its seed"

    # Every admin page, as the administrator.
    admin_user = get_user_model().objects.get(username="admin")
    client = Client()
    verified_login(client, admin_user)
    pages = admin_urls(client, admin_user)
    for url in pages:
        scan.response(url, "admin", client.get(url))
    assert any(url.endswith("/verify/") for url in pages), "the recomputation of a round is a page among them"
    assert scan.scanned["admin"] > 600
    assert scan.revealed_seen_in("admin") == len(revealed), "every revealed seed shows in the admin"

    # Every GET route of the API, for every real id, every page; with the objects of the operator
    # controls that the demo does not make (a policy, a pending approval, a webhook endpoint the
    # administrator configures for the demo's integration client: staff own none), and an incident.
    game_services.rtp_policy_create(actor=admin_user, name="Scan policy")
    approval_gate(wallet_services.account_adjust, external_id=Account.objects.first().external_id,
                  actor=admin_user, amount="50000.00", reason="scan")
    webhook_services.endpoint_create(actor=admin_user, reason="new receiver",
                                                       owner=get_user_model().objects.get(username="integration"),
                                     url="https://example.invalid/hook",
                                     events=["seeds.revealed", "round.settled"])
    alert_services.alert_raise(Finding("held_bets", "scan", "critical", "A bet held for the scan."))
    api = api_client_for(admin_user)
    api_pages = 0
    api_v1, namespace = site_urls.api_v1
    settlement_api = (settlement_api_urls.urlpatterns, settlement_api_urls.app_name, "/api/v1/settlement/")
    for patterns, name, mount in ((api_v1, namespace, "/api/v1/"), settlement_api):
        for url in api_get_urls(patterns, name, mount):
            api_pages += get_every_page(api, url, scan, "api")
    assert api_pages > 150
    assert scan.revealed_seen_in("api") == len(revealed), "the API shows every revealed seed"

    # The public page, for anyone.
    scan.response("/", "public", Client().get("/"))
    assert scan.revealed_seen_in("public") >= 1

    # CSV exports, wherever the site has them (none is not a failure; each one found is checked).
    for url in export_urls(admin_user):
        scan.response(url, "export", client.get(url))

    # Every log record: the run's, and those of the pages above (django.request, django.template, …).
    records = list(every_log_record.records)
    assert records
    for record in records:
        scan(f"{record.name} {record.levelname}", "log", record_text(record))

    print("scanned:", scan.scanned, "- revealed seeds seen:", sorted(
        (kind, scan.revealed_seen_in(kind)) for kind in scan.scanned))
    assert not scan.leaks, "unrevealed server seeds leaked:\n" + "\n".join(scan.leaks[:50])
    assert len(secrets) == SeedPair.objects.filter(revealed_at__isnull=True).count(), "the scan revealed nothing"
