"""The bets and the ledger partitioned by month (games 0016, wallet 0007): new rows land in their
month's partition, the rules hold across partitions (the foreign key from the ledger to the bets,
the idempotency key in games_betkey, the one effect per bet and kind in wallet_ledgereffect), and
whole months are archived and restored with every row, balance and sum as before; a bets month that
still holds unsettled bets, or bets paid in a month kept online, stays online for the next archive."""

from datetime import UTC, date, datetime
from decimal import Decimal
from io import StringIO

import psycopg
import pytest
from django.core.management import call_command
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Count, Sum

from audit import partitioning
from audit.models import AuditEvent
from core.errors import Conflict
from dbutils import partitions
from dbutils.postgresql import urls
from games import services as game_services
from games.models import Bet
from tests import app_role
from wallet.models import Account, LedgerEntry

BETS, LEDGER = Bet._meta.db_table, LedgerEntry._meta.db_table


def month_now() -> date:
    """The month of the ids PostgreSQL gives now: asked by each test, so that a run crossing a
    month's end does not carry the month it started in."""
    return datetime.now(UTC).date().replace(day=1)


def month_before_now() -> date:
    return partitioning.months_before(month_now(), 1)


def run(statement, params=None):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def partition_of(table: str, row_id: int) -> str:
    [(name,)] = run(f"SELECT tableoid::regclass::text FROM {table} WHERE id = %s", [row_id])
    return name


def drop_month(table: str, month: date) -> None:
    """Detached first: a bets month is referenced by the ledger's foreign key."""
    name = partitions.partition_name(table, month)
    if name in partitions.month_partitions(table).values():
        run(f"ALTER TABLE {table} DETACH PARTITION {name}")
    run(f"DROP TABLE IF EXISTS {name}")


@pytest.fixture
def last_month(transactional_db):
    """Last month's partitions of the bets and the ledger, as a database converted before it has:
    their legacy partitions end there instead of at this month (they hold no id of a month)."""
    with app_role.as_owner():
        for table in (BETS, LEDGER):
            partitions.move_legacy_end(table, partitions.month_start_id(month_before_now()))
            partitions.ensure(table, ahead=0, today=month_before_now())
    yield month_before_now()
    with app_role.as_owner():
        run(f"DROP SCHEMA IF EXISTS {partitions.ARCHIVE_SCHEMA} CASCADE")
        run(f"TRUNCATE {LEDGER}")  # as the flush after the test would: no entry keeps a bet of last month
        for table in (LEDGER, BETS):  # the referencing months first
            drop_month(table, month_before_now())
        for table in (BETS, LEDGER):
            partitions.move_legacy_end(table, partitions.month_start_id(month_now()))


def last_month_bets(game, integration, account, statuses, first: int = 1):
    """Bets of last month (ids in its partition) on a dealt round, each settled one paid through the
    ledger as settlement would (stake, then payout, each with its effect), the balance kept equal to
    the ledger's sum. Returns the bets' ids."""
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.round_deal(round_id=round_.pk, actor=integration)
    base, balance, ids = partitions.month_start_id(month_before_now()), account.balance, []
    with app_role.as_owner(), transaction.atomic():
        for n, status in enumerate(statuses, start=first):
            payout = {"WON": Decimal("20.00"), "LOST": Decimal("0.00")}.get(status)
            held = status == "HELD"
            run(f"INSERT INTO {BETS} (id, round_id, account_id, client_id, bet_type, stake, multiplier, "
                "idempotency_key, status, payout, placed_at, settled_at, hold_reason, held_at) VALUES "
                "(%s, %s, %s, %s, 'PLAYER', 10, 2, %s, %s, %s, now(), CASE WHEN %s THEN now() END, %s, "
                "CASE WHEN %s THEN now() END)",
                [base + n, round_.pk, account.pk, integration.pk, f"old-{n}", status, payout, payout is not None,
                 "test hold" if held else "", held])
            run("INSERT INTO games_betkey (client_id, idempotency_key, bet_id) VALUES (%s, %s, %s)",
                [integration.pk, f"old-{n}", base + n])
            for kind, amount in (("STAKE", Decimal("-10.00")), ("PAYOUT", payout)):
                if amount:
                    balance += amount
                    run(f"INSERT INTO {LEDGER} (id, account_id, bet_id, kind, amount, balance_after, reason, "
                        "created_at) VALUES (%s, %s, %s, %s, %s, %s, '', now())",
                        [base + 2 * n + (kind == "PAYOUT"), account.pk, base + n, kind, amount, balance])
                    run("INSERT INTO wallet_ledgereffect (bet_id, kind) VALUES (%s, %s)", [base + n, kind])
            ids.append(base + n)
        run(f"UPDATE {Account._meta.db_table} SET balance = %s WHERE id = %s", [balance, account.pk])
    return ids


