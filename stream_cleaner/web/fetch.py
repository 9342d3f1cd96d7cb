"""Fetching a page by URL for ``/api/clean``: http and https only, every address checked.

The host is resolved and every address it resolves to must be public (not loopback, private,
link-local, multicast, reserved or unspecified) unless private addresses are allowed. The
connection is made to the checked addresses only (a resolver that checks, so a second DNS
answer cannot swap them), redirects are followed by hand and each hop is checked the same
way, and the body is read up to a size cap within one timeout.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from .config import MAX_FETCH_REDIRECTS


class FetchError(Exception):
    """A URL that may not or could not be fetched; ``status`` is the HTTP answer to give."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched page: its final URL, body, and response headers."""

    url: str
    body: bytes
    headers: dict[str, str]


# IPv6 forms that stand for an IPv4 address, in their last 32 bits: a connection to one reaches
# that address (through the kernel, a translator or a NAT64 gateway), so it is judged as that
# address. ``::`` and ``::1`` are in ::/96 and stand for 0.0.0.0 and 0.0.0.1: refused too.
_IPV4_STANDINS = tuple(
    ipaddress.IPv6Network(prefix)
    for prefix in (
        "::ffff:0:0/96",  # IPv4-mapped (RFC 4291)
        "::/96",  # IPv4-compatible, deprecated (RFC 4291)
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT, RFC 2765)
        "64:ff9b::/96",  # NAT64's well-known prefix (RFC 6052)
    )
)
# NAT64's local-use prefix (RFC 8215): where it carries the IPv4 address depends on the prefix
# length each network chose, and it never leads anywhere public
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4 = 0xFFFFFFFF


def is_public_address(address: str) -> bool:
    """Whether an IP address is a globally routable unicast address.

    An IPv6 address that stands for an IPv4 one (IPv4-mapped, -compatible or -translated, or
    NAT64's well-known prefix) is judged as that IPv4 address. One that carries IPv4 tunnel
    endpoints (6to4, Teredo, ISATAP) must be public itself, and so must each endpoint.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv4Address):
        return _is_public(ip)
    if any(ip in network for network in _IPV4_STANDINS):
        return _is_public(ipaddress.IPv4Address(int(ip) & _IPV4))
    if ip in _LOCAL_NAT64:
        return False
    return _is_public(ip) and all(_is_public(v4) for v4 in tunnel_endpoints(ip))


def tunnel_endpoints(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address carries as tunnel endpoints: 6to4's gateway (RFC
    3056), Teredo's server and client (RFC 4380), ISATAP's router or host (RFC 5214)."""
    found: list[ipaddress.IPv4Address] = []
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    # ISATAP's interface identifier: 0000:5efe or 0200:5efe (the u and g bits may be set),
    # then the IPv4 address
    if (int(ip) >> 32) & 0xFCFFFFFF == 0x00005EFE:
        found.append(ipaddress.IPv4Address(int(ip) & _IPV4))
    return tuple(found)


def _is_public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return ip.is_global and not ip.is_multicast


def check_url(url: str) -> tuple[str, int]:
    """The host and port of an http(s) URL.

    Raises:
        FetchError: another scheme, or no host.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise FetchError(422, "invalid_url", f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise FetchError(422, "invalid_url", "only http and https URLs can be fetched")
    if not parts.hostname:
        raise FetchError(422, "invalid_url", "the URL has no host")
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


async def resolve_checked(host: str, port: int, *, allow_private: bool) -> list[dict[str, Any]]:
    """Resolve ``host`` and check every address; aiohttp's resolver result format.

    Raises:
        FetchError: the host does not resolve (502), or one of its addresses is not public
            and private addresses are not allowed (403).
    """
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise FetchError(502, "fetch_failed", f"cannot resolve {host}: {exc}") from None
    except UnicodeError as exc:  # the IDNA codec: a label over 63 characters, an empty one
        raise FetchError(422, "invalid_url", f"not a valid host name: {exc}") from None
    if not infos:
        raise FetchError(502, "fetch_failed", f"{host} has no address")
    results = []
    for family, _, proto, _, sockaddr in infos:
        address = str(sockaddr[0])
        if not allow_private and not is_public_address(address):
            raise FetchError(
                403,
                "address_not_allowed",
                f"{host} resolves to {address}, a non-public address; this server does not "
                "fetch loopback, private or link-local addresses",
            )
        results.append(
            {
                "hostname": host,
                "host": address,
                "port": sockaddr[1],
                "family": family,
                "proto": proto,
                "flags": socket.AI_NUMERICHOST,
            }
        )
    return results


def _checked_resolver(allow_private: bool) -> Any:
    from aiohttp.abc import AbstractResolver

    class CheckedResolver(AbstractResolver):
        async def resolve(
            self, host: str, port: int = 0, family: int = socket.AF_INET
        ) -> list[dict[str, Any]]:
            try:
                return await resolve_checked(host, port, allow_private=allow_private)
            except FetchError as exc:
                raise OSError(exc.message) from exc

        async def close(self) -> None:
            return None

    return CheckedResolver()


async def fetch_url(
    url: str, *, timeout_seconds: float, max_bytes: int, allow_private: bool
) -> Fetched:
    """Fetch ``url`` with the checks of this module.

    Raises:
        FetchError: the URL may not be fetched, the fetch failed or timed out, or the page
            is larger than ``max_bytes``.
    """
    import aiohttp

    connector = aiohttp.TCPConnector(resolver=_checked_resolver(allow_private), force_close=True)
    timeout = aiohttp.ClientTimeout(total=timeout_seconds)
    try:
        async with aiohttp.ClientSession(
            connector=connector, timeout=timeout, trust_env=False
        ) as session:
            return await asyncio.wait_for(
                _fetch(session, url, max_bytes=max_bytes, allow_private=allow_private),
                timeout_seconds,
            )
    except FetchError:
        raise
    except TimeoutError:
        raise FetchError(504, "fetch_timeout", f"no answer within {timeout_seconds:g} s") from None
    except aiohttp.ClientError as exc:
        cause = exc.__cause__ or exc
        if isinstance(cause, OSError) and isinstance(cause.__cause__, FetchError):
            raise cause.__cause__ from None
        raise FetchError(502, "fetch_failed", f"fetching failed: {exc}") from None


async def _fetch(session: Any, url: str, *, max_bytes: int, allow_private: bool) -> Fetched:
    for _ in range(MAX_FETCH_REDIRECTS + 1):
        host, port = check_url(url)
        # IP literals skip the resolver: check them (and names, for a clear error) here
        await resolve_checked(host, port, allow_private=allow_private)
        async with session.get(url, allow_redirects=False) as response:
            if response.status in (301, 302, 303, 307, 308) and "Location" in response.headers:
                try:
                    url = urljoin(url, response.headers["Location"])
                except ValueError as exc:  # "http://[::1": an unclosed IPv6 literal
                    raise FetchError(502, "fetch_failed", f"a bad redirect: {exc}") from None
                continue
            if response.status >= 400:
                raise FetchError(502, "fetch_failed", f"the server answered {response.status}")
            length = response.content_length
            if length is not None and length > max_bytes:
                raise FetchError(413, "fetch_too_large", f"the page is over {max_bytes} bytes")
            chunks, size = [], 0
            async for chunk in response.content.iter_chunked(65536):
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError(413, "fetch_too_large", f"the page is over {max_bytes} bytes")
                chunks.append(chunk)
            return Fetched(url=url, body=b"".join(chunks), headers=dict(response.headers))
    raise FetchError(502, "fetch_failed", f"more than {MAX_FETCH_REDIRECTS} redirects")
