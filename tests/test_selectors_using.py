"""Every selector reads from the database alias it is given (``using``): here "replica", a second
alias on a connection of its own, a test mirror of the default database as a read replica would be.

The rows are committed (a transactional test) so that the replica's connection sees them; each
selector's result read there is the one read from the default database. The alias exists for this
module only: added before its first test's database set-up (which checks the aliases a test names).
"""

import copy
import dataclasses
from decimal import Decimal

import pytest
from django.core.paginator import Page
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Model, QuerySet
from django.test.utils import CaptureQueriesContext

from alerts import selectors as alert_selectors
from alerts import services as alert_services
from alerts.checks import Finding
from approvals import selectors as approval_selectors
from approvals import services as approval_services
from audit import selectors as audit_selectors
from audit.choices import AuditAction
from audit.models import AuditLeaf
from audit.services import audit_head_sign, audit_record
from games import selectors as game_selectors
from games import services as game_services
from wallet import selectors as wallet_selectors
from wallet import services as wallet_services

REPLICA = "replica"

pytestmark = pytest.mark.django_db(transaction=True, databases=[DEFAULT_DB_ALIAS, REPLICA])


@pytest.fixture(scope="module", autouse=True)
def replica_alias(django_db_setup):
    """The alias "replica": the default database's settings (its test database, its login) with
    TEST MIRROR "default" (so the flush between tests leaves it alone), on a connection of its own."""
    settings_dict = copy.deepcopy(connections[DEFAULT_DB_ALIAS].settings_dict)
    settings_dict["TEST"]["MIRROR"] = DEFAULT_DB_ALIAS
    connections.settings[REPLICA] = settings_dict  # settings.DATABASES, configured once and cached
    yield
    del connections[REPLICA]
    del connections.settings[REPLICA]


@pytest.fixture(autouse=True)
def replica():
    yield connections[REPLICA]
    connections[REPLICA].close()  # before the flush


def _plain(value):
    """What a selector returned, evaluated (querysets, pages) and comparable (instances by pk)."""
    if isinstance(value, Model):
        return type(value).__name__, value.pk
    if isinstance(value, Page):
        return value.number, _plain(list(value.object_list))
    if isinstance(value, QuerySet | list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    return value


def read_on_replica(selector, *args, **kwargs):
    """Call the selector with using="replica": every query runs on the replica's connection, none on
    the default's, and the result is the one the default database gives."""
    with (CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as on_default,
          CaptureQueriesContext(connections[REPLICA]) as on_replica):
        result = selector(*args, **kwargs, using=REPLICA)
        plain = _plain(result)
    name = selector.__qualname__
    assert on_replica.captured_queries, f"{name} ran no query on the replica"
    assert not on_default.captured_queries, (name, on_default.captured_queries)
    assert plain == _plain(selector(*args, **kwargs)), name
    return result


@pytest.fixture
def history(game, integration, operator, funded_account):
    """Two players' bets on a dealt round, the seeds rotated (its pair revealed), a bet on an open round."""
    for player in ("p0", "p1"):
        funded_account(player, "100.00")
    dealt = game_services.round_open(game_id=game.pk, actor=integration)
    for player in ("p0", "p1"):
        game_services.bet_place(round_id=dealt.pk, account_external_id=player, bet_type="PLAYER", stake="1.00",
                                idempotency_key=f"dealt-{player}", client=integration)
    game_services.round_deal(round_id=dealt.pk, actor=integration)
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    open_round = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=open_round.pk, account_external_id="p0", bet_type="BANKER", stake="2.00",
                            idempotency_key="open-p0", client=integration)
    game.refresh_from_db()
    return dealt, open_round


