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
from audit.archives import archived_ranges, check_archives
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
    archived: int = 0  # leaves whose events are in archived months
    archived_checked: int = 0  # of those, checked against the archive files given
    problem: str | None = None


def _events(ids: list) -> dict:
    """{id: values} of the online events among ``ids``."""
    rows = AuditEvent.objects.filter(id__in=ids).values("id", *HASHED_FIELDS)
    return {row["id"]: row for row in rows}


def _walk(check: LogCheck, roots_wanted: dict[int, str], archived: list) -> dict[int, str]:
    """Recompute every leaf in index order; the roots at the sizes wanted (size -> hex root). A leaf
    whose event is not online must lie in an archived month (``archived``: (id_from, id_to)); its
    stored hash goes into the roots, and the archive files check it (``_check_archives``)."""
    stream, roots = merkle.RootStream(), {}
    if 0 in roots_wanted:
        roots[0] = merkle.EMPTY_ROOT.hex()
    leaves = AuditLeaf.objects.order_by("index").values_list("index", "hash", "event_id")
    chunk = []
    for row in [*leaves.iterator(chunk_size=CHUNK), None]:
        if row is not None:
            chunk.append(row)
            if len(chunk) < CHUNK:
                continue
        events = _events([event_id for _index, _hash, event_id in chunk])
        for index, stored, event_id in chunk:
            if index != stream.size:
                check.problem = (f"missing event: leaf {stream.size} is gone (the log jumps to leaf {index}, "
                                 f"event {event_id})")
                return roots
            if event_id in events:
                leaf = merkle.leaf_hash(leaf_entry(events[event_id]))
                if leaf.hex() != stored:
                    check.problem = _misplaced(event_id, index, leaf)
                    return roots
            elif any(low <= event_id < high for low, high in archived):
                check.archived += 1
                leaf = bytes.fromhex(stored)
            else:
                check.problem = f"missing event: event {event_id} of leaf {index} is neither online nor archived"
                return roots
            stream.append(leaf)
            if stream.size in roots_wanted:
                roots[stream.size] = stream.root().hex()
        chunk = []
    check.tree_size, check.root_hash = stream.size, stream.root().hex()
    return roots


def _misplaced(event_id: int, index: int, leaf: bytes) -> str:
    elsewhere = AuditLeaf.objects.filter(hash=leaf.hex()).exclude(index=index).values_list("index", flat=True)
    if elsewhere:
        return f"reordered event: event {event_id} at leaf {index} was sequenced at leaf {elsewhere[0]}"
    return f"altered event: event {event_id} at leaf {index} no longer gives its leaf hash"


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
              public_key: bytes | None = None, archives: str | Path | None = None) -> LogCheck:
    """Check the log with ``public_key`` (by default the configured one: heads.public_key_bytes),
    against every head published to ``published`` (by default AUDIT_HEAD_SINK_DIR; "" for none) and
    the head ``against``; the leaves of archived events against the archive files in ``archives``."""
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
    archived = archived_ranges()
    roots = _walk(check, {size for size, _root, _name in expected}, list(archived))
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
    if archives is not None:
        check_archives(check, archived, Path(archives))
    return check
