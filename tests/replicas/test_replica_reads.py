"""Reads on a real streaming replica (tests/replicas/conftest.py): pages and API reads land on it,
a person's own writes are never read from a stale copy, money is decided on the primary, a lagging
replica is passed over and a stopped one costs no request."""

import time
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from alerts.choices import AlertKind
from alerts.models import Alert
from alerts.services import alerts_check
from backoffice import replica_reads
from dbutils import replica_server, replicas
from games import services as game_services
from games.models import Bet, GameInstance, Round
from settlement.models import DailyBetTotals
from tests.admin.conftest import client_for
from tests.replicas.conftest import REPLICA, wait_replayed
from wallet import services as wallet_services
from wallet.models import Account, LedgerEntry

pytestmark = [pytest.mark.django_db(transaction=True, databases=[DEFAULT_DB_ALIAS, REPLICA]),
              pytest.mark.usefixtures("replica_reads_on")]


def queries(alias: str):
    return CaptureQueriesContext(connections[alias])


def mentions(captured, model) -> bool:
    """Whether a query read the model's table."""
    return any(f'"{model._meta.db_table}"' in query["sql"] for query in captured.captured_queries)


def standby_account(standby_admin, external_id: str) -> Decimal | None:
    """The account's balance on the standby, read there directly (None: no such account there)."""
    row = standby_admin.execute(f"SELECT balance FROM {Account._meta.db_table} WHERE external_id = %s",
                                [external_id]).fetchone()
    return None if row is None else row[0]


@pytest.fixture
def world(game, operator, integration, funded_account, standby_admin):
    """A game with a dealt round and a bet on it, an account, all replayed by the standby."""
    account = funded_account("player-1", "100.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id=account.external_id, bet_type="BANKER",
                            stake="10.00", idempotency_key="world-1", client=integration)
    wait_replayed(standby_admin)
    # And visible there: what the standby's own connection reads, before any request reads it.
    deadline = time.monotonic() + 30
    while standby_account(standby_admin, "player-1") != Decimal("90.00"):
        assert time.monotonic() < deadline, "the standby does not show the world's account"
        time.sleep(0.05)
    return {"game": game, "account": account, "round": round_}


def test_lists_details_recall_reports_and_public_pages_read_the_replica(world, api_as, operator, administrator):
    api, browser, admin = api_as(operator), Client(), client_for(administrator)
    round_id = world["round"].pk
    reads = [
        (api, "/api/v1/accounts/", Account),
        (api, "/api/v1/accounts/player-1/", Account),
        (api, "/api/v1/accounts/player-1/ledger/", LedgerEntry),
        (api, "/api/v1/rounds/", Round),
        (api, f"/api/v1/rounds/{round_id}/", Round),
        (api, "/api/v1/bets/", Bet),
        (api, "/api/v1/games/", GameInstance),
        (browser, "/", GameInstance),
        (admin, "/admin/wallet/account/", Account),
        (admin, "/admin/games/bet/", Bet),
        (admin, "/admin/games/round/?q=player-1", Round),  # a search's arms read where the list reads
        (admin, f"/admin/games/round/recall/?round_id={round_id}", Round),
        (admin, "/admin/games/round/export/", Round),
        (admin, "/admin/dashboard/", DailyBetTotals),
    ]
    for client, url, model in reads:
        with queries(DEFAULT_DB_ALIAS) as on_primary, queries(REPLICA) as on_replica:
            response = client.get(url, secure=True)
            if response.streaming:  # an export reads as it is sent
                b"".join(response.streaming_content)
        assert response.status_code == 200, (url, response.status_code)
        assert mentions(on_replica, model), f"{url} did not read {model.__name__} on the replica"
        assert not mentions(on_primary, model), f"{url} read {model.__name__} on the primary"
    with queries(REPLICA) as on_replica:
        dashboard = admin.get("/admin/dashboard/", secure=True)
    assert b'id="data-age"' in dashboard.content  # read from a replica: the page says how old it is


def test_a_replica_serves_a_stale_copy_to_others_and_never_to_the_writer(world, api_as, operator, support, paused,
                                                                         standby_admin, settings):
    settings.REPLICA_MAX_LAG_SECONDS = 60  # only read-your-writes keeps the writer off the stale copy here
    writer, other = api_as(operator), api_as(support)
    paused()
    created = writer.post("/api/v1/accounts/", {"external_id": "player-new", "currency": "USD"}, format="json")
    adjusted = writer.post("/api/v1/accounts/player-1/adjust/", {"amount": "25.00", "reason": "goodwill"},
                           format="json")
    assert (created.status_code, adjusted.status_code) == (201, 201)

    assert other.get("/api/v1/accounts/player-new/").status_code == 404  # the replica has not replayed it
    assert other.get("/api/v1/accounts/player-1/").json()["balance"] == "90.00"  # 100 less the world's bet
    assert writer.get("/api/v1/accounts/player-new/").status_code == 200  # the writer reads the primary
    assert writer.get("/api/v1/accounts/player-1/").json()["balance"] == "115.00"
    listed = [row["external_id"] for row in writer.get("/api/v1/accounts/").json()["results"]]
    assert "player-new" in listed

    # Once the mark is gone, a replica as far behind as the write is old is passed over: the lag allowed
    # is shorter than the mark, so nobody reads a copy older than their own write.
    settings.REPLICA_MAX_LAG_SECONDS = 0.5
    time.sleep(0.6)
    replica_reads.forget_marks()
    cache.clear()
    with queries(REPLICA) as on_replica:
        assert writer.get("/api/v1/accounts/player-new/").status_code == 200
    assert not mentions(on_replica, Account)
    assert standby_account(standby_admin, "player-new") is None  # still not replayed


