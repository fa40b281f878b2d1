"""Where a webhook may post, and which events it may name.

The URL rule is one regular expression, built from the settings: the model, the API serializer and
the admin form validate with it, the OpenAPI schema publishes it as the field's pattern, and the
sender checks it again before each attempt (a setting may have changed since the URL was saved).

- ``https`` only, unless WEBHOOK_ALLOW_HTTP (on by default only with DEBUG); lower-case scheme.
- No credentials (``user:password@``), no fragment, no white space or non-ASCII (percent-encode).
- A host name of DNS labels, an optional port 1-65535, an optional path and query.
- While WEBHOOK_BLOCK_PRIVATE is on (the default unless DEBUG), the host must be a dotted name whose
  last label starts with a letter: no IP literal and no single name such as ``localhost``. The
  sender also refuses a name that resolves to any address but a public one (``non_public_reason``:
  global unicast only, and no IPv6 address that carries a non-public IPv4 one).
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
        why = non_public_reason(ip)
        if why:
            return f"The host resolves to a non-public address ({ip}, {why}); WEBHOOK_BLOCK_PRIVATE is on."
    return None


# Never a public destination, whatever ``is_global`` says (Python 3.11 calls 64:ff9b::/96, 2002::/16,
# ::a.b.c.d and fec0::/10 global, and 192.0.0.0/24's anycast addresses too): IANA's special-purpose
# ranges that are not globally reachable, plus the anycast and relay ones, which are no client's.
_IPV4_NOT_PUBLIC = tuple(ipaddress.ip_network(net) for net in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
    "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4"))
# IPv6 global unicast is 2000::/3; within it, 2001::/23 (IETF protocol assignments: Teredo 2001::/32,
# benchmarking, ORCHID…) and the documentation prefixes are not a destination either.
_IPV6_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
_IPV6_NOT_PUBLIC = tuple(ipaddress.ip_network(net) for net in ("2001::/23", "2001:db8::/32", "3fff::/20"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052's well-known prefix; 64:ff9b:1::/48 stays refused
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d (and :: and ::1)
_TEREDO = ipaddress.ip_network("2001::/32")


def _ipv4_not_public(ip: ipaddress.IPv4Address) -> bool:
    return not ip.is_global or ip.is_multicast or any(ip in net for net in _IPV4_NOT_PUBLIC)


def non_public_reason(ip) -> str:
    """Why an address is no public destination ("" when it is one). An IPv4 address must be global
    and unicast; an IPv6 one global unicast (2000::/3, outside 2001::/23 and the documentation
    prefixes). An IPv6 address that carries an IPv4 one is judged by it as well: IPv4-mapped
    (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) by the IPv4 address alone (the packets go there),
    6to4 (2002:aabb:ccdd::/48) by both; IPv4-compatible (::a.b.c.d), site-local (fec0::/10),
    unique-local, link-local, multicast, local-use NAT64 (64:ff9b:1::/48) and Teredo (2001::/32) are
    refused outright."""
    if ip.version == 4:
        return "not public" if _ipv4_not_public(ip) else ""
    embedded = ip.ipv4_mapped or (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in _NAT64 else None)
    if embedded is not None:
        kind = "IPv4-mapped" if ip.ipv4_mapped else "NAT64 of"
        return f"{kind} {embedded}, not public" if _ipv4_not_public(embedded) else ""
    if ip in _IPV4_COMPATIBLE and not (ip.is_loopback or ip.is_unspecified):
        return f"IPv4-compatible of {ipaddress.IPv4Address(int(ip))}, not global unicast"
    if ip not in _IPV6_GLOBAL_UNICAST or ip.is_multicast:
        return "not global unicast"
    if any(ip in net for net in _IPV6_NOT_PUBLIC):
        return "Teredo" if ip in _TEREDO else "not public"
    if ip.sixtofour is not None and _ipv4_not_public(ip.sixtofour):
        return f"6to4 of {ip.sixtofour}, not public"
    return ""


def validate_event_types(value) -> None:
    if not isinstance(value, list) or not value:
        raise ValidationError("Choose at least one event.")
    unknown = sorted({str(item) for item in value} - set(EventType.values))
    if unknown or not all(isinstance(item, str) for item in value):
        raise ValidationError(f"Unknown event(s): {', '.join(unknown)}. Known: {', '.join(EventType.values)}.")
    if len(set(value)) != len(value):
        raise ValidationError("Each event once.")
