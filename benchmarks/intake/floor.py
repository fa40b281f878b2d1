"""The SQL floor: a bet's durable writes (the balance, the bet and its idempotency key, its ledger
entry and its one-effect row) as one transaction per bet, by pgbench at the same concurrency, with
nothing of the application in the way."""

import os
import re
import subprocess
import tempfile

from django.core.management.base import CommandError

from dbutils import embedded_server
from games.models import Bet, BetKey
from wallet.models import Account, LedgerEffect, LedgerEntry

SCRIPT = f"""
\\set account random(:first_account, :last_account)
\\set round random(:first_round, :last_round)
BEGIN;
UPDATE {Account._meta.db_table} SET balance = balance - 1.00 WHERE id = :account AND balance >= 1.00
    RETURNING balance \\gset
WITH bet AS (INSERT INTO {Bet._meta.db_table}
        (round_id, account_id, client_id, bet_type, stake, multiplier, idempotency_key, status, placed_at)
        VALUES (:round, :account, :client, 'PLAYER', 1.00, 2.0, 'floor-' || gen_random_uuid(), 'PENDING', now())
        RETURNING id, client_id, idempotency_key),
    bet_key AS (INSERT INTO {BetKey._meta.db_table} (client_id, idempotency_key, bet_id)
        SELECT client_id, idempotency_key, id FROM bet)
    SELECT id FROM bet \\gset
INSERT INTO {LedgerEntry._meta.db_table} (account_id, bet_id, kind, amount, balance_after, reason, created_at)
    VALUES (:account, :id, 'STAKE', -1.00, :balance, '', now());
INSERT INTO {LedgerEffect._meta.db_table} (bet_id, kind) VALUES (:id, 'STAKE');
END;
"""


def sql_floor(params: dict, *, clients: int, seconds: int, accounts: tuple, rounds: tuple, client_id: int) -> float:
    """Transactions per second (each one bet's writes), excluding connection set-up."""
    pgbench = embedded_server.tool("pgbench")  # the embedded server's own, whichever server it runs on
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write(SCRIPT)
    try:
        command = [pgbench, "--no-vacuum", "--client", str(clients), "--jobs", "2", "--time", str(seconds),
                   "--file", script.name,
                   "-D", f"first_account={accounts[0]}", "-D", f"last_account={accounts[1]}",
                   "-D", f"first_round={rounds[0]}", "-D", f"last_round={rounds[1]}",
                   "-D", f"client={client_id}",
                   "--host", params.get("HOST") or "127.0.0.1",
                   "--port", str(params.get("PORT") or embedded_server.PORT),
                   "--username", params.get("USER") or "postgres", params["NAME"]]
        env = {**os.environ, "PGPASSWORD": params.get("PASSWORD") or ""}
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=seconds + 120)
    finally:
        os.unlink(script.name)
    found = re.search(r"tps = ([\d.]+) \(without initial connection time\)", result.stdout)
    failed = re.search(r"number of failed transactions: (\d+)", result.stdout)
    if result.returncode != 0 or not found or (failed and int(failed.group(1))):
        raise CommandError(f"pgbench failed:\n{result.stdout}\n{result.stderr}")
    return float(found.group(1))
