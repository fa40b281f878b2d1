"""Seed rotation under steady play, on the real PostgreSQL: clients open and deal (or void) rounds
without pause while an operator rotates. Every rotation succeeds at once, nonces stay gap-free per
pair, no round of a revealed pair is dealt after its reveal, and every retired pair is revealed
once its rounds are closed."""

import threading
import time

import pytest
from django.db import connection

from core.errors import Conflict
from games import locks, services
from games.choices import RoundStatus
from games.models import Round, SeedPair
from settlement.receivers import dealt_rounds_left_to_the_sweep
from tests.races import held_open

pytestmark = pytest.mark.services

PLAYERS = 8
ROTATIONS = 12
HELD_SECONDS = 8


def test_rotation_never_starves_and_reveals_only_closed_pairs(postgres, game, integration, operator):
    stop = threading.Event()
    errors, rotations = [], []

    def play(index: int):
        try:
            while not stop.is_set():
                try:
                    round_ = services.round_open(game_id=game.pk, actor=integration)
                except Conflict:
                    continue  # the pair kept rotating under three attempts in a row: try again
                if index % 3 == 0:
                    services.round_void(round_id=round_.pk, actor=operator, reason="table fault")
                else:
                    services.round_deal(round_id=round_.pk, actor=integration)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(repr(error))
        finally:
            connection.close()

    def rotate():
        try:
            for _ in range(ROTATIONS):
                # Rotate once play has opened a few rounds since the last rotation: a fixed pause
                # left too few rounds on a loaded machine.
                wanted, deadline = Round.objects.filter(game=game).count() + 4, time.monotonic() + 30
                while Round.objects.filter(game=game).count() < wanted and time.monotonic() < deadline:
                    time.sleep(0.01)
                retired, _new = services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
                rotations.append(retired.is_revealed)
        except Exception as error:  # noqa: BLE001
            errors.append(repr(error))
        finally:
            stop.set()
            connection.close()

    threads = [threading.Thread(target=play, args=(index,)) for index in range(PLAYERS)]
    threads.append(threading.Thread(target=rotate))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert not errors, errors
    assert len(rotations) == ROTATIONS
    assert not all(rotations), "with play this steady, some rotation must have found rounds open"

    pairs = list(SeedPair.objects.filter(game=game).order_by("id"))
    assert len(pairs) == ROTATIONS + 1
    assert sum(pair.is_active for pair in pairs) == 1
    for pair in pairs:
        rounds = list(Round.objects.filter(seed_pair=pair).order_by("nonce"))
        assert [round_.nonce for round_ in rounds] == list(range(pair.next_nonce)), f"nonce gap in pair {pair.pk}"
        if pair.is_active:
            continue
        # Every round closed, so every retired pair is revealed, after its last round closed.
        assert pair.is_revealed, f"pair {pair.pk} retired with its rounds closed but not revealed"
        assert not any(round_.status == RoundStatus.OPEN for round_ in rounds)
        for round_ in rounds:
            assert round_.opened_at <= pair.retired_at
            closed = round_.dealt_at or round_.voided_at
            assert closed <= pair.revealed_at, f"round {round_.pk} closed after its pair's reveal"
    assert Round.objects.filter(game=game).count() > 3 * ROTATIONS


def test_a_locked_game_does_not_hold_back_a_round_opened_on_it(postgres, game, operator, integration):
    """A game locked for a change (and the audit chain behind it) must not block the foreign-key
    check of a round opened meanwhile: FOR UPDATE there deadlocked under concurrent play."""
    from django.db import transaction

    from games import locks

    opened = threading.Event()

    def open_round():
        try:
            services.round_open(game_id=game.pk, actor=integration)
            opened.set()
        finally:
            connection.close()

    with transaction.atomic():
        locks.lock_game(game.pk)
        thread = threading.Thread(target=open_round)
        thread.start()
        assert opened.wait(timeout=10), "opening a round waited for the game's lock"
    thread.join(timeout=10)
    assert Round.objects.filter(game=game).count() == 1


def test_a_deal_waiting_for_its_round_s_bets_holds_up_no_other_round_of_its_game(postgres, game, integration):
    # The deal waits at its round's gate behind a bulk intake still holding the round (say, waiting
    # for an account). Meanwhile the game's seed pair must stay free: opening a round takes its next
    # nonce there, and another round's deal decides its reveal there.
    first = services.round_open(game_id=game.pk, actor=integration)
    second = services.round_open(game_id=game.pk, actor=integration)
    dealt = {}

    def deal_the_first():
        try:
            dealt["first"] = services.round_deal(round_id=first.pk, actor=integration).status
        finally:
            connection.close()

    with dealt_rounds_left_to_the_sweep():
        with held_open(lambda: locks.share_rounds([first.pk]), HELD_SECONDS):
            dealer = threading.Thread(target=deal_the_first)
            dealer.start()
            time.sleep(0.5)
            assert "first" not in dealt  # it waits for the intake
            started = time.monotonic()
            opened = services.round_open(game_id=game.pk, actor=integration)
            assert services.round_deal(round_id=second.pk, actor=integration).status == RoundStatus.DEALT
            elapsed = time.monotonic() - started
        dealer.join(30)
    assert elapsed < HELD_SECONDS / 2, elapsed  # not behind the held round
    assert dealt == {"first": RoundStatus.DEALT}
    assert opened.nonce == second.nonce + 1
