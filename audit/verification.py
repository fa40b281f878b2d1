"""Checking the whole log: every leaf recomputed from its event, the root at every signed head,
every head's signature (with the public key alone), and consistency with the heads published outside
the database (the head sink) and optionally with a head saved elsewhere.

What an insider with the database's superuser rights can do to the rows is named as precisely as
the rows allow: an altered, missing, reordered or inserted event, a truncated log, a bad signature;
a rewrite that recomputed every hash (and dropped the stored heads) is caught by the heads published
before it, or by a head saved before it (``against``).
"""

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from audit import heads, merkle
from audit.chain import HASHED_FIELDS, leaf_entry
from audit.models import AuditEvent, AuditHead, AuditLeaf, AuditSequencerState

CHUNK = 2000


@dataclass
class LogCheck:
    tree_size: int = 0
    root_hash: str = merkle.EMPTY_ROOT.hex()
    heads_checked: int = 0
    published_checked: int = 0
    pending: int = 0
    problem: str | None = None


def _walk(check: LogCheck, roots_wanted: dict[int, str]) -> dict[int, str]:
    """Recompute every leaf in index order; the roots at the sizes wanted (size -> hex root)."""
    stream, roots = merkle.RootStream(), {}
    if 0 in roots_wanted:
        roots[0] = merkle.EMPTY_ROOT.hex()
    fields = ["index", "hash", "event_id", *(f"event__{name}" for name in HASHED_FIELDS)]
    for row in AuditLeaf.objects.order_by("index").values(*fields).iterator(chunk_size=CHUNK):
        index = stream.size
        if row["index"] != index:
            check.problem = (f"missing event: leaf {index} is gone (the log jumps to leaf {row['index']}, "
                             f"event {row['event_id']})")
            return roots
        values = {"id": row["event_id"], **{name: row[f"event__{name}"] for name in HASHED_FIELDS}}
        leaf = merkle.leaf_hash(leaf_entry(values))
        if leaf.hex() != row["hash"]:
            elsewhere = AuditLeaf.objects.filter(hash=leaf.hex()).exclude(index=index).values_list("index", flat=True)
            if elsewhere:
                check.problem = (f"reordered event: event {row['event_id']} at leaf {index} "
                                 f"was sequenced at leaf {elsewhere[0]}")
            else:
                check.problem = f"altered event: event {row['event_id']} at leaf {index} no longer gives its leaf hash"
            return roots
        stream.append(leaf)
        if stream.size in roots_wanted:
            roots[stream.size] = stream.root().hex()
    check.tree_size, check.root_hash = stream.size, stream.root().hex()
    return roots


def _inserted_events():
    """Events outside the log that the sequencer will never take: those of transactions it has
    settled (below its horizon and not open at its last run), and those with no transaction id."""
    outside = AuditEvent.objects.filter(leaf__isnull=True)
    horizon, open_xacts = AuditSequencerState.objects.values_list("horizon", "open_xacts").first() or (0, [])
    return outside.filter(xact_id__lt=horizon).exclude(xact_id__in=open_xacts) | outside.filter(xact_id__isnull=True)


def _published(check: LogCheck, directory, stored: dict[int, dict], public_key: bytes) -> list[tuple]:
    """The heads published to ``directory`` that the log must still give: (size, root, name)."""
    expected = []
    for name, head in heads.published_heads(directory):
        if head is None:
            check.problem = f"unreadable published head: {Path(directory) / name} is not a head"
            return []
        if stored.get(head["tree_size"]) != head and not heads.signature_holds(head, public_key):
            check.problem = f"bad signature: the published head {name} is not signed by our key"
            return []
        expected.append((head["tree_size"], head["root_hash"], f"the published head {name}"))
    check.published_checked = len(expected)
    return expected


def check_log(against: dict | None = None, *, published: str | Path | None = None,
              public_key: bytes | None = None) -> LogCheck:
    """Check the log with ``public_key`` (by default the configured one: heads.public_key_bytes),
    against every head published to ``published`` (by default AUDIT_HEAD_SINK_DIR; "" for none) and
    the head ``against``."""
    check = LogCheck()
    public_key = heads.public_key_bytes() if public_key is None else public_key
    stored = list(AuditHead.objects.order_by("tree_size"))
    for head in stored:
        if not heads.signature_holds(head.as_json(), public_key):
            check.problem = f"bad signature: the stored head of tree size {head.tree_size} is not signed by our key"
            return check
    check.heads_checked = len(stored)
    if against is not None and not heads.signature_holds(against, public_key):
        check.problem = f"bad signature: the head given (tree size {against['tree_size']}) is not signed by our key"
        return check
    expected = [(head.tree_size, head.root_hash, "the stored head") for head in stored]
    directory = settings.AUDIT_HEAD_SINK_DIR if published is None else published
    if directory:
        expected += _published(check, directory, {head.tree_size: head.as_json() for head in stored}, public_key)
        if check.problem:
            return check
    if against is not None:
        expected.append((against["tree_size"], against["root_hash"], "the head given"))
    roots = _walk(check, {size for size, _root, _name in expected})
    if check.problem:
        return check
    for size, root, name in sorted(expected):
        if size > check.tree_size:
            check.problem = (f"truncated log: {name} covers {size} events, the log holds {check.tree_size}")
            return check
        if roots[size] != root:
            check.problem = (f"rewritten log: its first {size} events no longer give the root of {name} "
                             f"of tree size {size} (an event altered, inserted, removed or reordered)")
            return check
    inserted = _inserted_events().order_by("id").values_list("id", flat=True).first()
    if inserted is not None:
        check.problem = f"inserted event: event {inserted} is older than the log's sequenced events but not in it"
        return check
    check.pending = AuditEvent.objects.filter(leaf__isnull=True).count()
    return check
