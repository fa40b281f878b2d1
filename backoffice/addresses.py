"""Who is asking: the client's address, computed once per request.

``X-Forwarded-For`` is believed only as far as the proxies that wrote it are trusted
(``TRUSTED_PROXIES``, CIDRs; ``unix`` for a proxy on a Unix socket, whose peer has no address):
when the direct peer (``REMOTE_ADDR``) is one of them, the client is the right-most address of the
header that is not, each trusted proxy having appended the address it was reached from. Anything a
client sends to the left of that is its own claim and ignored. With no proxy configured the header
is ignored and the client is ``REMOTE_ADDR``. A value that is not an address (``unknown``, garbage,
a NUL) is never a 500: an untrusted peer's header is not read at all, and within a trusted chain an
entry that is not an address stops the walk at the proxy that wrote it.

``ClientAddressMiddleware`` runs first and sets ``request.client_address`` (a normalised address,
or None when the peer has none); the throttles, the audit trail, the log-in lock-outs and any
address allow-list read it through ``client_address(request)``. Limits per address (the anonymous
throttle, the lock-outs) count an IPv6 client by its /64 (``limited_address``). Behind configured proxies it also
drops the TLS proxy's header (``SECURE_PROXY_SSL_HEADER``) from any other peer, so only a trusted
proxy can say a request came over HTTPS.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

UNIX_SOCKET = "unix"  # in TRUSTED_PROXIES: a peer without an address (a proxy on a Unix socket)
_MAX_HOPS = 64  # at most this many entries of X-Forwarded-For are read, right to left


@lru_cache(maxsize=8)
def trusted_networks(proxies: tuple) -> tuple:
    """``("10.0.0.0/8", "::1", "unix")`` -> the networks (``unix`` is left out)."""
    networks = []
    for proxy in proxies:
        proxy = str(proxy).strip()
        if not proxy or proxy.lower() == UNIX_SOCKET:
            continue
        try:
            networks.append(ipaddress.ip_network(proxy, strict=False))
        except ValueError:
            raise ImproperlyConfigured(f"TRUSTED_PROXIES: {proxy!r} is not an address or a CIDR") from None
    return tuple(networks)


def _proxies() -> tuple:
    proxies = getattr(settings, "TRUSTED_PROXIES", ())
    proxies = proxies.split(",") if isinstance(proxies, str) else proxies
    return tuple(str(proxy).strip() for proxy in proxies if str(proxy).strip())


def parse_address(value) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as a proxy or the socket writes it (``198.51.100.7``, ``2001:db8::1``,
    ``[2001:db8::1]:443``, ``198.51.100.7:5678``, ``fe80::1%eth0``), or None for anything else.
    An IPv4-mapped IPv6 address is the IPv4 address."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith("["):  # [IPv6]:port
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:  # IPv4:port
        text = text.partition(":")[0]
    text = text.partition("%")[0]  # an IPv6 zone names an interface of the proxy, not the client
    if not text or len(text) > 45:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _is_trusted(address, networks) -> bool:
    return address is not None and any(address.version == network.version and address in network
                                       for network in networks)


def _peer_is_trusted(meta, peer, proxies: tuple, networks: tuple) -> bool:
    if peer is None:  # a Unix socket's peer has no address (an address that does not parse is no proxy)
        return not meta.get("REMOTE_ADDR") and any(str(proxy).strip().lower() == UNIX_SOCKET for proxy in proxies)
    return _is_trusted(peer, networks)


def compute_client_address(meta) -> str | None:
    """The client's address from a request's META (see the module's docstring)."""
    proxies = _proxies()
    networks = trusted_networks(proxies)
    peer = parse_address(meta.get("REMOTE_ADDR"))
    if not proxies or not _peer_is_trusted(meta, peer, proxies, networks):
        return str(peer) if peer is not None else None
    client = peer
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    hops = forwarded.split(",")[-_MAX_HOPS:] if isinstance(forwarded, str) else []
    for hop in reversed(hops):
        address = parse_address(hop)
        if address is None:
            break  # not an address: the proxy that wrote it is as far as we can tell
        client = address
        if not _is_trusted(address, networks):
            break
    return str(client) if client is not None else None


def limited_address(address: str | None) -> str | None:
    """What a per-address limit counts by: an IPv4 address, or an IPv6 address's /64 (a single
    client commonly holds a whole /64 and can take a new address of it for every request)."""
    parsed = parse_address(address)
    if parsed is None or parsed.version == 4:
        return str(parsed) if parsed is not None else None
    return str(ipaddress.ip_network(f"{parsed}/64", strict=False))


def client_address(request) -> str | None:
    """The request's client address, computed once (by the middleware, or here at first use)."""
    address = getattr(request, "client_address", False)
    if address is False:
        address = compute_client_address(request.META)
        request.client_address = address
    return address


class ClientAddressMiddleware:
    """First in the stack: sets ``request.client_address`` for everything after it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.client_address = compute_client_address(request.META)
        self._forget_untrusted_proto(request)
        return self.get_response(request)

    @staticmethod
    def _forget_untrusted_proto(request) -> None:
        """Behind configured proxies, only they may say the request came over HTTPS."""
        proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
        proxies = _proxies()
        if not proxy_header or not proxies:
            return
        peer = parse_address(request.META.get("REMOTE_ADDR"))
        if not _peer_is_trusted(request.META, peer, proxies, trusted_networks(proxies)):
            request.META.pop(proxy_header[0], None)
