#!/usr/bin/env python3
"""Checks an MCP server on Streamable HTTP with bearer tokens, through the official Python MCP SDK's
Streamable HTTP client.

Usage (from the repository root), against the example server:

    python3 -m pip install "mcp>=1.12"
    cargo run --example mcp_http_server --features mcp-http &
    MCP_HTTP_URL=http://127.0.0.1:8080/mcp MCP_TOKEN=demo-token-alice \\
        MCP_OTHER_TENANT_TOKEN=demo-token-bob python3 tests/mcp/http_client_check.py

`cargo test --test mcp_http` runs it against a server of its own. Environment:
- MCP_HTTP_URL: the endpoint; MCP_TOKEN: a valid token;
- MCP_OTHER_TENANT_TOKEN: a valid token of another principal or tenant;
- MCP_EXPIRED_TOKEN (optional): a token the server refuses as expired;
- MCP_ALLOWED_ORIGIN (optional), MCP_FOREIGN_ORIGIN (default https://evil.example);
- MCP_EXPECTED_CALLER (optional): the JSON `probe` answers with for MCP_TOKEN, when the server
  has that tool;
- MCP_AUTHORIZATION_SERVER (optional): an issuer the server's protected-resource metadata lists.

It checks:
- with the token: initialize, tools/list, a get_weather call whose structuredContent is the
  report, and, when served, a `probe` call answering with the token's principal and tenant;
- where the SDK has `mcp.Client` (SDK 2), the same through it as a user writes it, with its
  default connect mode (which asks `server/discover` first and falls back to `initialize`
  where the server serves sessions): tools/list and a get_weather call, in a session;
- without a token, with a malformed one, an unknown one and an expired one: the SDK fails, and the
  server answered 401;
- with another tenant's token in the session the first token opened: the call fails with a 403, and,
  where the SDK keeps the connection after a refused request (SDK 2 does, 1.x ends it), the session
  goes on working with its own token;
- from a foreign Origin: the SDK fails, and the server answered 403; from the allowed one it works;
- with MCP_AUTHORIZATION_SERVER, where the SDK has its OAuth helpers (SDK 2): a 401's challenge
  names the protected-resource metadata (RFC 9728), which the SDK's own model accepts, with the
  endpoint as its resource and the issuer among its authorization servers.

With --probe it only imports the SDK and checks its version. Exits 0 when every check passes,
1 listing the failed checks, 2 when the SDK is missing or older than 1.12.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from datetime import timedelta
from typing import Any, AsyncIterator

from sdk_checks import INSTALL, Checks, gate, sdk_version

try:
    import anyio
    import mcp
    from mcp import ClientSession
    from mcp.client import streamable_http
except ImportError as error:  # pragma: no cover - depends on the environment
    print(f"http_client_check: the MCP Python SDK could not be imported ({error}); run: {INSTALL}",
          file=sys.stderr)
    sys.exit(2)


gate("http_client_check")


class Connection:
    """One SDK session over Streamable HTTP, and the HTTP statuses its client received."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.client: Any = None
        self.session: Any = None

    async def record(self, response: Any) -> None:
        self.statuses.append(response.status_code)


# Later SDKs take the HTTP client from the caller (`streamable_http_client`); earlier ones build it
# (`streamablehttp_client`).
CALLER_BRINGS_CLIENT = hasattr(streamable_http, "streamable_http_client")


def session_of(read: Any, write: Any) -> Any:
    # Early SDKs wait for a reply that never comes when the transport fails; a read timeout
    # turns that into an error. Later ones fail at once.
    if CALLER_BRINGS_CLIENT:
        return ClientSession(read, write)
    return ClientSession(read, write, read_timeout_seconds=timedelta(seconds=15))


