"""CSV exports of rounds, bets, ledger entries and audit events from their admin changelists:
exactly the rows the changelist's filters and search select, streamed, never an unrevealed seed."""

import csv
import io
import json
import re
from datetime import datetime
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audit.chain import leaf_entry
from audit.exports import AUDIT_EXPORT
from audit.merkle import RootStream, leaf_hash
from audit.models import AuditEvent
from audit.services import audit_head_sign, audit_sequence
from backoffice.admin import exports
from games import services as game_services
from games.exports import BETS_EXPORT, LEDGER_EXPORT, ROUNDS_EXPORT
from games.models import Bet, Round, SeedPair
from tests.admin.helpers import admin_url
from tests.conftest import make_user, verified_login
from wallet import services as wallet_services
from wallet.models import LedgerEntry

pytestmark = pytest.mark.django_db

EXPORTS = {Round: ROUNDS_EXPORT, Bet: BETS_EXPORT, LedgerEntry: LEDGER_EXPORT, AuditEvent: AUDIT_EXPORT}
MODELS = list(EXPORTS)


def export_url(model) -> str:
    opts = model._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_export")


def body(response) -> str:
    assert response.streaming, "an export must stream"
    return b"".join(response.streaming_content).decode("utf-8")


def rows_of(response) -> list[dict]:
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="')
    return list(csv.DictReader(io.StringIO(body(response))))


def exported_ids(response) -> list[int]:
    rows = rows_of(response)
    first_column = next(iter(rows[0])) if rows else None
    return [int(row[first_column]) for row in rows]


def changelist_ids(client, model, params) -> list[int]:
    page = client.get(admin_url(model), params)
    assert page.status_code == 200
    return [obj.pk for obj in page.context["cl"].result_list]


@pytest.fixture
def world(game, operator, play, funded_account):
    """Two players; settled rounds on a revealed pair, a void one, settled and open ones on the active pair."""
    player = funded_account("player-1", "500.00")
    other = funded_account("player-2", "300.00")
    for bet_type in ("PLAYER", "BANKER", "TIE"):
        play(bets=[(player, bet_type, "10.00"), (other, "BANKER", "5.00")])
    game_services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    play(bets=[(player, "BANKER", "2.00")])
    voided = play(bets=[(other, "PLAYER", "3.00")], deal=False)
    game_services.round_void(round_id=voided.pk, actor=operator, reason="Misdeal")
    play(bets=[(player, "PLAYER", "4.00")], deal=False)
    return {"player": player, "other": other}


# --- What is exported -----------------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_an_unfiltered_export_has_every_row_of_the_changelist_with_the_header(as_support, world, model):
    response = as_support.get(export_url(model))

    assert response.status_code == 200
    text = body(response)
    header = next(csv.reader(io.StringIO(text)))
    assert tuple(header) == EXPORTS[model].header
    ids = [int(row[0]) for row in list(csv.reader(io.StringIO(text)))[1:]]
    assert ids == changelist_ids(as_support, model, {})
    assert sorted(ids) == sorted(model.objects.values_list("pk", flat=True))


@pytest.mark.parametrize("model, params, expected", [
    (Round, {"status__exact": "OPEN"}, lambda: Round.objects.filter(status="OPEN")),
    (Round, {"q": "player-2"}, lambda: Round.objects.filter(bets__account__external_id="player-2")),
    (Round, {"status__exact": "SETTLED", "decks__exact": "8"}, lambda: Round.objects.filter(status="SETTLED", decks=8)),
    (Bet, {"bet_type__exact": "BANKER", "q": "player-1"},
     lambda: Bet.objects.filter(bet_type="BANKER", account__external_id="player-1")),
    (Bet, {"status__exact": "REFUNDED"}, lambda: Bet.objects.filter(status="REFUNDED")),
    (LedgerEntry, {"kind__exact": "STAKE", "q": "player-2"},
     lambda: LedgerEntry.objects.filter(kind="STAKE", account__external_id="player-2")),
    (LedgerEntry, {"q": "test deposit"}, lambda: LedgerEntry.objects.filter(reason__icontains="test deposit")),
    (AuditEvent, {"action": "round.voided"}, lambda: AuditEvent.objects.filter(action="round.voided")),
    (AuditEvent, {"object_type": "bet"}, lambda: AuditEvent.objects.filter(object_type="bet")),
], ids=lambda value: value.__name__ if isinstance(value, type) else None)
def test_a_filtered_export_has_exactly_the_filtered_rows(as_support, world, model, params, expected):
    wanted = sorted(set(expected().values_list("pk", flat=True)))
    assert wanted and len(wanted) < model.objects.count(), "the filter must select some rows but not all"

    ids = exported_ids(as_support.get(export_url(model), params))

    assert sorted(ids) == wanted
    assert len(ids) == len(set(ids)), "no row twice"
    assert ids == changelist_ids(as_support, model, params)  # the changelist's rows, in its order


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_the_changelist_links_to_the_export_of_its_current_filters(as_support, world, model):
    params = {"q": "player-1", "p": "0"} if model is not AuditEvent else {"q": "olivia", "p": "0"}

    page = as_support.get(admin_url(model), params)

    tools = {label: url for url, label, _css in page.context["backoffice_tools"]}
    link = tools["Export CSV"]
    assert link.startswith(export_url(model) + "?") and "q=" in link and "p=" not in link
    assert 'class="pf-export-csv"' in page.content.decode()
    ids = exported_ids(as_support.get(link))
    assert ids == changelist_ids(as_support, model, {"q": params["q"]})
    assert 0 < len(ids) < model.objects.count()


