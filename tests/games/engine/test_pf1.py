"""PF-1 (provably-fair.md): the vectors, the unbiased index, the cut, and Dealer.play's fast path."""

import hashlib
import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import (
    Dealer,
    Pf1InputError,
    play,
    play_round,
    server_seed_hash,
    unbiased_index,
    validate_inputs,
    verify_round,
)
from games.engine.pf1 import NONCE_MAX

from .spec_oracle import (
    BANKER_DRAWS_AFTER_PLAYER_ON,
    BANKER_DRAWS_WHEN_PLAYER_STOOD_ON,
    PLAYER_DRAWS_ON,
    naive_cut,
    score,
    spec_play,
    value,
)

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "data" / "pf1-vectors.json").read_text())
INPUTS = ("server_seed", "client_seed", "nonce", "decks")


def vector_id(vector):
    return f"{vector['decks']}d-{vector['client_seed']}-{vector['nonce']}"


def inputs(vector):
    return tuple(vector[key] for key in INPUTS)


# ---- The vectors -------------------------------------------------------------------------------

def test_there_are_fourteen_vectors_two_of_them_on_rejection():
    assert len(VECTORS) == 14
    assert sum("rejected" in vector.get("note", "") for vector in VECTORS) == 2


@pytest.mark.parametrize("vector", VECTORS, ids=vector_id)
def test_vector(vector):
    report = verify_round(*inputs(vector))
    assert report == vector["expected"]
    assert list(report) == list(vector["expected"])  # same keys, same order


@pytest.mark.parametrize("vector", VECTORS, ids=vector_id)
def test_vector_seed_hash_is_sha256_of_the_seed_text(vector):
    expected = vector["expected"]["server_seed_hash"]
    assert server_seed_hash(vector["server_seed"]) == expected
    assert hashlib.sha256(vector["server_seed"].encode("ascii")).hexdigest() == expected
    assert hashlib.sha256(bytes.fromhex(vector["server_seed"])).hexdigest() != expected


@pytest.mark.parametrize("vector", VECTORS, ids=vector_id)
def test_vector_by_fast_path_generic_cut_and_literal_specification(vector):
    server_seed, client_seed, nonce, decks = inputs(vector)
    dealer = Dealer(server_seed, client_seed)
    fast = dealer.play(nonce, decks)
    assert fast == play(dealer.cut(nonce, decks))
    assert fast == play_round(server_seed, client_seed, nonce, decks)
    shoe = naive_cut(dealer.words(nonce), decks)
    assert spec_play(shoe) == {k: v for k, v in vector["expected"].items() if k != "server_seed_hash"}


def test_first_rejection_vector_really_rejects_its_first_draw():
    vector = next(v for v in VECTORS if "first draw" in v.get("note", ""))
    words = Dealer(vector["server_seed"], vector["client_seed"]).words(vector["nonce"])
    first = next(words)
    assert vector["decks"] * 52 == 416
    assert unbiased_index(first, 416) is None
    assert (first * 416) % 2**32 < 2**32 % 416


def test_second_rejection_vector_really_rejects_its_fourth_draw():
    vector = next(v for v in VECTORS if "fourth draw" in v.get("note", ""))
    words = Dealer(vector["server_seed"], vector["client_seed"]).words(vector["nonce"])
    n = vector["decks"] * 52
    draws = [unbiased_index(next(words), n - i) for i in range(4)]
    assert None not in draws[:3]
    assert draws[3] is None and n - 3 == 153


# ---- The unbiased index --------------------------------------------------------------------------

