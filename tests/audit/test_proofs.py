"""Inclusion and consistency proofs: the Merkle code against RFC 6962's definition, the API, and the
single-file verifier players download (standard library only, its own Ed25519)."""

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit import heads, merkle
from audit.services import audit_head_sign, audit_record, audit_sequence
from tests.api.helpers import API

SCRIPT = Path(__file__).resolve().parents[2] / "games" / "static" / "games" / "pf1_verify.py"
INCLUSION, CONSISTENCY = f"{API}/audit/proofs/inclusion/", f"{API}/audit/proofs/consistency/"


def load_verifier():
    spec = importlib.util.spec_from_file_location("pf1_verify", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mth(leaves: list[bytes]) -> bytes:
    """RFC 6962 2.1's definition, literally."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    return merkle.node_hash(mth(leaves[:k]), mth(leaves[k:]))


def perfect_of(leaves):
    return lambda level, index: mth(leaves[index << level:(index + 1) << level])


@given(st.integers(1, 70), st.data())
def test_proofs_follow_rfc_6962_and_verify(size, data):
    leaves = [merkle.leaf_hash(str(i).encode()) for i in range(size)]
    perfect, verifier = perfect_of(leaves), load_verifier()
    index = data.draw(st.integers(0, size - 1))
    first = data.draw(st.integers(0, size))
    root = merkle.root(size, perfect)
    assert root == mth(leaves)
    stream = merkle.RootStream()
    for leaf in leaves:
        stream.append(leaf)
    assert stream.root() == root
    path = merkle.inclusion_path(index, size, perfect)
    for check in (merkle.verify_inclusion, verifier.verify_inclusion):
        assert check(index, size, leaves[index], path, root)
        assert not check(index, size, merkle.leaf_hash(b"forged"), path, root)
    proof = merkle.consistency_proof(first, size, perfect)
    for check in (merkle.verify_consistency, verifier.verify_consistency):
        assert check(first, size, mth(leaves[:first]), root, proof)
        if 0 < first < size:
            assert not check(first, size, merkle.leaf_hash(b"forged"), root, proof)
    assert merkle.new_perfect_nodes(0, leaves, perfect) == {
        (level, i): mth(leaves[i << level:(i + 1) << level])
        for level in range(1, size.bit_length()) for i in range(size >> level)}


def test_the_verifiers_own_ed25519_agrees_with_cryptography(settings):
    verifier = load_verifier()
    head = heads.sign(5, "ab" * 32, 1_700_000_000_000)
    public = heads.public_key_bytes()
    assert verifier.head_signed(head, public) and heads.signature_holds(head, public)
    for forged in ({**head, "tree_size": 6}, {**head, "root_hash": "cd" * 32}, {**head, "timestamp": 1}):
        assert not verifier.head_signed(forged, public) and not heads.signature_holds(forged, public)


@pytest.fixture
def as_support(api_as, support):
    return api_as(support)


@pytest.fixture
def signed_log(db, settings):
    settings.AUDIT_SEQUENCE_ON_COMMIT = False
    events = [audit_record(actor="system:test", action="test.event", object_type="t", object_id=str(i))
              for i in range(7)]
    audit_sequence()
    early = audit_head_sign()
    events += [audit_record(actor="system:test", action="test.event", object_type="t", object_id=str(i))
               for i in range(7, 12)]
    late = audit_head_sign()
    return events, early, late


def run_verifier(tmp_path, body) -> subprocess.CompletedProcess:
    (proof := tmp_path / "proof.json").write_text(json.dumps(body))
    return subprocess.run([sys.executable, str(SCRIPT), "--audit-proof", str(proof), "--public-key",
                           heads.public_key_b64()], capture_output=True, text=True, timeout=60)


def test_an_inclusion_proof_from_the_api_checks_offline(signed_log, as_support, tmp_path):
    events, early, late = signed_log
    body = as_support.get(INCLUSION, {"event_id": events[3].pk, "tree_size": early.tree_size}).json()
    assert body["head"] == early.as_json() and body["root_hash"] == early.root_hash
    assert json.loads(body["entry"])["id"] == events[3].pk
    result = run_verifier(tmp_path, body)
    assert result.returncode == 0, result.stdout
    assert "FAILED" not in result.stdout and "is signed by the key given" in result.stdout

    latest = as_support.get(INCLUSION, {"event_id": events[-1].pk}).json()  # the latest head by default
    assert latest["tree_size"] == late.tree_size and run_verifier(tmp_path, latest).returncode == 0
    body["entry"] = body["entry"].replace('"t"', '"x"')
    assert run_verifier(tmp_path, body).returncode == 1


def test_a_consistency_proof_from_the_api_checks_offline(signed_log, as_support, tmp_path):
    _events, early, late = signed_log
    body = as_support.get(CONSISTENCY, {"first": early.tree_size}).json()
    assert (body["first"], body["second"]) == (early.tree_size, late.tree_size)
    assert run_verifier(tmp_path, body).returncode == 0
    body["first_root_hash"] = "00" * 32
    assert run_verifier(tmp_path, body).returncode == 1


def test_proof_requests_outside_the_log_name_the_field(signed_log, as_support):
    events, _early, late = signed_log
    too_big = as_support.get(INCLUSION, {"event_id": events[0].pk, "tree_size": late.tree_size + 5})
    # Well-formed but beyond what the log holds now: at odds with its state, 409.
    assert too_big.status_code == 409 and "tree_size" in too_big.json()
    pending = audit_record(actor="system:test", action="test.event", object_type="t", object_id="p")
    not_yet = as_support.get(INCLUSION, {"event_id": pending.pk})
    assert not_yet.status_code == 409 and "event_id" in not_yet.json()
    malformed = as_support.get(CONSISTENCY, {"first": "x"})
    assert malformed.status_code == 400 and "first" in malformed.json()
    beyond = as_support.get(CONSISTENCY, {"first": late.tree_size + 1})
    assert beyond.status_code == 409 and "first" in beyond.json()


def test_a_proof_before_any_signed_head_is_a_conflict(db, as_support):
    audit_record(actor="system:test", action="test.event", object_type="t", object_id="1")
    response = as_support.get(INCLUSION, {"event_id": 1})
    assert response.status_code == 409 and "tree_size" in response.json()
    response = as_support.get(CONSISTENCY, {"first": 0})
    assert response.status_code == 409 and response.json() == {
        "second": ["No signed head yet: run audit_head, or give a tree size."]}


def test_proofs_need_the_audit_view_permission(signed_log, api_as, nobody):
    assert api_as(nobody).get(CONSISTENCY, {"first": 1}).status_code == 403


def test_the_public_page_shows_the_public_key_and_the_latest_head(signed_log, client):
    _events, _early, late = signed_log
    page = client.get("/").content.decode()
    assert heads.public_key_b64() in page and late.root_hash in page