def test_round_rows_carry_what_a_regulator_needs(as_support, world):
    rows = {int(row["round_id"]): row for row in rows_of(as_support.get(export_url(Round)))}

    for round_ in Round.objects.select_related("game", "seed_pair"):
        row = rows[round_.pk]
        pair = round_.seed_pair
        assert (row["game"], row["status"], row["nonce"], row["decks"]) == (
            round_.game.slug, round_.status, str(round_.nonce), str(round_.decks))
        assert (row["server_seed_hash"], row["client_seed"], row["seed_pair_id"]) == (
            pair.server_seed_hash, pair.client_seed, str(pair.pk))
        assert row["cards"] == " ".join(round_.cards)
        assert row["player_cards"] == " ".join(round_.player_cards)
        assert row["banker_cards"] == " ".join(round_.banker_cards)
        assert row["outcome"] == (round_.outcome or "")
        assert datetime.fromisoformat(row["opened_at"]) == round_.opened_at
        # The server seed only once revealed, and then the real one.
        assert row["server_seed_revealed"] == (pair.server_seed if pair.revealed_at else "")
    assert any(row["server_seed_revealed"] for row in rows.values())
    assert any(row["status"] == "VOID" and row["void_reason"] == "Misdeal" for row in rows.values())


def test_bet_and_ledger_rows_carry_stake_multiplier_payout_status_and_balances(as_support, world):
    bets = {int(row["bet_id"]): row for row in rows_of(as_support.get(export_url(Bet)))}
    for bet in Bet.objects.select_related("account", "round"):
        row = bets[bet.pk]
        assert (row["account"], row["bet_type"], row["status"], row["round_id"]) == (
            bet.account.external_id, bet.bet_type, bet.status, str(bet.round_id))
        assert Decimal(row["stake"]) == bet.stake and Decimal(row["multiplier"]) == bet.multiplier
        # At the currency's places (USD "3.00"), as the API writes it.
        assert row["payout"] == ("" if bet.payout is None else f"{bet.payout:.2f}")
        # A main bet's event is its round's outcome, once dealt (tests/admin/test_bet_outcomes.py: side bets).
        assert row["event"] == (bet.round.outcome or "")

    ledger = {int(row["entry_id"]): row for row in rows_of(as_support.get(export_url(LedgerEntry)))}
    round_of_bet = dict(Bet.objects.values_list("pk", "round_id"))
    outcome_of_bet = dict(Bet.objects.values_list("pk", "round__outcome"))
    for entry in LedgerEntry.objects.select_related("account"):
        row = ledger[entry.pk]
        assert (row["account"], row["kind"]) == (entry.account.external_id, entry.kind)
        assert Decimal(row["amount"]) == entry.amount and Decimal(row["balance_after"]) == entry.balance_after
        assert row["bet_id"] == ("" if entry.bet_id is None else str(entry.bet_id))
        assert row["round_id"] == ("" if entry.bet_id is None else str(round_of_bet[entry.bet_id]))
        assert row["bet_event"] == ("" if entry.bet_id is None else outcome_of_bet[entry.bet_id] or "")
    assert any(row["amount"].startswith("-") for row in ledger.values()), "debits keep their sign"