def near_multiples(n: int, count: int = 300):
    """Words x whose m = x·n lands just above a multiple of 2^32 (m mod 2^32 < n): where rejection
    happens."""
    return [((k << 32) + n - 1) // n for k in range(1, count + 1)]


@pytest.mark.parametrize("n", [52, 153, 256, 311, 415, 416])
def test_unbiased_index_rejects_exactly_below_2_to_32_mod_n(n):
    threshold = 2**32 % n
    rejected = kept = 0
    for x in near_multiples(n) + [0, 1, 2**32 - 1, 2**31]:
        low = (x * n) % 2**32
        if low < threshold:
            assert unbiased_index(x, n) is None
            rejected += 1
        else:
            assert unbiased_index(x, n) == (x * n) // 2**32
            kept += 1
    assert kept
    assert rejected or threshold == 0  # a power of two never rejects


def test_unbiased_index_boundary_words():
    n = 416
    threshold = 2**32 % n  # 256
    # x·n ≡ t (mod 2^32) needs t divisible by gcd(n, 2^32) = 32; 256 is, so both sides are reachable.
    inverse = pow(n // 32, -1, 2**27)

    def at(t):
        """The word x with x·n ≡ t (mod 2^32)."""
        return (t // 32 * inverse) % 2**27

    assert (at(threshold) * n) % 2**32 == threshold
    assert unbiased_index(at(threshold), n) == at(threshold) * n >> 32  # the boundary is kept
    assert unbiased_index(at(threshold - 32), n) is None                 # just below is rejected
    assert unbiased_index(0, n) is None
    assert unbiased_index(2**32 - 1, n) == n - 1


def test_unbiased_index_without_rejection_is_floor_of_float_times_n():
    for x in range(0, 2**32, 2**32 // 997):
        index = unbiased_index(x, 416)
        if index is not None:
            assert index == int(x / 2**32 * 416)


# ---- The byte stream ---------------------------------------------------------------------------

def test_block_is_hmac_sha256_of_client_nonce_cursor():
    import hmac

    seed, client = "ab" * 32, "a:b:c"
    block = Dealer(seed, client).block(17, 3)
    assert block == hmac.new(seed.encode("ascii"), b"a:b:c:17:3", hashlib.sha256).digest()
    words = Dealer(seed, client).words(17)
    stream = [next(words) for _ in range(16)]
    second = hmac.new(seed.encode("ascii"), b"a:b:c:17:1", hashlib.sha256).digest()
    assert stream[8:] == list(struct.unpack(">8I", second))


# ---- Properties over random seeds, nonces and deck counts ------------------------------------------

server_seeds = st.binary(min_size=32, max_size=32).map(bytes.hex)
client_seeds = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=64)
nonces = st.integers(0, NONCE_MAX)
deck_counts = st.integers(1, 8)


@settings(max_examples=300)
@given(server_seeds, client_seeds, nonces, deck_counts)
def test_round_properties(server_seed, client_seed, nonce, decks):
    validate_inputs(server_seed, client_seed, nonce, decks)
    dealer = Dealer(server_seed, client_seed)
    result = dealer.play(nonce, decks)
    cards = result.card_indices
    # 4 to 6 cards, all different cards of the shoe, each one of its 52·D.
    assert 4 <= len(cards) <= 6
    assert len(set(cards)) == len(cards)
    assert all(0 <= card < 52 * decks for card in cards)
    assert sorted(result.player_indices + result.banker_indices) == sorted(cards)
    # Scores 0–9, computed from the hands.
    assert result.player_score == score(result.player_indices)
    assert result.banker_score == score(result.banker_indices)
    assert 0 <= result.player_score <= 9 and 0 <= result.banker_score <= 9
    # Third cards drawn exactly when the tableau says.
    player_two, banker_two = score(cards[0:3:2]), score(cards[1:4:2])
    natural = player_two >= 8 or banker_two >= 8
    assert result.natural is natural
    player_draws = not natural and player_two in PLAYER_DRAWS_ON
    assert (len(result.player_indices) == 3) is player_draws
    if natural:
        banker_draws = False
    elif player_draws:
        banker_draws = value(result.player_indices[2]) in BANKER_DRAWS_AFTER_PLAYER_ON[banker_two]
    else:
        banker_draws = banker_two in BANKER_DRAWS_WHEN_PLAYER_STOOD_ON
    assert (len(result.banker_indices) == 3) is banker_draws


@settings(max_examples=300)
@given(server_seeds, client_seeds, nonces, deck_counts)
def test_fast_path_equals_generic_cut_and_literal_cut(server_seed, client_seed, nonce, decks):
    dealer = Dealer(server_seed, client_seed)
    fast = dealer.play(nonce, decks)
    assert fast == play(dealer.cut(nonce, decks))
    shoe = naive_cut(dealer.words(nonce), decks)
    assert list(fast.card_indices) == shoe[:len(fast.card_indices)]
    assert fast.as_dict() == spec_play(shoe)


class StackedDealer(Dealer):
    """A Dealer whose byte stream is given word by word (then made up), to force rejections."""

    __slots__ = ("stream",)

    def __init__(self, words):
        super().__init__("0" * 64, "stacked")
        self.stream = list(words)

    def block(self, nonce, cursor):
        words = self.stream[cursor * 8:cursor * 8 + 8]
        filler = struct.unpack(">8I", hashlib.sha256(b"%d" % cursor).digest())
        return struct.pack(">8I", *(words + list(filler))[:8])


def risky_words(decks):
    """Words that the rejection rule (or the fast path's quick test) has to look at twice."""
    sizes = range(52 * decks - 5, 52 * decks + 1)
    return st.one_of(
        st.integers(0, 2**32 - 1),
        st.just(0),
        st.sampled_from([x for n in sizes for x in near_multiples(n, 40)]),
    )


@settings(max_examples=400)
@given(st.data(), deck_counts)
def test_fast_path_with_rejections_anywhere_equals_literal_cut(data, decks):
    words = data.draw(st.lists(risky_words(decks), min_size=0, max_size=20))
    dealer = StackedDealer(words)
    fast = dealer.play(0, decks)
    assert fast == play(dealer.cut(0, decks))
    shoe = naive_cut(dealer.words(0), decks)
    assert fast.as_dict() == spec_play(shoe)


@pytest.mark.parametrize("position", range(1, 7))
@pytest.mark.parametrize("decks", [1, 3, 8])
def test_a_rejected_word_at_each_position_moves_the_rest_one_word_on(position, decks):
    good = [0x9E3779B9 * (i + 1) % 2**32 for i in range(12)]
    words = good[:position - 1] + [0] + good[position - 1:]  # 0 is rejected for every n here
    stacked = StackedDealer(words)
    plain = StackedDealer(good)
    assert unbiased_index(0, 52 * decks - position + 1) is None
    assert naive_cut(stacked.words(0), decks) == naive_cut(plain.words(0), decks)
    assert stacked.play(0, decks) == plain.play(0, decks) == play(plain.cut(0, decks))


# ---- Inputs ------------------------------------------------------------------------------------

GOOD = ("ab" * 32, "client", 0, 8)


@pytest.mark.parametrize(("position", "bad", "field"), [
    (0, "AB" * 32, "server_seed"),
    (0, "ab" * 31, "server_seed"),
    (0, "ab" * 32 + "\n", "server_seed"),
    (0, "zz" * 32, "server_seed"),
    (0, None, "server_seed"),
    (1, "", "client_seed"),
    (1, "x" * 65, "client_seed"),
    (1, "tab\there", "client_seed"),
    (1, "new\nline", "client_seed"),
    (2, -1, "nonce"),
    (2, 1.0, "nonce"),
    (2, "1", "nonce"),
    (2, True, "nonce"),
    (2, NONCE_MAX + 1, "nonce"),
    (3, 0, "decks"),
    (3, 9, "decks"),
    (3, True, "decks"),
    (3, 8.0, "decks"),
])
def test_bad_input_names_its_field(position, bad, field):
    args = list(GOOD)
    args[position] = bad
    with pytest.raises(Pf1InputError) as raised:
        verify_round(*args)
    assert raised.value.field == field
    assert str(raised.value).startswith(f"{field}: ")


@pytest.mark.parametrize("client_seed", ["a", "x" * 64, "a:b:c", "Ünïcödé ♠", "🂡", "with spaces"])
def test_good_client_seeds(client_seed):
    assert verify_round("ab" * 32, client_seed, NONCE_MAX, 1)["server_seed_hash"] == server_seed_hash("ab" * 32)


# ---- The fast path deals positions 5 and 6 only when the round uses them -------------------------

@pytest.mark.parametrize("decks", [1, 6, 8])
def test_fast_path_equals_generic_cut_on_many_consecutive_rounds(decks):
    dealer = Dealer("5e" * 32, "many-rounds")
    sizes = set()
    for nonce in range(20_000):
        fast = dealer.play(nonce, decks)
        assert fast == play(dealer.cut(nonce, decks))
        sizes.add(len(fast.card_indices))
    assert sizes == {4, 5, 6}


@pytest.mark.parametrize("decks", [1, 8])
def test_rejected_words_after_the_last_position_dealt_change_nothing(decks):
    # The first four words of a round that deals four cards, then two words the rule rejects (0):
    # the fast path never reads them, the generic cut never reaches them.
    good = [0x9E3779B9 * (i + 1) % 2**32 for i in range(40)]
    start = next(i for i in range(36) if len(StackedDealer(good[i:i + 4]).play(0, decks).card_indices) == 4)
    stacked = StackedDealer(good[start:start + 4] + [0, 0])
    assert unbiased_index(0, 52 * decks - 4) is None and unbiased_index(0, 52 * decks - 5) is None
    result = stacked.play(0, decks)
    assert len(result.card_indices) == 4
    assert result == play(stacked.cut(0, decks))
    assert result.as_dict() == spec_play(naive_cut(stacked.words(0), decks))