def test_games(history, game):
    dealt, open_round = history
    account = wallet_selectors.account_get(external_id="p0")
    bet_ids = list(game_selectors.bet_list().values_list("pk", flat=True))
    revealed = game_selectors.seed_pairs_revealed(game=game).first()
    assert revealed is not None and len(bet_ids) == 3

    read_on_replica(game_selectors.game_list)
    read_on_replica(game_selectors.game_get, slug=game.slug)
    active = read_on_replica(game_selectors.seed_pair_active, game=game)
    assert read_on_replica(game_selectors.seed_pair_open_rounds, pair=open_round.seed_pair) == 1
    read_on_replica(game_selectors.seed_pairs_revealed, game=game)
    assert read_on_replica(game_selectors.public_games)[0].active_pair == active
    read_on_replica(game_selectors.seed_pair_revealed_rounds, pair=revealed)
    assert read_on_replica(game_selectors.seed_pair_round_counts, pair=revealed) == {"dealt_rounds": 1,
                                                                                      "voided_rounds": 0}
    read_on_replica(game_selectors.seed_pair_revealed_by_hash, server_seed_hash=revealed.server_seed_hash)
    read_on_replica(game_selectors.round_list, filters={"game": game.slug, "status": dealt.status})
    assert read_on_replica(game_selectors.round_get, round_id=dealt.pk)._state.db == REPLICA
    recalled = read_on_replica(game_selectors.round_recall, round_id=dealt.pk)
    assert len(recalled.bets.all()) == 2  # prefetched from the replica
    read_on_replica(game_selectors.round_search, account="p0", game=game)
    page = read_on_replica(game_selectors.round_search_page, account="p0", per_page=1)
    assert page.has_next and page.rounds[0].bet_count == 1
    read_on_replica(game_selectors.bet_list, filters={"account": "p0", "game": game.slug})
    read_on_replica(game_selectors.bet_get, bet_id=bet_ids[0])
    read_on_replica(game_selectors.account_bets, account=account, per_page=1)
    read_on_replica(game_selectors.bets_by_id, bet_ids)
    assert len(read_on_replica(game_selectors.account_bets_of_rounds, account="p0",
                               round_ids=[dealt.pk, open_round.pk])) == 2
    read_on_replica(game_selectors.ledger_entries_of_bets, bet_ids)


def test_the_bets_read_loads_what_it_read_as_from_the_replica(history):
    _, open_round = history
    with CaptureQueriesContext(connections[DEFAULT_DB_ALIAS]) as on_default:
        round_, account = game_selectors.round_for_bet(round_id=open_round.pk, account_external_id="p0",
                                                       using=REPLICA)
    assert not on_default.captured_queries
    assert (round_.pk, round_.game.slug, account.external_id) == (open_round.pk, "main-table", "p0")
    assert {round_._state.db, round_.game._state.db, account._state.db} == {REPLICA}
    default_round, default_account = game_selectors.round_for_bet(round_id=open_round.pk, account_external_id="p0")
    assert {default_round._state.db, default_account._state.db} == {DEFAULT_DB_ALIAS}
    assert read_on_replica(game_selectors.round_for_bet, round_id=open_round.pk,
                           account_external_id="nobody")[1] is None


def test_wallet(history):
    account = wallet_selectors.account_get(external_id="p0")
    read_on_replica(wallet_selectors.account_list)
    read_on_replica(wallet_selectors.account_get, external_id="p0")
    read_on_replica(wallet_selectors.account_ledger, account=account)
    history_page = read_on_replica(wallet_selectors.account_history, account=account, page=2, per_page=1)
    assert history_page.opening == Decimal("100.00")
    assert read_on_replica(wallet_selectors.account_ledger_discrepancies, account=account) == []


def test_audit(operator):
    # Events sequenced and signed in the transaction that writes them (the sequencer takes its own
    # transaction's events), whatever transaction of another database of the server is still running.
    with transaction.atomic():
        for object_id in ("1", "2", "3"):
            audit_record(actor=operator, action=AuditAction.GAME_CREATED, object_type="game", object_id=object_id)
        head = audit_head_sign()
    event = AuditLeaf.objects.order_by("index").first().event
    assert head.tree_size >= 3
    assert read_on_replica(audit_selectors.audit_latest_head) == head
    read_on_replica(audit_selectors.audit_log_status)
    read_on_replica(audit_selectors.audit_public_head)
    assert read_on_replica(audit_selectors.audit_unverified_heads) == []
    proof = read_on_replica(audit_selectors.audit_inclusion_proof, event.pk)
    assert proof["root_hash"] == head.root_hash and proof["audit_path"]
    assert read_on_replica(audit_selectors.audit_consistency_proof, 1)["proof"]
    read_on_replica(audit_selectors.audit_event_list, filters={"object_type": "game"})
    read_on_replica(audit_selectors.audit_chain_check)


def test_alerts_and_approvals(operator, funded_account):
    alert, _ = alert_services.alert_raise(Finding("settlement_lag", "settlement", "warning", "3 rounds wait."))
    funded_account("whale", "0")
    approval = approval_services.approval_gate(wallet_services.account_adjust, external_id="whale", actor=operator,
                                               amount="20000.00", reason="Jackpot")
    read_on_replica(alert_selectors.alert_list, filters={"status": alert.status})
    assert read_on_replica(alert_selectors.alerts_unresolved) == [alert]
    read_on_replica(alert_selectors.alert_get, alert_id=alert.pk)
    assert list(read_on_replica(approval_selectors.approval_list, filters={"status": "pending"})) == [approval]
    read_on_replica(approval_selectors.approval_get, approval_id=approval.pk)
