"""The signature of a delivery (documented in the README for receivers).

Header ``Baccarat-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]``, where each v1 is
HMAC-SHA256(key = an endpoint secret, message = "<t>.<raw body>"), one per valid secret (two during a
rotation). A receiver recomputes it with its secret, compares in constant time, accepts any matching
v1, and refuses a timestamp too far from its clock (replays).
"""

import hashlib
import hmac


def signature(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secrets, timestamp: int, body: bytes) -> str:
    return ",".join([f"t={timestamp}", *(f"v1={signature(secret, timestamp, body)}" for secret in secrets)])
