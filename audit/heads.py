"""Signed tree heads: the signing key, the signature, and publishing outside the database.

A head signs the RFC 6962 TreeHeadSignature structure: version v1 (0), signature type tree_hash
(1), the timestamp (milliseconds, uint64), the tree size (uint64) and the 32-byte root, with
Ed25519. ``key_id`` is the SHA-256 of the raw 32-byte public key. The private key comes from
AUDIT_SIGNING_KEY (base64 of the 32-byte private key) or AUDIT_SIGNING_KEY_FILE (PEM, or that
base64), never from the database; with DEBUG and no key, a key file is made once for development.
Heads are checked with the public key alone: AUDIT_PUBLIC_KEY (base64 of the raw 32 bytes), or the
signing key's when only that is set; an auditor needs nothing secret.
"""

import base64
import binascii
import functools
import hashlib
import json
import os
import struct
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

HEAD_KEYS = ("tree_size", "root_hash", "timestamp", "signature", "key_id")


def signed_message(tree_size: int, root_hash_hex: str, timestamp: int) -> bytes:
    return struct.pack(">BBQQ", 0, 1, timestamp, tree_size) + bytes.fromhex(root_hash_hex)


def _from_text(text: bytes) -> Ed25519PrivateKey:
    if text.lstrip().startswith(b"-----BEGIN"):
        key = serialization.load_pem_private_key(text, password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise ImproperlyConfigured("The audit signing key must be an Ed25519 key.")
        return key
    try:
        return Ed25519PrivateKey.from_private_bytes(base64.b64decode(text.strip(), validate=True))
    except (binascii.Error, ValueError) as error:
        raise ImproperlyConfigured("The audit signing key must be base64 of 32 bytes, or PEM.") from error


def signing_key() -> Ed25519PrivateKey:
    if settings.AUDIT_SIGNING_KEY:
        return _from_text(settings.AUDIT_SIGNING_KEY.encode("ascii"))
    if not settings.AUDIT_SIGNING_KEY_FILE:
        raise ImproperlyConfigured("Set AUDIT_SIGNING_KEY or AUDIT_SIGNING_KEY_FILE to sign audit tree heads.")
    path = Path(settings.AUDIT_SIGNING_KEY_FILE)
    if not path.exists() and not settings.DEBUG:
        raise ImproperlyConfigured(f"AUDIT_SIGNING_KEY_FILE names {path}, which does not exist.")
    if not path.exists():
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
    return _from_text(path.read_bytes())


def _raw_public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def parse_public_key(text: str) -> bytes:
    """The raw 32 bytes of an Ed25519 public key given as base64; ValueError if it is not one."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
        Ed25519PublicKey.from_public_bytes(raw)
    except (binascii.Error, ValueError):
        raise ValueError("an Ed25519 public key is base64 of its raw 32 bytes") from None
    return raw


def _configured_public_key() -> bytes | None:
    if not settings.AUDIT_PUBLIC_KEY:
        return None
    try:
        return parse_public_key(settings.AUDIT_PUBLIC_KEY)
    except ValueError as error:
        raise ImproperlyConfigured(f"AUDIT_PUBLIC_KEY: {error}.") from None


def public_key_bytes() -> bytes:
    """The key that checks every head: AUDIT_PUBLIC_KEY, or else the signing key's public half."""
    configured = _configured_public_key()
    if configured is not None:
        return configured
    if not (settings.AUDIT_SIGNING_KEY or settings.AUDIT_SIGNING_KEY_FILE):
        raise ImproperlyConfigured("Set AUDIT_PUBLIC_KEY (or the signing key) to check audit tree heads.")
    return _raw_public(signing_key())


def public_key_b64() -> str:
    return base64.b64encode(public_key_bytes()).decode("ascii")


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).hexdigest()


def sign(tree_size: int, root_hash_hex: str, timestamp: int) -> dict:
    key = signing_key()
    public = _raw_public(key)
    configured = _configured_public_key()
    if configured is not None and configured != public:
        raise ImproperlyConfigured("The audit signing key is not the one AUDIT_PUBLIC_KEY names: its heads "
                                   "would not verify.")
    signature = key.sign(signed_message(tree_size, root_hash_hex, timestamp))
    return {"tree_size": tree_size, "root_hash": root_hash_hex, "timestamp": timestamp,
            "signature": base64.b64encode(signature).decode("ascii"), "key_id": key_id(public)}


def signature_holds(head: dict, public_key: bytes) -> bool:
    """The head is signed by this public key (and names it)."""
    if head.get("key_id") != key_id(public_key):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            base64.b64decode(head["signature"], validate=True),
            signed_message(int(head["tree_size"]), head["root_hash"], int(head["timestamp"])))
    except (InvalidSignature, binascii.Error, ValueError, KeyError, TypeError):
        return False
    return True


def parse_head(text: str) -> dict:
    """A head as ``audit_head`` printed it (one JSON line); ValueError naming what is wrong."""
    try:
        head = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not a JSON head: {error}") from None
    if not isinstance(head, dict) or any(key not in head for key in HEAD_KEYS):
        raise ValueError(f"a head has the keys {', '.join(HEAD_KEYS)}")
    if not isinstance(head["tree_size"], int) or head["tree_size"] < 0 or not isinstance(head["timestamp"], int):
        raise ValueError("tree_size and timestamp must be whole numbers")
    try:
        if len(bytes.fromhex(head["root_hash"])) != 32:
            raise ValueError
    except (ValueError, TypeError):
        raise ValueError("root_hash must be 64 hex digits") from None
    return head


@functools.lru_cache(maxsize=4096)
def _holds(public_key: bytes, *values) -> bool:
    return signature_holds(dict(zip(HEAD_KEYS, values, strict=True)), public_key)


def head_verifies(head: dict) -> bool:
    """The head is signed by the configured key (False when no key is configured at all). A head
    never changes: the answer is remembered for the same head and key."""
    try:
        public_key = public_key_bytes()
    except ImproperlyConfigured:
        return False
    try:
        return _holds(public_key, *(head[key] for key in HEAD_KEYS))
    except (KeyError, TypeError):
        return False


def published_heads(directory: str | Path) -> list[tuple[str, dict | None]]:
    """The heads published to ``directory`` (the head sink), as (file name, head), oldest first; the
    head is None where the file is not a head. No directory, no heads."""
    sink = Path(directory)
    if not sink.is_dir():
        return []
    found = []
    for path in sorted(sink.glob("head-*.json")):
        try:
            found.append((path.name, parse_head(path.read_text())))
        except (OSError, ValueError, UnicodeDecodeError):
            found.append((path.name, None))
    return found


def publish(head: dict) -> Path:
    """Write the head to the sink directory as one JSON line, once (a head never changes); the
    directory is meant to be outside the database (a mounted write-once store, say)."""
    sink = Path(settings.AUDIT_HEAD_SINK_DIR)
    sink.mkdir(parents=True, exist_ok=True)
    path = sink / f"head-{head['tree_size']:015d}-{head['timestamp']}.json"
    if not path.exists():
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps({key: head[key] for key in HEAD_KEYS}) + "\n")
        os.replace(temporary, path)
    return path
