"""PF-1, the provably fair cut (provably-fair.md).

Block r of the byte stream is HMAC-SHA256(key = server seed ASCII, message = "{client}:{nonce}:{r}");
each block gives eight big-endian 32-bit words. Each shoe position draws an unbiased index into
the cards still left (a Fisher–Yates shuffle yielding positions in order), so a round computes only
the first six positions (it deals 4 to 6 of them), nearly always from block 0 alone.
"""

import hashlib
import hmac
import re
import struct
import unicodedata
from bisect import insort

from .cards import CARDS_PER_DECK, MAX_DECKS, MIN_DECKS
from .rules import AFTER_OPENING, NO_THIRD_CARD, TWO_CARD_SCORE, RoundResult, play, play_scored

WORD_RANGE = 1 << 32
WORD_MASK = WORD_RANGE - 1
CLIENT_SEED_MAX_LENGTH = 64
NONCE_MAX = (1 << 63) - 1  # what a database bigint holds

_SERVER_SEED_RE = re.compile(r"[0-9a-f]{64}")
_EIGHT_WORDS = struct.Struct(">8I").unpack
# The rejection threshold (2^32 mod n) for every n a shoe of up to 8 decks can reach.
_REJECT_BELOW = tuple(WORD_RANGE % n if n else 0 for n in range(CARDS_PER_DECK * MAX_DECKS + 1))

# For Dealer.play's fast path: the first six words of block 0, and the number of cards left (n) at
# each of positions 1–6 for every deck count.
_SIX_WORDS = struct.Struct(">6I").unpack_from
_CARDS_LEFT_AT_1_TO_6 = tuple(
    tuple(CARDS_PER_DECK * decks - p for p in range(6)) if decks else () for decks in range(MAX_DECKS + 1)
)
# Every threshold is below n ≤ 416 < 2^9, so a word whose m = x·n has any of bits 9–31 set is kept:
# that is m ≥ (r << 32) + 2^9 for its index r = m >> 32, one comparison with this table's entry
# (no new integer, unlike m & mask), and only the rest need the exact test of the generic cut.
_SURELY_KEPT_FROM = tuple((r << 32) + 0x200 for r in range(CARDS_PER_DECK * MAX_DECKS))
assert max(_REJECT_BELOW) <= 0x200


class Pf1InputError(ValueError):
    """An input that PF-1 does not accept; ``field`` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def validate_server_seed(server_seed) -> str:
    if not isinstance(server_seed, str) or not _SERVER_SEED_RE.fullmatch(server_seed):
        raise Pf1InputError("server_seed", "must be 64 lowercase hexadecimal characters")
    return server_seed


def validate_client_seed(client_seed) -> str:
    if not isinstance(client_seed, str) or not client_seed:
        raise Pf1InputError("client_seed", "must be 1 to 64 characters")
    if len(client_seed) > CLIENT_SEED_MAX_LENGTH:
        raise Pf1InputError("client_seed", f"must be at most {CLIENT_SEED_MAX_LENGTH} characters")
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in client_seed):
        raise Pf1InputError("client_seed", "must not contain control characters")
    return client_seed


def validate_nonce(nonce) -> int:
    if isinstance(nonce, bool) or not isinstance(nonce, int) or not 0 <= nonce <= NONCE_MAX:
        raise Pf1InputError("nonce", f"must be an integer from 0 to {NONCE_MAX}")
    return nonce


def validate_decks(decks) -> int:
    if isinstance(decks, bool) or not isinstance(decks, int) or not MIN_DECKS <= decks <= MAX_DECKS:
        raise Pf1InputError("decks", f"must be an integer from {MIN_DECKS} to {MAX_DECKS}")
    return decks


def validate_inputs(server_seed, client_seed, nonce, decks) -> None:
    validate_server_seed(server_seed)
    validate_client_seed(client_seed)
    validate_nonce(nonce)
    validate_decks(decks)


def server_seed_hash(server_seed: str) -> str:
    """Lowercase hex SHA-256 of the server seed's ASCII text (not of the decoded bytes)."""
    return hashlib.sha256(server_seed.encode("ascii")).hexdigest()


def unbiased_index(x: int, n: int):
    """The index in [0, n) that word ``x`` gives, or None when the rejection rule discards it."""
    m = x * n
    if (m & WORD_MASK) < _REJECT_BELOW[n]:
        return None
    return m >> 32