def test_the_audit_export_lets_anyone_recompute_each_leaf(as_support, world):
    audit_sequence()
    head = audit_head_sign()
    rows = rows_of(as_support.get(export_url(AuditEvent)))
    assert len(rows) == AuditEvent.objects.count() > 10

    stream = RootStream()
    for row in sorted(rows, key=lambda row: int(row["leaf_index"])):
        values = {
            "id": int(row["event_id"]),
            "created_at": datetime.fromisoformat(row["created_at"]),
            "actor": original(row["actor"]),
            "actor_user_id": int(row["actor_user_id"]) if row["actor_user_id"] else None,
            "action": row["action"], "object_type": row["object_type"], "object_id": original(row["object_id"]),
            "before": json.loads(original(row["before"])) if row["before"] else None,
            "after": json.loads(original(row["after"])) if row["after"] else None,
            "reason": original(row["reason"]), "request_id": original(row["request_id"]),
            "source_ip": row["source_ip"] or None,
        }
        stream.append(leaf_hash(leaf_entry(values)))
        assert int(row["covered_by_head"]) == head.tree_size
    assert stream.root().hex() == head.root_hash


def test_typed_text_cannot_run_as_a_spreadsheet_formula(as_support, operator, world):
    wallet_services.account_adjust(external_id="player-1", actor=operator, amount="-1.00",
                                       reason='=HYPERLINK("http://evil.example","x")')

    rows = rows_of(as_support.get(export_url(LedgerEntry), {"q": "HYPERLINK"}))

    assert len(rows) == 1
    assert rows[0]["reason"] == '\'=HYPERLINK("http://evil.example","x")'
    assert rows[0]["amount"] == "-1.00"


# --- No formula, whichever separator a spreadsheet splits on ------------------------------------------

FORMULA_CHARACTERS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
SEPARATORS = (",", ";", "\t")
NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")  # a whole cell that is a number is a number, not a formula
HOSTILE = [
    "x;=1+1;y", "x,=1+1,y", "x\t=1+1\ty", "=1+1", "+1+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1", "x; =1",
    'x;"=1+1";y', "x\n=1+1", "x\r\n-1", "a;\tb", "a;\rb", "a,@b", "\uff1dSUM(A1)", "x;\uff0b1", "'=1", "''",
    "';=1;'", '=HYPERLINK("http://evil.example","x")', "x;;=1", "x; ;=1",
]


def original(cell: str) -> str:
    """The value back from its exported cell: one ' removed wherever safe_cell put one."""
    return re.sub(r"""(\A|[,;\t\r\n])([ "]*)'""", r"\1\2", cell)


def spreadsheet_cells(text: str):
    """Every cell a spreadsheet could make of the export: split on each separator, honouring the
    double quotes or not, lines ended by any line break when not."""
    for separator in SEPARATORS:
        yield from (cell for row in csv.reader(io.StringIO(text, newline=""), delimiter=separator) for cell in row)
        for line in re.split(r"\r\n|\r|\n", text):
            yield from line.split(separator)


def formula_cells(text: str) -> list[str]:
    return [cell for cell in spreadsheet_cells(text)
            if cell.lstrip(' "').startswith(FORMULA_CHARACTERS) and not NUMBER.fullmatch(cell)]


@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_no_fragment_of_a_cell_starts_a_formula_and_the_value_comes_back(value):
    cell = exports.safe_cell(value)

    line = io.StringIO()
    csv.writer(line).writerow(["1", cell, "-1.25"])
    assert formula_cells(line.getvalue()) == []
    assert original(cell) == value


@pytest.mark.parametrize("value", ["-1.25", "-1", "0", "12", "1000000.00", "player-1", "a b", "", "x;y", "2026-12-02"])
def test_numbers_and_harmless_text_are_written_as_they_are(value):
    assert exports.safe_cell(value) == value


def test_no_cell_of_any_export_starts_a_formula_whichever_separator(as_support, operator, integration, game,
                                                                     funded_account):
    funded_account("x;=1+1;y", "100.00")
    wallet_services.account_adjust(external_id="x;=1+1;y", actor=operator, amount="-1.25",
                                   reason="refund;@SUM(A1)\t=1,-2+3")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id="x;=1+1;y", bet_type="BANKER", stake="1.00",
                            idempotency_key="k;+1;-1", client=integration)
    game_services.round_void(round_id=round_.pk, actor=operator, reason="a,=cmd|' /C calc'!A0")

    for model in MODELS:
        text = body(as_support.get(export_url(model)))
        assert formula_cells(text) == [], model.__name__
    ledger = rows_of(as_support.get(export_url(LedgerEntry), {"q": "refund"}))
    assert [row["amount"] for row in ledger] == ["-1.25"]  # a number stays a number
    assert ledger[0]["account"] == "x;'=1+1;y"
    assert original(ledger[0]["reason"]) == "refund;@SUM(A1)\t=1,-2+3"


