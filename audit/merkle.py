"""The Merkle tree of the audit log, as RFC 6962 / RFC 9162 define it (standard library only).

Leaves are hashed SHA-256(0x00 ‖ entry), nodes SHA-256(0x01 ‖ left ‖ right); the tree over n leaves
splits at the largest power of two below n. Complete subtrees ("perfect" nodes: 2**level leaves from
index × 2**level) never change once written, so roots and proofs at any size are built from them
through a ``perfect(level, index) -> bytes`` callable (level 0 being the leaves).
The single-file verifier (games/static/games/pf1_verify.py) repeats the two verify functions.
"""

import hashlib
from collections.abc import Callable, Iterable

Perfect = Callable[[int, int], bytes]
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(entry: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two below ``size`` (size ≥ 2)."""
    return 1 << ((size - 1).bit_length() - 1)


def subtree_hash(start: int, end: int, perfect: Perfect) -> bytes:
    """MTH of leaves [start, end); ``start`` is aligned as every subtree of the RFC's recursion is."""
    size = end - start
    if size == 0:
        return EMPTY_ROOT
    if size & (size - 1) == 0 and start % size == 0:
        level = size.bit_length() - 1
        return perfect(level, start >> level)
    k = _split(size)
    return node_hash(subtree_hash(start, start + k, perfect), subtree_hash(start + k, end, perfect))


def root(tree_size: int, perfect: Perfect) -> bytes:
    return subtree_hash(0, tree_size, perfect)


def inclusion_path(index: int, tree_size: int, perfect: Perfect) -> list[bytes]:
    """PATH(index, D[tree_size]) of RFC 6962 2.1.1."""
    if not 0 <= index < tree_size:
        raise ValueError("the leaf index must be below the tree size")
    path, start, end = [], 0, tree_size
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            path.append(subtree_hash(start + k, end, perfect))
            end = start + k
        else:
            path.append(subtree_hash(start, start + k, perfect))
            start += k
    return path[::-1]


def consistency_proof(first: int, second: int, perfect: Perfect) -> list[bytes]:
    """PROOF(first, D[second]) of RFC 6962 2.1.2 (empty when first is 0 or equals second)."""
    if not 0 <= first <= second:
        raise ValueError("the first tree size must be between 0 and the second")
    if first in (0, second):
        return []
    proof, start, end, whole = [], 0, second, True
    m = first
    while m != end - start:
        k = _split(end - start)
        if m <= k:
            proof.append(subtree_hash(start + k, end, perfect))
            end = start + k
        else:
            proof.append(subtree_hash(start, start + k, perfect))
            start, m, whole = start + k, m - k, False
    if not whole:
        proof.append(subtree_hash(start, end, perfect))
    return proof[::-1]


def verify_inclusion(index: int, tree_size: int, leaf: bytes, path: list[bytes], root_hash: bytes) -> bool:
    """RFC 9162 2.1.3.2."""
    if not 0 <= index < tree_size:
        return False
    fn, sn, r = index, tree_size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not (fn & 1 or fn == 0):
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root_hash


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes, proof: list[bytes]) -> bool:
    """RFC 9162 2.1.4.2, with the trivial cases (an empty first tree, equal sizes) made explicit."""
    if not 0 <= first <= second:
        return False
    if first == 0:
        return not proof and first_root == EMPTY_ROOT
    if first == second:
        return not proof and first_root == second_root
    if not proof:
        return False
    if first & (first - 1) == 0:
        proof = [first_root, *proof]
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not (fn & 1 or fn == 0):
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


class RootStream:
    """The root of the leaves appended so far, in memory of O(log n): recomputes a log of any length."""

    def __init__(self):
        self.size = 0
        self._stack: list[tuple[int, bytes]] = []  # perfect subtrees (level, hash), largest first

    def append(self, leaf: bytes) -> None:
        level, h = 0, leaf
        while self._stack and self._stack[-1][0] == level:
            h = node_hash(self._stack.pop()[1], h)
            level += 1
        self._stack.append((level, h))
        self.size += 1

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        r = self._stack[-1][1]
        for _level, h in reversed(self._stack[:-1]):
            r = node_hash(h, r)
        return r


def new_perfect_nodes(old_size: int, new_leaves: Iterable[bytes], perfect: Perfect) -> dict[tuple[int, int], bytes]:
    """The perfect nodes (level ≥ 1) completed by appending ``new_leaves`` to a log of ``old_size``
    leaves: {(level, index): hash}. ``perfect`` reads the nodes that already exist."""
    made: dict[tuple[int, int], bytes] = {(0, old_size + i): h for i, h in enumerate(new_leaves)}
    new_size = old_size + len(made)

    def get(level: int, index: int) -> bytes:
        return made[(level, index)] if (level, index) in made else perfect(level, index)

    level = 1
    while (1 << level) <= new_size:
        first = old_size >> level  # the first node at this level that old_size had not completed
        for index in range(first, new_size >> level):
            made[(level, index)] = node_hash(get(level - 1, 2 * index), get(level - 1, 2 * index + 1))
        level += 1
    return {key: h for key, h in made.items() if key[0] >= 1}