@contextlib.asynccontextmanager
async def connect(url: str, headers: dict[str, str],
                  connection: Connection | None = None) -> AsyncIterator[Connection]:
    """An initialized session; the headers go with every request."""
    connection = connection or Connection()
    hooks = {"request": [], "response": [connection.record]}
    if CALLER_BRINGS_CLIENT:
        # The SDK takes the HTTP client from the caller.
        client = streamable_http.create_mcp_http_client(headers=headers)
        client.event_hooks = hooks
        connection.client = client
        async with client:
            async with streamable_http.streamable_http_client(url, http_client=client) as streams:
                async with session_of(streams[0], streams[1]) as session:
                    connection.session = session
                    await session.initialize()
                    yield connection
    else:
        import httpx

        def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> Any:
            client = httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth,
                                       event_hooks=hooks, follow_redirects=True)
            connection.client = client
            return client

        async with streamable_http.streamablehttp_client(url, headers=headers,
                                                         httpx_client_factory=factory) as streams:
            async with session_of(streams[0], streams[1]) as session:
                connection.session = session
                await session.initialize()
                yield connection


async def default_client(checks: Checks, url: str, headers: dict[str, str]) -> None:
    """`mcp.Client` with its default connect mode: tools/list and a call work."""
    if not hasattr(mcp, "Client"):
        print(f"note mcp {sdk_version()} has no mcp.Client: its default client is not checked")
        return
    connection = Connection()
    client = streamable_http.create_mcp_http_client(headers=headers)
    client.event_hooks = {"request": [], "response": [connection.record]}
    outcome: Any = None
    result: Any = None
    try:
        async with client:
            async with mcp.Client(streamable_http.streamable_http_client(url, http_client=client)) as session:
                outcome = [tool.name for tool in (await session.list_tools()).tools]
                result = wire(await session.call_tool("get_weather", {"city": "Lima", "units": "celsius"}))
    except Exception as error:  # noqa: BLE001 - report what the SDK raised
        outcome = error
    checks.check(isinstance(outcome, list) and "get_weather" in outcome,
                 "mcp.Client's default mode: tools/list", outcome)
    checks.check(isinstance(result, dict) and result.get("structuredContent", {}).get("city") == "Lima",
                 "mcp.Client's default mode: get_weather answers with its report", result)


async def metadata(checks: Checks, url: str) -> None:
    """A 401 names the protected-resource metadata, which the SDK's OAuth discovery reads."""
    issuer = os.environ.get("MCP_AUTHORIZATION_SERVER")
    if issuer is None:
        return
    try:
        from mcp.client.auth.utils import extract_resource_metadata_from_www_auth
        from mcp.shared.auth import ProtectedResourceMetadata
    except ImportError:
        print(f"note mcp {sdk_version()} has no OAuth helpers: the metadata is not checked")
        return
    if not CALLER_BRINGS_CLIENT:
        print(f"note mcp {sdk_version()} builds its own HTTP client: the metadata is not checked")
        return
    ping = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    async with streamable_http.create_mcp_http_client() as client:
        response = await client.post(url, json=ping, headers={"Accept": "application/json, text/event-stream"})
        where = extract_resource_metadata_from_www_auth(response)
        checks.check(response.status_code == 401 and where is not None,
                     "a 401 names the protected-resource metadata", response.headers.get("www-authenticate"))
        if where is None:
            return
        document = await client.get(where)
    found: Any
    try:
        found = ProtectedResourceMetadata.model_validate_json(document.content)
    except Exception as error:  # noqa: BLE001 - report what the SDK refused
        found = error
    strip = lambda text: str(text).rstrip("/")  # noqa: E731
    checks.check(isinstance(found, ProtectedResourceMetadata) and strip(found.resource) == strip(url)
                 and strip(issuer) in [strip(server) for server in found.authorization_servers],
                 "the SDK reads the protected-resource metadata", found)


def wire(model: Any) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def refused(checks: Checks, url: str, headers: dict[str, str], status: int, what: str) -> None:
    """Opening a session and listing tools with `headers` fails, the server having said `status`."""
    connection = Connection()
    outcome: Any = None
    try:
        async with connect(url, headers, connection):
            outcome = wire(await connection.session.list_tools())
    except Exception as error:  # noqa: BLE001 - the SDK's error type differs between versions
        outcome = error
    statuses = connection.statuses
    checks.check(isinstance(outcome, Exception), f"{what}: the SDK fails", outcome)
    checks.check(status in statuses, f"{what}: the server answered {status}", statuses)