# --- Streaming -------------------------------------------------------------------------------------

def test_a_large_export_streams_in_chunks_reading_rows_as_it_goes(as_support, game):
    pair = SeedPair.objects.get(game=game)
    total = 6000
    Round.objects.bulk_create(
        [Round(game=game, seed_pair=pair, nonce=nonce, decks=game.decks) for nonce in range(total)],
        batch_size=1000,
    )

    with CaptureQueriesContext(connection) as before_reading:
        response = as_support.get(export_url(Round))
    assert response.streaming is True
    assert not [q for q in before_reading.captured_queries if "games_round" in q["sql"]], \
        "no round is read before the client reads the response"
    assert not [q for q in before_reading.captured_queries if "COUNT(" in q["sql"].upper()]

    with CaptureQueriesContext(connection) as reading:
        chunks = list(response.streaming_content)
    assert len(chunks) > 5, "the rows arrive in several chunks, not one body"
    assert max(len(chunk) for chunk in chunks) < 2 * exports.FLUSH_CHARS
    assert len(reading.captured_queries) <= 2  # one read of the rows (iterator), no query per row
    lines = b"".join(chunks).decode().splitlines()
    assert len(lines) == total + 1
    assert len({line.split(",")[0] for line in lines[1:]}) == total


def test_the_export_reads_with_an_iterator(monkeypatch, as_support, world):
    seen = []
    original = Round.objects.none().__class__.iterator

    def spy(self, chunk_size=None):
        seen.append(chunk_size)
        return original(self, chunk_size=chunk_size)

    monkeypatch.setattr(type(Round.objects.none()), "iterator", spy)

    body(as_support.get(export_url(Round)))

    assert seen == [exports.CHUNK_SIZE]


# --- Secrets ------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_no_export_contains_an_unrevealed_server_seed(as_admin, world, model):
    secrets = list(SeedPair.objects.filter(revealed_at__isnull=True).values_list("server_seed", flat=True))
    assert secrets

    text = body(as_admin.get(export_url(model)))

    assert len(text.splitlines()) > 2
    for secret in secrets:
        assert secret not in text and secret[:16] not in text and secret[-16:] not in text


def test_an_export_cannot_probe_a_server_seed(as_admin, world):
    secret = SeedPair.objects.filter(revealed_at__isnull=True).values_list("server_seed", flat=True).first()

    response = as_admin.get(export_url(Round), {"seed_pair__server_seed__startswith": secret[:1]})

    assert response.status_code == 400
    assert not getattr(response, "streaming", False)


def test_unknown_filter_parameters_send_back_to_the_changelist(as_support, world):
    response = as_support.get(export_url(Round), {"no_such_field": "1"})

    assert response.status_code == 302
    assert response["Location"] == admin_url(Round) + "?e=1"


# --- Who may export ---------------------------------------------------------------------------------

@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_staff_roles_may_export_and_no_one_else(client, as_operator, as_admin, as_support, integration, nobody,
                                                world, model):
    for staff in (as_support, as_operator, as_admin):
        assert staff.get(export_url(model)).status_code == 200

    nobody.is_staff = True
    nobody.save()
    verified_login(client, nobody)
    assert client.get(export_url(model)).status_code == 403

    client.force_login(integration)
    response = client.get(export_url(model))
    assert response.status_code == 302 and reverse("admin:login") in response["Location"]


def test_the_export_needs_the_models_own_view_permission(client, world):
    viewer = make_user("round-viewer", None)
    viewer.is_staff = True
    viewer.save()
    viewer.user_permissions.add(Permission.objects.get(codename="view_round"))
    verified_login(client, viewer)

    assert client.get(export_url(Round)).status_code == 200
    assert client.get(export_url(Bet)).status_code == 403
    assert client.get(export_url(AuditEvent)).status_code == 403
    page = client.get(admin_url(Round))
    assert export_url(Round).encode() in page.content


def test_an_export_writes_nothing(as_support, world):
    events = AuditEvent.objects.count()
    for model in MODELS:
        body(as_support.get(export_url(model)))
    assert AuditEvent.objects.count() == events
