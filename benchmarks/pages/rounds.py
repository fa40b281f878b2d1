"""The rounds of the pages benchmark: dealt by the real engine from real seed pairs (so the round
page verifies them) and written with COPY, ids 1…N, spread over the period."""

import json
import secrets
from datetime import datetime, timedelta

from django.db import connection

from games.choices import RoundStatus
from games.engine import Dealer, server_seed_hash

from .games import configuration_at, set_final_configuration

ROUNDS_PER_SEED_PAIR = 1000
DEALT_TAIL = 40  # rounds left DEALT before the open ones: the settlement queue
VOID_EVERY = 331


def insert_rounds(games: list, rounds: int, start: datetime, now: datetime) -> None:
    """Every round in turn round-robin over the games, with the seed pairs they were dealt from
    (all revealed but each game's last) and, in bench_round_config, the multipliers in force
    (bets.py settles the bets at them). The last round of each game stays OPEN."""
    span = (now - timedelta(minutes=10) - start).total_seconds()
    per_game = [0] * len(games)
    pairs = {}  # (game index, pair number) -> [id, server seed, client seed, created, last time, count]
    dealers = {}
    # Two pairs a game at least, so that a small data set has revealed rounds the round page verifies.
    per_pair = max(1, min(ROUNDS_PER_SEED_PAIR, rounds // len(games) // 2))
    round_rows, config_rows = [], []
    open_from = rounds - len(games)
    dealt_from = open_from - DEALT_TAIL
    for index in range(rounds):
        game_index = index % len(games)
        share = index / rounds
        config = configuration_at(game_index, share)
        number = per_game[game_index]
        per_game[game_index] += 1
        key = (game_index, number // per_pair)
        opened = start + timedelta(seconds=span * share)
        if key not in pairs:
            server_seed, client_seed = secrets.token_hex(32), secrets.token_hex(8)
            pairs[key] = [len(pairs) + 1, server_seed, client_seed, opened - timedelta(seconds=1), opened, 0]
            dealers[key] = Dealer(server_seed, client_seed)
        pair = pairs[key]
        nonce = number % per_pair
        pair[4], pair[5] = opened, nonce + 1
        round_id = index + 1
        game_id = games[game_index].pk
        config_rows.append((round_id, config["player_multiplier"], config["banker_multiplier"],
                            config["tie_multiplier"]))
        if index >= open_from:
            round_rows.append((round_id, game_id, pair[0], nonce, config["decks"], RoundStatus.OPEN, "[]", "[]", "[]",
                               None, None, None, None, opened, None, None, None, "", 0))
            continue
        result = dealers[key].play(nonce, config["decks"]).as_dict()
        dealt = opened + timedelta(seconds=15)
        status, settled, voided, reason = RoundStatus.SETTLED, None, None, ""
        if index >= dealt_from:
            status = RoundStatus.DEALT
        elif index % VOID_EVERY == 7:
            status, voided, reason = RoundStatus.VOID, dealt + timedelta(seconds=5), "misdeal (bench)"
        else:
            lag_ms = 150 + int(secrets.randbelow(1000) ** 1.15)
            settled = dealt + timedelta(milliseconds=lag_ms)
        round_rows.append((
            round_id, game_id, pair[0], nonce, config["decks"], status, json.dumps(result["cards"]),
            json.dumps(result["player"]["cards"]), json.dumps(result["banker"]["cards"]),
            result["player"]["score"], result["banker"]["score"], result["natural"], result["outcome"], opened,
            dealt, settled, voided, reason, 0,
        ))
    _copy(games, pairs, round_rows, config_rows)
    set_final_configuration(games, start - timedelta(days=1))


def _copy(games: list, pairs: dict, round_rows: list, config_rows: list) -> None:
    last_pair = {}
    for game_index, number in pairs:
        last_pair[game_index] = max(last_pair.get(game_index, -1), number)
    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy("COPY games_seedpair (id, game_id, server_seed, server_seed_hash, client_seed, next_nonce, "
                      "created_at, retired_at, revealed_at) FROM STDIN") as copy:
            for (game_index, number), (pair_id, server, client, created, last, count) in pairs.items():
                # Each game's last pair is active; every earlier one retired, then revealed.
                active = number == last_pair[game_index]
                retired = None if active else last + timedelta(seconds=30)
                revealed = None if active else last + timedelta(minutes=1)
                copy.write_row((pair_id, games[game_index].pk, server, server_seed_hash(server), client, count,
                                created, retired, revealed))
        with raw.copy("COPY games_round (id, game_id, seed_pair_id, nonce, decks, status, cards, player_cards, "
                      "banker_cards, player_score, banker_score, \"natural\", outcome, opened_at, dealt_at, "
                      "settled_at, voided_at, void_reason, settlement_failures) FROM STDIN") as copy:
            for row in round_rows:
                copy.write_row(row)
        cursor.execute("CREATE TABLE bench_round_config (round_id bigint PRIMARY KEY, player numeric, "
                       "banker numeric, tie numeric)")
        with raw.copy("COPY bench_round_config FROM STDIN") as copy:
            for row in config_rows:
                copy.write_row(row)
        for table in ("games_seedpair", "games_round"):
            cursor.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