def test_a_browser_reads_its_own_writes(world, operator, support, paused, settings):
    settings.REPLICA_MAX_LAG_SECONDS = 60
    writer, other = client_for(operator), client_for(support)
    paused()
    response = writer.post(f"/admin/games/round/{world['round'].pk}/void/", {"reason": "table closed"}, secure=True)
    assert response.status_code == 302
    assert replica_reads.COOKIE in response.cookies  # signed, for REPLICA_READ_YOUR_WRITES_SECONDS
    assert Account.objects.get(external_id="player-1").balance == Decimal("100.00")  # the bet refunded
    assert "100.00" in balance_cell(writer)  # the writer's list reads the primary
    assert "90.00" in balance_cell(other)  # another person's reads the replica, which has not replayed it


def balance_cell(client) -> str:
    content = client.get("/admin/wallet/account/", secure=True).content.decode()
    return content[content.index('class="field-balance_shown"'):][:80]


def test_bets_draw_on_the_primarys_balance(world, api_as, integration, operator, paused, standby_admin, settings):
    settings.REPLICA_MAX_LAG_SECONDS = 60
    paused()
    wallet_services.account_adjust(external_id="player-1", actor=operator, amount="400.00", reason="deposit")
    with queries(REPLICA) as on_replica:
        response = api_as(integration).post(f"/api/v1/rounds/{world['round'].pk}/bets/",
                                            {"account": "player-1", "bet_type": "PLAYER", "stake": "300.00",
                                             "idempotency_key": "on-the-primary"}, format="json")
    assert response.status_code == 201, response.content
    assert not on_replica.captured_queries  # money is decided on the primary only
    assert Account.objects.get(external_id="player-1").balance == Decimal("190.00")  # 100 - 10 + 400 - 300
    assert standby_account(standby_admin, "player-1") == Decimal("90.00")  # the standby never saw the deposit


def test_a_lagging_replica_is_passed_over_and_raises_an_alert(world, api_as, support, paused, settings, operator):
    settings.REPLICA_MAX_LAG_SECONDS = 0.5
    paused()
    wallet_services.account_create(actor=operator, external_id="player-late", currency="USD")
    time.sleep(0.8)
    health = replicas.measure(REPLICA)
    assert health.lag > 0.5 and not health.usable
    with queries(REPLICA) as on_replica:
        assert api_as(support).get("/api/v1/accounts/player-late/").status_code == 200
    assert not mentions(on_replica, Account)
    alerts_check(["replicas"])
    alert = Alert.objects.get(kind=AlertKind.REPLICA, key=REPLICA)
    assert "behind the primary" in alert.message


def test_the_replica_is_read_again_once_it_catches_up(world, api_as, support, paused, standby_admin, settings):
    settings.REPLICA_MAX_LAG_SECONDS = 1
    paused()
    Account.objects.filter(external_id="player-1").update(currency="USD")  # a write the standby waits on
    time.sleep(1.2)
    assert not replicas.measure(REPLICA).usable
    standby_admin.execute("SELECT pg_wal_replay_resume()")
    wait_replayed(standby_admin)
    # Replayed all the primary wrote: no lag, however idle (once WAL written meanwhile by the server
    # itself, a standby snapshot or autovacuum, is replayed too).
    deadline = time.monotonic() + 10
    while replicas.measure(REPLICA).lag != 0.0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert replicas.measure(REPLICA).lag == 0.0
    # A write the standby has not replayed yet makes it as old as its last replayed transaction (the
    # token's last use, written by this GET, would otherwise count the 1.2 s above): allow for it.
    settings.REPLICA_MAX_LAG_SECONDS = 30
    with queries(REPLICA) as on_replica:
        api_as(support).get("/api/v1/accounts/")
    assert mentions(on_replica, Account)


def test_a_stopped_replica_costs_no_request_and_raises_an_alert(world, api_as, support, standby, administrator):
    api, admin = api_as(support), client_for(administrator)
    assert api.get("/api/v1/accounts/").status_code == 200  # the replica's connection is open
    replica_server.stop(standby)
    try:
        for client, url in ((api, "/api/v1/accounts/"), (api, "/api/v1/accounts/player-1/"),
                            (admin, "/admin/wallet/account/"), (admin, "/admin/dashboard/"), (Client(), "/")):
            response = client.get(url, secure=True)
            assert response.status_code == 200, (url, response.status_code)
        assert b"player-1" in api.get("/api/v1/accounts/").content
        alerts_check(["replicas"])
        alert = Alert.objects.get(kind=AlertKind.REPLICA, key=REPLICA)
        assert "does not answer" in alert.message
    finally:
        replica_server.run(standby.data_dir, port=standby.port)
    replicas.forget()
    with queries(REPLICA) as on_replica:
        assert api.get("/api/v1/accounts/").status_code == 200
    assert mentions(on_replica, Account)  # back on the replica once it answers again


def test_writes_reads_in_a_transaction_and_writers_use_the_primary(world, operator, settings, rf):
    def get(method="get"):
        request = getattr(rf, method)("/api/v1/accounts/")
        request.user = operator
        return request

    assert replica_reads.read_alias(get()) == REPLICA
    assert 0 <= replica_reads.data_age_seconds(get()) < 5
    assert replica_reads.read_alias(get("post")) == DEFAULT_DB_ALIAS
    with transaction.atomic():
        assert replica_reads.read_alias(get()) == DEFAULT_DB_ALIAS
    replica_reads.mark_write(operator.pk)
    assert replica_reads.read_alias(get()) == DEFAULT_DB_ALIAS
    settings.DATABASE_REPLICAS = []
    cache.clear()
    assert replica_reads.read_alias(get()) == DEFAULT_DB_ALIAS
    assert replica_reads.data_age_seconds(get()) is None