async def run(checks: Checks) -> None:
    url = os.environ["MCP_HTTP_URL"]
    token = os.environ["MCP_TOKEN"]
    other = os.environ["MCP_OTHER_TENANT_TOKEN"]
    bearer = {"Authorization": f"Bearer {token}"}

    async with connect(url, dict(bearer)) as connection:
        session = connection.session
        names = [tool.name for tool in (await session.list_tools()).tools]
        checks.check({"get_weather", "create_invoice"} <= set(names), "tools/list with the token", names)
        result = wire(await session.call_tool("get_weather", {"city": "Paris", "units": "celsius"}))
        checks.check(not result.get("isError") and result.get("structuredContent", {}).get("city") == "Paris",
                     "get_weather answers with its report", result)
        if "probe" in names:
            result = wire(await session.call_tool("probe", {}))
            expected = json.loads(os.environ.get("MCP_EXPECTED_CALLER", "null"))
            checks.check(expected is None or result.get("structuredContent") == expected,
                         "the call runs with the token's principal and tenant", result)

    await default_client(checks, url, dict(bearer))

    # The same session with another tenant's token: refused, and nothing runs.
    tool, arguments = ("probe", {}) if "probe" in names else ("get_weather", {"city": "Oslo", "units": "celsius"})
    connection = Connection()
    outcome: Any = None
    went_on: Any = None
    before = 0
    try:
        async with connect(url, dict(bearer), connection):
            connection.client.headers["Authorization"] = f"Bearer {other}"
            before = len(connection.statuses)
            try:
                outcome = wire(await connection.session.call_tool(tool, arguments))
            except Exception as error:  # noqa: BLE001 - the SDK's error type differs between versions
                outcome = error
            connection.client.headers["Authorization"] = f"Bearer {token}"
            went_on = wire(await connection.session.call_tool("get_weather", {"city": "Rome", "units": "celsius"}))
    except Exception as error:  # noqa: BLE001 - SDK 1.x ends the whole connection on an HTTP error
        if outcome is None:
            outcome = error
        print(f"note the SDK closed the connection on the refusal: {error!r}")
    failed = isinstance(outcome, Exception) or bool(outcome and outcome.get("isError"))
    checks.check(failed, "another tenant's token in the session: the call fails", outcome)
    checks.check(403 in connection.statuses[before:], "another tenant's token: the server answered 403",
                 connection.statuses[before:])
    if went_on is not None:
        # The SDK failed only the refused request: the session goes on with its own token.
        checks.check(went_on.get("structuredContent", {}).get("city") == "Rome",
                     "the session goes on with its own token", went_on)

    await metadata(checks, url)
    await refused(checks, url, {}, 401, "no token")
    await refused(checks, url, {"Authorization": "Bearer not a token"}, 401, "a malformed token")
    await refused(checks, url, {"Authorization": "Bearer unknown-token-0000"}, 401, "an unknown token")
    if "MCP_EXPIRED_TOKEN" in os.environ:
        expired = {"Authorization": f"Bearer {os.environ['MCP_EXPIRED_TOKEN']}"}
        await refused(checks, url, expired, 401, "an expired token")
    foreign = os.environ.get("MCP_FOREIGN_ORIGIN", "https://evil.example")
    await refused(checks, url, {**bearer, "Origin": foreign}, 403, "a foreign Origin")
    if "MCP_ALLOWED_ORIGIN" in os.environ:
        async with connect(url, {**bearer, "Origin": os.environ["MCP_ALLOWED_ORIGIN"]}) as connection:
            names = [tool.name for tool in (await connection.session.list_tools()).tools]
            checks.check("get_weather" in names, "the allowed Origin is served", names)


def main() -> int:
    checks = Checks()
    timeout = float(os.environ.get("MCP_CHECK_TIMEOUT", "60"))

    async def bounded() -> None:
        with anyio.fail_after(timeout):
            await run(checks)

    try:
        anyio.run(bounded)
    except BaseException as error:  # noqa: BLE001 - report, then fail
        print(f"FAIL the check did not finish: {error!r}")
        checks.failures.append("the check finished")
    print(f"http_client_check: mcp {sdk_version()}")
    if checks.failures:
        print("http_client_check: failed: " + "; ".join(checks.failures))
        return 1
    print("http_client_check: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
