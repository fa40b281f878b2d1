#!/usr/bin/env python3
"""Verify a provably fair baccarat round yourself (PF-1), with nothing but Python 3.

    python3 pf1_verify.py --server-seed SEED --client-seed CLIENT --nonce N [--decks 8] [--hash HASH]

(--client-seed-hex HEX instead of --client-seed gives the client seed as the hex of its UTF-8 bytes,
as the public page does for a seed with invisible characters.)
It prints the round (cards in dealt order, both hands, scores, natural, outcome, then every side bet's
event, "side_bets") as JSON and, with --hash, checks that the revealed server seed is the one whose
hash was published before the round.

    python3 pf1_verify.py --audit-proof PROOF.json --public-key KEY

checks a proof of the operator's audit log (RFC 6962 Merkle tree) as the API gave it: an inclusion
proof (the event's entry is a leaf of the signed tree) or a consistency proof (the later log extends
the earlier one), and each signed tree head with the public key shown on the public page (Ed25519,
verified by the pure-Python code of RFC 8032 below).
It is independent of the operator's software: standard library only, readable in one sitting.
"""

import argparse
import base64
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


# --- Side bets: each yields an event of the round, which a paytable pays or not ---

PAIRS = ("NO_PAIR", "ONE_PAIR", "TWO_PAIRS")
PERFECT_PAIRS = ("NO_PERFECT_PAIR", "ONE_PERFECT_PAIR", "TWO_PERFECT_PAIRS")
COMMISSION_FREE = {"PLAYER": "PLAYER_WIN", "BANKER": "BANKER_WIN", "TIE": "TIE"}


def side_bets(round_):
    """Every side bet's event on a round as ``play`` gives it: the pairs look at each hand's first two
    cards, the Dragon Bonus at whether a hand is a natural and by how much it won."""
    player, banker = round_["player"], round_["banker"]

    def paired(hand):  # 0: two ranks; 1: one rank; 2: one rank and suit, two identical cards
        first, second = hand["cards"][:2]
        return 2 if first == second else 1 if first[:-1] == second[:-1] else 0

    def dragon_bonus(hand, other):
        natural = sum(VALUES[c[:-1]] for c in hand["cards"][:2]) % 10 >= 8
        margin = hand["score"] - other["score"]
        if margin < 0:
            return "LOSS"
        if margin == 0:
            return "NATURAL_TIE" if natural else "TIE"
        return "NATURAL_WIN" if natural else f"WIN_BY_{margin}"

    p, b = paired(player), paired(banker)
    six = round_["outcome"] == "BANKER" and banker["score"] == 6
    return {
        "PLAYER_PAIR": "PAIR" if p else "NO_PAIR",
        "BANKER_PAIR": "PAIR" if b else "NO_PAIR",
        "EITHER_PAIR": PAIRS[(p > 0) + (b > 0)],
        "PERFECT_PAIR": PERFECT_PAIRS[(p == 2) + (b == 2)],
        "DRAGON_BONUS_PLAYER": dragon_bonus(player, banker),
        "DRAGON_BONUS_BANKER": dragon_bonus(banker, player),
        "BANKER_COMMISSION_FREE": "BANKER_WIN_ON_SIX" if six else COMMISSION_FREE[round_["outcome"]],
    }


# --- The audit log: RFC 6962 Merkle proofs and Ed25519 signed tree heads (RFC 8032) ---

def node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def verify_inclusion(index, size, leaf, path, root):
    """RFC 9162 2.1.3.2."""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not (fn & 1 or fn == 0):
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(first, second, first_root, second_root, proof):
    """RFC 9162 2.1.4.2 (an empty first tree, or equal sizes, need no proof)."""
    if not 0 <= first <= second:
        return False
    if first == 0:
        return not proof and first_root == hashlib.sha256(b"").digest()
    if first == second:
        return not proof and first_root == second_root
    if not proof:
        return False
    if first & (first - 1) == 0:
        proof = [first_root] + proof
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while not (fn & 1 or fn == 0):
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


# Ed25519 verification, RFC 8032 section 5.1.7, in extended coordinates (X, Y, Z, T).
_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _add(a, b):
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    pa, pb = (y1 - x1) * (y2 - x2) % _P, (y1 + x1) * (y2 + x2) % _P
    pc, pd = t1 * 2 * _D * t2 % _P, z1 * 2 * z2 % _P
    e, f, g, h = pb - pa, pd - pc, pd + pc, pb + pa
    return e * f % _P, g * h % _P, f * g % _P, e * h % _P


def _times(scalar, point):
    result = (0, 1, 1, 0)
    while scalar:
        if scalar & 1:
            result = _add(result, point)
        point, scalar = _add(point, point), scalar >> 1
    return result


