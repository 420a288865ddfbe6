"""IP addresses read one way (issue 37, item 8): every check of a client's or a webhook's address goes
through :func:`normalised`, so that one host written two ways is one host.

A dual-stack socket reports an IPv4 peer as an IPv4-mapped IPv6 address (``::ffff:127.0.0.1``): that is
the IPv4 address itself, for the trusted proxies, the ``/metrics`` allow-list and the rate limits alike.
A zone (``fe80::1%eth0``) is dropped.

Other IPv6 forms carry an IPv4 address without being it: 6to4 (``2002:7f00:1::``), IPv4-compatible
(``::127.0.0.1``) and NAT64 (``64:ff9b::7f00:1``). They are routed through relays and gateways, so they are
never trusted as the IPv4 address they carry; but a webhook may reach them only when it may reach that
IPv4 address as well (:func:`carried_ipv4`, ``referee/notify/targets.py``).

Users: the forwarded headers' trusted proxies (``referee/web/defences.py``), the ``/metrics`` allow-list
(``referee/observability.py``), the rate limits' client address (``referee/api/limits.py``) and the
webhook targets (``referee/notify/targets.py``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def normalised(address: str | None) -> Address | None:
    """The address ``address`` names: without a zone, an IPv4-mapped one as its IPv4 address; None when it
    is no IP address.

    >>> [str(normalised(a)) for a in ("::ffff:127.0.0.1", "127.0.0.1", "fe80::1%eth0", "2002:7f00:1::")]
    ['127.0.0.1', '127.0.0.1', 'fe80::1', '2002:7f00:1::']
    >>> normalised("localhost") is None
    True
    """
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address.split("%", maxsplit=1)[0].strip())
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def carried_ipv4(ip: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address a 6to4, IPv4-compatible or NAT64 address carries (where a packet to it may end up).

    >>> [str(carried_ipv4(ipaddress.ip_address(a))) for a in ("2002:7f00:1::", "::127.0.0.1", "64:ff9b::a00:1")]
    ['127.0.0.1', '127.0.0.1', '10.0.0.1']
    >>> carried_ipv4(ipaddress.ip_address("::1")), carried_ipv4(ipaddress.ip_address("2606:4700:4700::1111"))
    (None, None)
    """
    if isinstance(ip, ipaddress.IPv4Address):
        return None
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or (ip in _COMPATIBLE and int(ip) > 1):  # :: and ::1 are IPv6's own
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def normalised_text(address: str | None) -> str:
    """:func:`normalised` as text ('' for no address): what the rate limits count a client by."""
    ip = normalised(address)
    return str(ip) if ip is not None else (address or "")


def networks(items: Iterable[str]) -> list[Network]:
    """The networks of a setting (``REFEREE_TRUSTED_PROXIES``, ``REFEREE_METRICS_ALLOW``); an IPv4-mapped
    IPv6 network (``::ffff:10.0.0.0/112``) is the IPv4 network it maps. ``ValueError`` for one that is none."""
    out: list[Network] = []
    for item in items:
        network = ipaddress.ip_network(item.strip(), strict=False)
        if isinstance(network, ipaddress.IPv6Network) and network.prefixlen >= 96 and network.subnet_of(_MAPPED):
            network = ipaddress.IPv4Network((int(network.network_address) & 0xFFFFFFFF, network.prefixlen - 96))
        out.append(network)
    return out


def within(address: str | None, allowed: list[Network]) -> bool:
    """Whether ``address``, normalised, lies in one of ``allowed`` (from :func:`networks`)."""
    ip = normalised(address)
    return ip is not None and any(ip in network for network in allowed)


def with_mapped_forms(items: Iterable[str]) -> list[str]:
    """``items`` (networks) and, for each IPv4 network, its IPv4-mapped IPv6 form: for a list read by a
    program that does not normalise its peer's address (gunicorn's ``forwarded_allow_ips``).

    >>> with_mapped_forms(["10.1.0.0/16", "::1"])
    ['10.1.0.0/16', '::ffff:a01:0/112', '::1/128']
    """
    out: list[str] = []
    for network in networks(items):
        out.append(str(network))
        if isinstance(network, ipaddress.IPv4Network):
            mapped = ipaddress.IPv6Address(int(_MAPPED.network_address) + int(network.network_address))
            out.append(f"{mapped}/{network.prefixlen + 96}")
    return out
