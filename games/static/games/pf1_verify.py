#!/usr/bin/env python3
"""Verify a provably fair baccarat round yourself (PF-1), with nothing but Python 3.

    python3 pf1_verify.py --server-seed SEED --client-seed CLIENT --nonce N [--decks 8] [--hash HASH]

It prints the round (cards in dealt order, both hands, scores, natural, outcome) as JSON and, with
--hash, checks that the revealed server seed is the one whose hash was published before the round.
It is independent of the operator's software: standard library only, readable in one sitting.
"""

import argparse
import hashlib
import hmac
import json
import struct
import sys

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUITS = ["D", "H", "S", "C"]
VALUES = {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 0, "J": 0, "Q": 0, "K": 0, "A": 1}
# Banker's third card when the Player drew: banker score -> player's third-card values it draws on.
BANKER_DRAWS_ON = {0: set(range(10)), 1: set(range(10)), 2: set(range(10)), 3: set(range(10)) - {8},
                   4: {2, 3, 4, 5, 6, 7}, 5: {4, 5, 6, 7}, 6: {6, 7}, 7: set()}


def words(server_seed, client_seed, nonce):
    """Block r = HMAC-SHA256(server seed, "client:nonce:r"); each gives eight big-endian 32-bit words."""
    cursor = 0
    while True:
        message = f"{client_seed}:{nonce}:{cursor}".encode("utf-8")
        yield from struct.unpack(">8I", hmac.new(server_seed.encode("ascii"), message, hashlib.sha256).digest())
        cursor += 1


def shoe(server_seed, client_seed, nonce, decks):
    """The shoe after the cut: each position takes an unbiased index into the cards still left."""
    stream = words(server_seed, client_seed, nonce)
    left = list(range(52 * decks))  # card k: rank k % 52 // 4, suit k % 4
    while left:
        n = len(left)
        while True:
            m = next(stream) * n
            if m % 2**32 >= 2**32 % n:  # else the word is rejected: it would bias the index
                break
        yield left.pop(m >> 32)


def label(card):
    return RANKS[card % 52 // 4] + SUITS[card % 4]


def play(server_seed, client_seed, nonce, decks):
    cards = shoe(server_seed, client_seed, nonce, decks)
    player, banker = [], []
    for hand in (player, banker, player, banker):
        hand.append(label(next(cards)))

    def score(hand):
        return sum(VALUES[c[:-1]] for c in hand) % 10

    natural = score(player) >= 8 or score(banker) >= 8
    if not natural:
        banker_two = score(banker)
        if score(player) <= 5:
            player.append(label(next(cards)))
            if banker_two in BANKER_DRAWS_ON and VALUES[player[2][:-1]] in BANKER_DRAWS_ON[banker_two]:
                banker.append(label(next(cards)))
        elif banker_two <= 5:
            banker.append(label(next(cards)))
    p, b = score(player), score(banker)
    dealt = player[:1] + banker[:1] + player[1:2] + banker[1:2] + player[2:] + banker[2:]
    return {
        "server_seed_hash": hashlib.sha256(server_seed.encode("ascii")).hexdigest(),
        "cards": dealt,
        "player": {"cards": player, "score": p},
        "banker": {"cards": banker, "score": b},
        "natural": natural,
        "outcome": "PLAYER" if p > b else "BANKER" if b > p else "TIE",
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description="Recompute a PF-1 baccarat round.")
    parser.add_argument("--server-seed", required=True)
    parser.add_argument("--client-seed", required=True)
    parser.add_argument("--nonce", required=True, type=int)
    parser.add_argument("--decks", type=int, default=8)
    parser.add_argument("--hash", help="the server seed hash published before the round")
    args = parser.parse_args(argv)
    if len(args.server_seed) != 64 or any(c not in "0123456789abcdef" for c in args.server_seed):
        parser.error("--server-seed must be 64 lowercase hexadecimal characters")
    if not 1 <= args.decks <= 8 or args.nonce < 0:
        parser.error("--decks must be 1 to 8 and --nonce at least 0")
    round_ = play(args.server_seed, args.client_seed, args.nonce, args.decks)
    print(json.dumps(round_, ensure_ascii=False))
    if args.hash is not None:
        matches = args.hash.lower() == round_["server_seed_hash"]
        print("hash matches: the server seed is the one committed to" if matches
              else "HASH DOES NOT MATCH: this is not the server seed that was committed to", file=sys.stderr)
        return 0 if matches else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