def _decode_point(data):
    y = int.from_bytes(data, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    if y >= _P:
        return None
    u, v = (y * y - 1) % _P, (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    if (v * x * x - u) % _P:
        x = x * _SQRT_M1 % _P
    if (v * x * x - u) % _P or (x == 0 and sign):
        return None
    if x & 1 != sign:
        x = _P - x
    return x, y, 1, x * y % _P


def _same(a, b):
    return (a[0] * b[2] - b[0] * a[2]) % _P == 0 and (a[1] * b[2] - b[1] * a[2]) % _P == 0


_BASE = _decode_point((4 * pow(5, _P - 2, _P) % _P).to_bytes(32, "little"))


def ed25519_verify(public_key, message, signature):
    if len(public_key) != 32 or len(signature) != 64:
        return False
    a, r = _decode_point(public_key), _decode_point(signature[:32])
    s = int.from_bytes(signature[32:], "little")
    if a is None or r is None or s >= _L:
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + public_key + message).digest(), "little") % _L
    return _same(_times(s, _BASE), _add(r, _times(k, a)))


def head_signed(head, public_key):
    """The head's Ed25519 signature over RFC 6962's TreeHeadSignature (v1, tree_hash, timestamp, size, root)."""
    if head.get("key_id") != hashlib.sha256(public_key).hexdigest():
        return False
    message = struct.pack(">BBQQ", 0, 1, head["timestamp"], head["tree_size"]) + bytes.fromhex(head["root_hash"])
    return ed25519_verify(public_key, message, base64.b64decode(head["signature"]))


def check_audit_proof(proof, public_key):
    """[(check, holds)] for a proof as the API gives it."""
    checks = []

    def signed(head, size, root):
        if head is None:
            checks.append((f"a signed head of tree size {size} came with the proof", False))
        else:
            checks.append((f"the head of tree size {size} is signed by the key given",
                           head_signed(head, public_key) and head["tree_size"] == size and head["root_hash"] == root))

    unhex = bytes.fromhex
    if "audit_path" in proof:
        leaf = hashlib.sha256(b"\x00" + proof["entry"].encode("utf-8")).digest()
        checks.append(("the entry gives the leaf hash", leaf.hex() == proof["leaf_hash"]))
        checks.append((f"leaf {proof['leaf_index']} is in the tree of {proof['tree_size']} events",
                       verify_inclusion(proof["leaf_index"], proof["tree_size"], leaf,
                                        [unhex(h) for h in proof["audit_path"]], unhex(proof["root_hash"]))))
        signed(proof.get("head"), proof["tree_size"], proof["root_hash"])
    else:
        checks.append((f"the log of {proof['second']} events extends the log of {proof['first']}",
                       verify_consistency(proof["first"], proof["second"], unhex(proof["first_root_hash"]),
                                          unhex(proof["second_root_hash"]), [unhex(h) for h in proof["proof"]])))
        if proof["first"]:
            signed(proof.get("first_head"), proof["first"], proof["first_root_hash"])
        signed(proof.get("second_head"), proof["second"], proof["second_root_hash"])
    return checks


def audit_main(args):
    checks = check_audit_proof(json.loads(open(args.audit_proof, encoding="utf-8").read()),
                               base64.b64decode(args.public_key))
    for check, holds in checks:
        print(("ok      " if holds else "FAILED  ") + check)
    return 0 if all(holds for _check, holds in checks) else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description="Recompute a PF-1 baccarat round, or check an audit log proof.")
    parser.add_argument("--server-seed")
    parser.add_argument("--client-seed")
    parser.add_argument("--client-seed-hex", help="the client seed as the hexadecimal of its UTF-8 bytes")
    parser.add_argument("--nonce", type=int)
    parser.add_argument("--decks", type=int, default=8)
    parser.add_argument("--hash", help="the server seed hash published before the round")
    parser.add_argument("--audit-proof", metavar="FILE", help="an inclusion or consistency proof from the API")
    parser.add_argument("--public-key", help="the audit log's public key (base64), from the public page")
    args = parser.parse_args(argv)
    if args.audit_proof:
        if not args.public_key:
            parser.error("--audit-proof needs --public-key")
        return audit_main(args)
    if args.client_seed_hex is not None:
        if args.client_seed is not None:
            parser.error("give --client-seed or --client-seed-hex, not both")
        try:
            args.client_seed = bytes.fromhex(args.client_seed_hex).decode("utf-8")
        except ValueError:
            parser.error("--client-seed-hex must be the hexadecimal of UTF-8 text")
    if args.server_seed is None or args.client_seed is None or args.nonce is None:
        parser.error("--server-seed, --client-seed and --nonce are required")
    if len(args.server_seed) != 64 or any(c not in "0123456789abcdef" for c in args.server_seed):
        parser.error("--server-seed must be 64 lowercase hexadecimal characters")
    if not 1 <= args.decks <= 8 or args.nonce < 0:
        parser.error("--decks must be 1 to 8 and --nonce at least 0")
    round_ = play(args.server_seed, args.client_seed, args.nonce, args.decks)
    print(json.dumps({**round_, "side_bets": side_bets(round_)}, ensure_ascii=False))
    if args.hash is not None:
        matches = args.hash.lower() == round_["server_seed_hash"]
        print("hash matches: the server seed is the one committed to" if matches
              else "HASH DOES NOT MATCH: this is not the server seed that was committed to", file=sys.stderr)
        return 0 if matches else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
