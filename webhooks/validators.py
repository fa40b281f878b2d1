"""Where a webhook may post, and which events it may name.

The URL rule is one regular expression, built from the settings: the model, the API serializer and
the admin form validate with it, the OpenAPI schema publishes it as the field's pattern, and the
sender checks it again before each attempt (a setting may have changed since the URL was saved).

- ``https`` only, unless WEBHOOK_ALLOW_HTTP (on by default only with DEBUG); lower-case scheme.
- No credentials (``user:password@``), no fragment, no white space or non-ASCII (percent-encode).
- A host name of DNS labels, an optional port 1-65535, an optional path and query.
- While WEBHOOK_BLOCK_PRIVATE is on (the default unless DEBUG), the host must be a dotted name whose
  last label starts with a letter: no IP literal and no single name such as ``localhost``. The
  sender also refuses a name that resolves to a private, loopback, link-local or reserved address.
"""

import ipaddress
import re
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

from webhooks.choices import EventType

URL_MAX_LENGTH = 500

_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# The last label of a public name starts with a letter, so no form of IPv4 literal can match.
_PUBLIC_HOST = f"(?:{_LABEL}\\.)+[A-Za-z](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?"
_ANY_HOST = f"{_LABEL}(?:\\.{_LABEL})*"
_PORT = "(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
# RFC 3986 pchar: unreserved, percent-encoded, sub-delims, ":" and "@" (never "#": no fragment).
_PCHAR = "(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})"


def endpoint_url_pattern(*, allow_http: bool | None = None, block_private: bool | None = None) -> str:
    """The rule as a pattern valid both in Python and in JSON Schema (ECMA 262); the settings' by default."""
    allow_http = settings.WEBHOOK_ALLOW_HTTP if allow_http is None else allow_http
    block_private = settings.WEBHOOK_BLOCK_PRIVATE if block_private is None else block_private
    scheme = "https?" if allow_http else "https"
    host = _PUBLIC_HOST if block_private else _ANY_HOST
    return f"^{scheme}://{host}(?::{_PORT})?(?:/(?:{_PCHAR}|/)*)?(?:\\?(?:{_PCHAR}|[/?])*)?$"


def endpoint_url_rule_text() -> str:
    schemes = "https:// (or http://)" if settings.WEBHOOK_ALLOW_HTTP else "https://"
    host = "a public host name (no IP address, no localhost)" if settings.WEBHOOK_BLOCK_PRIVATE else "a host"
    return (f"Enter a URL of at most {URL_MAX_LENGTH} characters: {schemes}, {host}, an optional port, "
            "path and query; no user or password, no #fragment, no spaces or non-ASCII characters.")


def _what_is_wrong(url: str) -> str:
    """The first broken part of the rule, said plainly; the whole rule when none stands out."""
    allowed = ("https://", "http://") if settings.WEBHOOK_ALLOW_HTTP else ("https://",)
    authority = url.partition("://")[2].split("/", 1)[0].split("?", 1)[0]
    if len(url) > URL_MAX_LENGTH:
        return f"At most {URL_MAX_LENGTH} characters."
    if not url.startswith(allowed):
        return f"The URL must start with {' or '.join(allowed)}"
    if "@" in authority:
        return "No user or password in the URL."
    if "#" in url:
        return "No #fragment: it is never sent."
    if not url.isascii() or any(character.isspace() for character in url):
        return "No spaces or non-ASCII characters: percent-encode them."
    host = authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority
    if settings.WEBHOOK_BLOCK_PRIVATE and re.fullmatch(_ANY_HOST, host) and not re.fullmatch(_PUBLIC_HOST, host):
        return "The host must be a public name: no IP address, no localhost."
    return endpoint_url_rule_text()


def validate_endpoint_url(value) -> None:
    if not isinstance(value, str):
        raise ValidationError("Enter the URL as text.", code="invalid_endpoint_url")
    if len(value) > URL_MAX_LENGTH or not re.fullmatch(endpoint_url_pattern(), value):
        raise ValidationError(_what_is_wrong(value), code="invalid_endpoint_url")


def refused_destination(url: str) -> str | None:
    """Why the sender must not post to this URL now, or None. Resolves the host when private
    addresses are blocked (a public name may point inside the network)."""
    try:
        validate_endpoint_url(url)
    except ValidationError as error:
        return error.messages[0]
    if not settings.WEBHOOK_BLOCK_PRIVATE:
        return None
    parts = urlsplit(url)
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parts.hostname, None, proto=socket.IPPROTO_TCP)}
    except OSError as error:
        return f"Host not resolved: {error}"
    for address in sorted(addresses):
        ip = ipaddress.ip_address(address.split("%")[0])
        ip = getattr(ip, "ipv4_mapped", None) or ip
        if not ip.is_global or ip.is_multicast:
            return f"The host resolves to a non-public address ({ip}); WEBHOOK_BLOCK_PRIVATE is on."
    return None


def validate_event_types(value) -> None:
    if not isinstance(value, list) or not value:
        raise ValidationError("Choose at least one event.")
    unknown = sorted({str(item) for item in value} - set(EventType.values))
    if unknown or not all(isinstance(item, str) for item in value):
        raise ValidationError(f"Unknown event(s): {', '.join(unknown)}. Known: {', '.join(EventType.values)}.")
    if len(set(value)) != len(value):
        raise ValidationError("Each event once.")