def figures(account) -> dict:
    """What an archive and a restore must leave as it was."""
    account.refresh_from_db()
    ledger = LedgerEntry.objects.filter(account=account)
    return {
        "bets": sorted(Bet.objects.values_list("id", "status", "payout")),
        "entries": sorted(ledger.values_list("id", "bet_id", "kind", "amount", "balance_after")),
        "balance": account.balance,
        "ledger_sum": ledger.aggregate(total=Sum("amount"))["total"],
        "by_status": dict(Bet.objects.values_list("status").annotate(n=Count("id"), paid=Sum("payout"))
                          .values_list("status", "paid")),
    }


def attached(table: str) -> set:
    return set(partitions.month_partitions(table))


def test_new_bets_and_entries_land_in_this_months_partitions(game, integration, funded_account):
    funded_account("player-1", "100.00")
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    bet, _created = game_services.bet_place(round_id=round_.pk, account_external_id="player-1", bet_type="BANKER",
                                            stake="5.00", idempotency_key="k-1", client=integration)
    assert run("SELECT relname, relkind FROM pg_class WHERE relname IN (%s, %s) ORDER BY relname", [BETS, LEDGER]) \
        == [(BETS, "p"), (LEDGER, "p")]
    assert partitions.month_of_id(bet.pk) == month_now()
    assert partition_of(BETS, bet.pk) == partitions.partition_name(BETS, month_now())
    [stake] = LedgerEntry.objects.filter(bet_id=bet.pk)
    assert partition_of(LEDGER, stake.pk) == partitions.partition_name(LEDGER, month_now())
    for table in (BETS, LEDGER):
        assert partitioning.months_ahead(table) >= partitioning.MONTHS_AHEAD
    # The rules across partitions: the key of a bet of this month, reused by one of next month's, is
    # refused by games_betkey; a second stake of the bet by wallet_ledgereffect; an entry of a bet
    # that does not exist by the foreign key, whichever month's partition the entry is in.
    later = partitions.month_start_id(partitions.next_month(month_now())) + 1
    refused = [
        ("games_betkey_pkey", "INSERT INTO games_betkey (client_id, idempotency_key, bet_id) VALUES (%s, 'k-1', %s)",
         [integration.pk, later]),
        ("wallet_ledgereffect_pkey", "INSERT INTO wallet_ledgereffect (bet_id, kind) VALUES (%s, 'STAKE')", [bet.pk]),
        ("fk_games_bet_id", f"INSERT INTO {LEDGER} (id, account_id, bet_id, kind, amount, balance_after, reason, "
                            "created_at) VALUES (%s, %s, %s, 'PAYOUT', 1, 1, '', now())",
         [later, stake.account_id, later]),
    ]
    for constraint, statement, params in refused:
        with pytest.raises(IntegrityError, match=constraint), transaction.atomic():
            run(statement, params)
            run("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.owner
def test_the_partitioned_tables_are_registered_and_ensured(transactional_db):
    assert partitioning.PARTITIONED_TABLES.index(LEDGER) < partitioning.PARTITIONED_TABLES.index(BETS)
    assert partitioning.partitions_ensure() == []  # the migrations made this month and two more
    later = partitions.next_month(partitions.next_month(partitions.next_month(month_now())))
    made = partitioning.partitions_ensure(today=later)
    assert partitions.partition_name(BETS, partitions.next_month(later)) in made
    assert partitions.partition_name(LEDGER, partitions.next_month(later)) in made
    for table in partitioning.PARTITIONED_TABLES:
        for month in (later, partitions.next_month(later), partitions.next_month(partitions.next_month(later))):
            drop_month(table, month)


def archive_command(tmp_path, name: str) -> str:
    out = StringIO()
    with app_role.as_owner():
        call_command("partitions", "archive", "--before", f"{month_now():%Y-%m-%d}", "--to", str(tmp_path / name),
                     stdout=out)
    return out.getvalue()


def test_archive_keeps_a_bets_month_with_unsettled_bets_online_and_the_next_archive_takes_it(
        last_month, game, integration, funded_account, tmp_path):
    account = funded_account("player-1", "100.00")
    pending, held = last_month_bets(game, integration, account, ["PENDING", "HELD"])
    said = archive_command(tmp_path, "first")
    assert f"kept online: {BETS} from {month_before_now():%Y-%m} on, as bet {pending} is not settled yet" in said
    # the ledger's month went
    assert month_before_now() in attached(BETS) and month_before_now() not in attached(LEDGER)
    assert sorted(p.name for p in (tmp_path / "first").glob("*.json")) == [
        f"{partitions.partition_name(LEDGER, month_before_now())}.json"]
    assert set(Bet.objects.filter(pk__in=[pending, held]).values_list("status", flat=True)) == {"PENDING", "HELD"}
    event = AuditEvent.objects.get(action="partitions.archived")
    assert event.after["kept_online"] == {BETS: {"from": f"{month_before_now():%Y-%m}",
                                                 "why": f"bet {pending} is not settled yet"}}
    with app_role.as_owner():  # settled by hand (the owner passes no trigger: the bets have none)
        run(f"UPDATE {BETS} SET status = 'LOST', payout = 0, settled_at = now() WHERE id IN (%s, %s)", [pending, held])
    said = archive_command(tmp_path, "next")
    assert "kept online" not in said and f"archived {partitions.partition_name(BETS, month_before_now())} " in said
    assert month_before_now() not in attached(BETS)


def test_archive_keeps_a_bets_month_paid_in_a_month_kept_online(last_month, game, integration, funded_account,
                                                                tmp_path):
    """A round dealt across midnight at the month's end pays in the next month: its entry's foreign
    key keeps the bets' month online, and the ledger's and the events' months go."""
    account = funded_account("player-1", "100.00")
    [settled, refunded] = last_month_bets(game, integration, account, ["WON", "LOST"])
    [(entry,)] = run(f"INSERT INTO {LEDGER} (account_id, bet_id, kind, amount, balance_after, reason, created_at) "
                     "VALUES (%s, %s, 'REFUND', 10, 0, '', now()) RETURNING id", [account.pk, refunded])
    said = archive_command(tmp_path, "first")
    assert (f"kept online: {BETS} from {month_before_now():%Y-%m} on, as bet {refunded} is paid or refunded by ledger "
            f"entry {entry}, of a month kept online") in said
    assert month_before_now() in attached(BETS) and month_before_now() not in attached(LEDGER)
    assert Bet.objects.filter(pk__in=[settled, refunded]).count() == 2
    assert LedgerEntry.objects.filter(pk=entry, bet_id=refunded).exists()
    assert "kept online" in archive_command(tmp_path, "again")  # as long as the entry is online


def test_bets_and_ledger_months_archived_and_restored_with_every_row(last_month, game, integration,
                                                                     funded_account, tmp_path):
    account = funded_account("player-1", "100.00")
    old = last_month_bets(game, integration, account, ["WON", "LOST", "WON"])
    round_ = game_services.round_open(game_id=game.pk, actor=integration)
    game_services.bet_place(round_id=round_.pk, account_external_id="player-1", bet_type="TIE", stake="1.00",
                            idempotency_key="new-1", client=integration)
    expected = figures(account)
    assert expected["ledger_sum"] == expected["balance"] == Decimal("109.00")  # 100 - 3 × 10 + 2 × 20 - 1

    with app_role.as_owner():
        archived = partitioning.partitions_archive(before=month_now(), to=tmp_path)
    manifests = archived.manifests
    assert [(m["table"], m["rows"]) for m in manifests] == [(LEDGER, 5), (BETS, 3)] and not archived.kept_online
    assert not Bet.objects.filter(pk__in=old).exists()
    assert month_before_now() not in partitions.month_partitions(BETS)
    assert LedgerEntry.objects.filter(account=account).count() == 2  # the fund and the new stake

    files = [str(tmp_path / m["file"]) for m in manifests]  # the ledger's first: restore reorders
    out = StringIO()
    with app_role.as_owner():
        for manifest in manifests:  # restored from the files alone
            run(f"DROP TABLE {partitions.ARCHIVE_SCHEMA}.{manifest['partition']}")
        call_command("partitions", "restore", *files, stdout=out)
    assert out.getvalue().index(BETS) < out.getvalue().index(LEDGER)
    assert figures(account) == expected
    for table in (BETS, LEDGER):  # validated before the attach, which took them as the parent's keys
        [(own, parents)] = run("SELECT count(*) FILTER (WHERE conparentid = 0), count(*) FROM pg_constraint "
                               "WHERE conrelid = %s::regclass AND contype = 'f' AND conparentid = 0", [table])
        [(standalone, inherited)] = run(
            "SELECT count(*) FILTER (WHERE conparentid = 0), count(*) FILTER (WHERE conparentid <> 0 AND convalidated) "
            "FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
            [partitions.partition_name(table, month_before_now())])
        assert (standalone, inherited) == (0, parents) and own == parents > 0
        [(estimated,)] = run("SELECT reltuples FROM pg_class WHERE oid = %s::regclass",  # analysed
                             [partitions.partition_name(table, month_before_now())])
        assert estimated == {BETS: 3, LEDGER: 5}[table]
        # Its indexes built before the attach, which took each as the parent's: none built twice.
        [(parent_indexes,)] = run("SELECT count(*) FROM pg_index WHERE indrelid = %s::regclass", [table])
        [(indexes, attached_indexes)] = run(
            "SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT FROM pg_inherits h "
            "WHERE h.inhrelid = i.indexrelid)) FROM pg_index i WHERE i.indrelid = %s::regclass",
            [partitions.partition_name(table, month_before_now())])
        assert indexes == attached_indexes == parent_indexes > 1
    with pytest.raises(DatabaseError), transaction.atomic():  # the restored ledger month is append-only
        run(f"UPDATE {LEDGER} SET amount = 1 WHERE bet_id = %s", [old[0]])
    with app_role.as_owner(), pytest.raises(IntegrityError), transaction.atomic():  # and its key holds
        run(f"INSERT INTO {LEDGER} (id, account_id, bet_id, kind, amount, balance_after, reason, created_at) "
            "VALUES (%s, %s, %s, 'PAYOUT', 1, 1, '', now())",
            [partitions.month_start_id(month_before_now()) + 100, account.pk,
             partitions.month_start_id(month_before_now()) + 99])
        run("SET CONSTRAINTS ALL IMMEDIATE")


def test_a_restore_that_fails_records_the_months_it_attached(last_month, game, integration, funded_account,
                                                             tmp_path):
    """The log says which months are archived (audit_verify reads it): a month attached before a
    later file failed its check must be named by a partitions.restored event."""
    account = funded_account("player-1", "100.00")
    last_month_bets(game, integration, account, ["WON", "LOST"])
    with app_role.as_owner():
        manifests = partitioning.partitions_archive(before=month_now(), to=tmp_path).manifests
    ledger_file = next(tmp_path / m["file"] for m in manifests if m["table"] == LEDGER)
    ledger_file.write_bytes(ledger_file.read_bytes() + b"\0")  # no longer its manifest's SHA-256
    with app_role.as_owner(), pytest.raises(partitions.ArchiveError, match="SHA-256"):
        partitioning.partitions_restore(files=[tmp_path / m["file"] for m in manifests])
    [restored] = AuditEvent.objects.filter(action="partitions.restored").values_list("after", flat=True)
    assert [(m["table"], m["rows"]) for m in restored["manifests"]] == [(BETS, 2)]
    assert month_before_now() in attached(BETS) and month_before_now() not in attached(LEDGER)


def test_one_archive_restore_or_compaction_at_a_time(last_month, tmp_path):
    url = urls.to_url(app_role.owner_settings(), name=connection.settings_dict["NAME"])
    with psycopg.connect(url, autocommit=True) as other:  # another run's session holds the lock
        other.execute("SELECT pg_advisory_lock(%s)", [partitioning.ADVISORY_LOCK])
        with app_role.as_owner():
            for run_it in (lambda: partitioning.partitions_archive(before=month_now(), to=tmp_path),
                           lambda: partitioning.partitions_restore(files=[]),
                           lambda: partitioning.partitions_compact()):
                with pytest.raises(Conflict, match="Another archive, restore or compaction is running"):
                    run_it()
    with app_role.as_owner():  # its session gone, the lock goes with it
        assert partitioning.partitions_restore(files=[]) == []


def indexes_attached_and_valid(partition: str) -> list:
    """(valid, attached to the parent's index) of each index of ``partition``."""
    return run("SELECT i.indisvalid, EXISTS (SELECT FROM pg_inherits WHERE inhrelid = i.indexrelid) "
               "FROM pg_index i WHERE i.indrelid = %s::regclass", [partition])


def test_a_closed_month_is_compacted_once_with_every_row_and_index_kept(last_month, game, integration,
                                                                        funded_account, settings):
    account = funded_account("player-1", "100.00")
    ids = last_month_bets(game, integration, account, ["WON", "LOST", "HELD", "WON"])
    before = figures(account)
    closed_on = partitions.next_month(last_month)  # its last day's bets settle for a few days more
    with app_role.as_owner():
        settings.PARTITIONS_COMPACT_AFTER_DAYS = 7
        assert partitioning.partitions_compact(today=closed_on.replace(day=7)) == []
        compacted = partitioning.partitions_compact(today=closed_on.replace(day=8))
        names = [partitions.partition_name(table, last_month) for table in (LEDGER, BETS)]
        assert [done["partition"] for done in compacted] == names  # not this month's: still written
        assert all(done["index_bytes_after"] > 0 and done["index_bytes_before"] > 0 for done in compacted)
        assert partitioning.partitions_compact(today=closed_on.replace(day=9)) == []  # once
        for name in names:
            assert indexes_attached_and_valid(name) and all(
                valid and attached for valid, attached in indexes_attached_and_valid(name)), name
    assert figures(account) == before
    assert set(Bet.objects.filter(status="WON", id__in=ids).values_list("id", flat=True)) == {ids[0], ids[3]}
    events = AuditEvent.objects.filter(action="partitions.compacted").order_by("id")
    assert [(event.object_id, event.after["month"]) for event in events] == [(n, f"{last_month:%Y-%m}") for n in names]


def test_the_compact_command_and_its_daily_task(last_month, settings):
    from audit.tasks import compact_partitions

    settings.PARTITIONS_COMPACT_AFTER_DAYS = 400  # last month closed fewer days ago than that
    out = StringIO()
    with app_role.as_owner():
        call_command("partitions", "compact", stdout=out)
        assert out.getvalue() == "no closed month left to compact\n"
        settings.PARTITIONS_COMPACT_AFTER_DAYS = 0
        call_command("partitions", "compact", stdout=out)
        assert compact_partitions() == []  # done by the command
    lines = out.getvalue().splitlines()[1:]
    assert [line.split(":")[0] for line in lines] == [
        f"compacted {partitions.partition_name(table, last_month)}" for table in (LEDGER, BETS)]
    assert all(" MB, then " in line for line in lines)
