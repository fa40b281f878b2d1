"""Keyed digests of API tokens: HMAC-SHA256 with a pepper from the environment (API_TOKEN_PEPPERS,
comma-separated, the first current). The database keeps only the digest, so a copy of it (a backup,
a replica, an SQL injection) gives no usable token without the pepper, which never enters it.
Earlier peppers are tried after the current one until every token has been used (re-digested) or
rotated."""

import hashlib
import hmac
import secrets
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

TOKEN_PREFIX = "bo_"  # marks a token as this back-office's for secret scanners
VISIBLE_CHARACTERS = 10  # the prefix kept in clear for support: "bo_" and 7 random characters


@lru_cache(maxsize=4)
def _keys(peppers: tuple) -> tuple:
    if not peppers:
        raise ImproperlyConfigured("API_TOKEN_PEPPERS is empty: set a secret pepper (for example "
                                   "`openssl rand -hex 32`) to make or check API tokens.")
    return tuple(pepper.encode() for pepper in peppers)


def pepper_keys() -> tuple:
    """The peppers as HMAC keys, the current one first."""
    return _keys(tuple(settings.API_TOKEN_PEPPERS))


def digest(token: str, key: bytes | None = None) -> str:
    """The token's digest (64 hex characters) under ``key``, by default the current pepper."""
    return hmac.new(key if key is not None else pepper_keys()[0], token.encode(), hashlib.sha256).hexdigest()


def candidate_digests(token: str) -> list:
    """The token's digest under every pepper, the current one first."""
    return [digest(token, key) for key in pepper_keys()]


def new_token() -> str:
    """A new token: the prefix and 40 URL-safe characters (240 random bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(30)


def visible_prefix(token: str) -> str:
    return token[:VISIBLE_CHARACTERS] if token.startswith(TOKEN_PREFIX) else token[:8]