class Dealer:
    """Deals rounds for one (server seed, client seed) pair; keys the HMAC once for all nonces."""

    __slots__ = ("_keyed", "_client_prefix", "server_seed_hash")

    def __init__(self, server_seed: str, client_seed: str):
        self._keyed = hmac.new(server_seed.encode("ascii"), digestmod=hashlib.sha256)
        self._client_prefix = client_seed.encode("utf-8") + b":"
        self.server_seed_hash = server_seed_hash(server_seed)

    def block(self, nonce: int, cursor: int) -> bytes:
        mac = self._keyed.copy()
        mac.update(self._client_prefix + b"%d:%d" % (nonce, cursor))
        return mac.digest()

    def words(self, nonce: int):
        """The byte stream of a round as 32-bit words, block after block, without end."""
        cursor = 0
        while True:
            yield from _EIGHT_WORDS(self.block(nonce, cursor))
            cursor += 1

    def cut(self, nonce: int, decks: int):
        """The shoe after the cut, as ``deal(count)`` returning the next ``count`` card indices.

        Only the positions dealt are computed. A closure over local state rather than a generator,
        and cards asked for several at a time, because this runs for every card of every round.
        """
        words = _EIGHT_WORDS(self.block(nonce, 0))
        word_at = 0
        cursor = 0
        left = CARDS_PER_DECK * decks
        taken = []  # indices into the uncut shoe already dealt, kept sorted

        def deal(count: int) -> list:
            nonlocal words, word_at, cursor, left
            cards = []
            for _ in range(count):
                reject_below = _REJECT_BELOW[left]
                while True:
                    if word_at == 8:
                        cursor += 1
                        words = _EIGHT_WORDS(self.block(nonce, cursor))
                        word_at = 0
                    m = words[word_at] * left
                    word_at += 1
                    if (m & WORD_MASK) >= reject_below:
                        break
                index = m >> 32
                # The index counts only the cards still left: step over those already dealt.
                for card in taken:
                    if card <= index:
                        index += 1
                    else:
                        break
                insort(taken, index)
                cards.append(index)
                left -= 1
            return cards

        return deal

    def play(self, nonce: int, decks: int) -> RoundResult:
        """``rules.play(self.cut(nonce, decks))``, computed straight-line when it can be.

        The fast path: the positions dealt come from the first words of block 0 unless one of
        them is rejected (probability below 1e-6 per round; then the generic cut deals). Positions
        5 and 6 are computed only when the first four cards call for a third card: a position
        not dealt does not change those dealt before it. The cut removes the card of rank r_p
        among those left at each position p; read as index arithmetic, the card of position k is
        r_k shifted up by one past each earlier rank, taken from the most recent back: for
        p = k−1 … 1, if c ≥ r_p then c += 1. (Removing position 1's card shifts every later card at
        or above it by one; the same holds inside the shoe left after it, and so on.) No sorted
        list, no loop. The tests prove this equal to ``cut``.
        """
        x1, x2, x3, x4, x5, x6 = _SIX_WORDS(self.block(nonce, 0))
        n1, n2, n3, n4, n5, n6 = _CARDS_LEFT_AT_1_TO_6[decks]
        kept_from = _SURELY_KEPT_FROM
        m1 = x1 * n1
        m2 = x2 * n2
        m3 = x3 * n3
        m4 = x4 * n4
        r1 = m1 >> 32
        r2 = m2 >> 32
        r3 = m3 >> 32
        r4 = m4 >> 32
        if m1 < kept_from[r1] or m2 < kept_from[r2] or m3 < kept_from[r3] or m4 < kept_from[r4]:
            return play(self.cut(nonce, decks))
        # A branch per step rather than ``c += c >= r``: most are not taken, and cost less so.
        c2 = r2
        if c2 >= r1:
            c2 += 1
        c3 = r3
        if c3 >= r2:
            c3 += 1
        if c3 >= r1:
            c3 += 1
        c4 = r4
        if c4 >= r3:
            c4 += 1
        if c4 >= r2:
            c4 += 1
        if c4 >= r1:
            c4 += 1
        player_two = TWO_CARD_SCORE[r1][c3]
        banker_two = TWO_CARD_SCORE[c2][c4]
        step = AFTER_OPENING[player_two][banker_two]
        if step in NO_THIRD_CARD:
            return play_scored(r1, c2, c3, c4, None, None, player_two, banker_two, step)
        m5 = x5 * n5
        m6 = x6 * n6
        r5 = m5 >> 32
        r6 = m6 >> 32
        if m5 < kept_from[r5] or m6 < kept_from[r6]:
            return play(self.cut(nonce, decks))
        c5 = r5
        if c5 >= r4:
            c5 += 1
        if c5 >= r3:
            c5 += 1
        if c5 >= r2:
            c5 += 1
        if c5 >= r1:
            c5 += 1
        c6 = r6
        if c6 >= r5:
            c6 += 1
        if c6 >= r4:
            c6 += 1
        if c6 >= r3:
            c6 += 1
        if c6 >= r2:
            c6 += 1
        if c6 >= r1:
            c6 += 1
        return play_scored(r1, c2, c3, c4, c5, c6, player_two, banker_two, step)

    def verify(self, nonce: int, decks: int) -> dict:
        """The round as a player's verifier prints it: the seed hash, then the round."""
        return {"server_seed_hash": self.server_seed_hash, **self.play(nonce, decks).as_dict()}


def play_round(server_seed: str, client_seed: str, nonce: int, decks: int) -> RoundResult:
    """Play the whole round that (server seed, client seed, nonce, decks) determine."""
    validate_inputs(server_seed, client_seed, nonce, decks)
    return Dealer(server_seed, client_seed).play(nonce, decks)


def verify_round(server_seed: str, client_seed: str, nonce: int, decks: int) -> dict:
    """The round as a player's verifier prints it: the seed hash, then the round."""
    validate_inputs(server_seed, client_seed, nonce, decks)
    return Dealer(server_seed, client_seed).verify(nonce, decks)
