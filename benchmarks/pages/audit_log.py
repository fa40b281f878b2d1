"""The audit log of the pages benchmark: its events sequenced into the Merkle log and a head signed
with a key made for the run. Only the public half is kept: the server checks heads and serves proofs
with it (AUDIT_PUBLIC_KEY), as an auditor would."""

import base64
import tempfile

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.test.utils import override_settings

from audit.services import audit_head_sign


def sequence_and_sign() -> str:
    """Sequence every pending event, sign a head of the whole log; the public key, base64."""
    key = Ed25519PrivateKey.generate()
    private = base64.b64encode(key.private_bytes_raw()).decode("ascii")
    public = base64.b64encode(key.public_key().public_bytes_raw()).decode("ascii")
    with tempfile.TemporaryDirectory(prefix="bench-heads-") as sink, override_settings(
            AUDIT_SIGNING_KEY=private, AUDIT_SIGNING_KEY_FILE="", AUDIT_PUBLIC_KEY=public,
            AUDIT_HEAD_SINK_DIR=sink):
        audit_head_sign()
    return public
