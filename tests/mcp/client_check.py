#!/usr/bin/env python3
"""Checks the example MCP server with the official Python MCP SDK, a client nobody here wrote.

Usage (from the repository root):

    python3 -m pip install "mcp>=1.12"
    python3 tests/mcp/client_check.py

The server is launched through the SDK's stdio client: `cargo run -q --example mcp_server --features mcp`,
or the binary named by MCP_SERVER_BIN (as `cargo test --test mcp` does). The expected input
schemas are read from tests/mcp/expected_schemas.json (`cargo test` checks that file against
the Rust types), or from the file MCP_EXPECTED_SCHEMAS names.

It checks, through the SDK's own parsing and output-schema validation of every message:
- tools/list: both tools, over more than one page (the example serves one tool per page), each
  inputSchema equal to the canonical schema, an object outputSchema, and annotations matching
  the declared effects; an invalid cursor is a JSON-RPC error -32602;
- every result: its structuredContent, when there is one, matches the tool's outputSchema, and an
  error result has none;
- a valid call: structuredContent, and a text block holding the same JSON;
- an invalid call: isError, one text line per violation with its field path, the code in _meta;
- a handler's refusal: isError with the handler's public message;
- an unknown tool: a JSON-RPC error -32602 "Unknown tool";
- arguments over the server's 8 KiB input cap: isError with code input_too_large.

With --probe it only imports the SDK and checks its version. Exits 0 when every check passes,
1 listing the failed checks, 2 when the SDK is missing or older than 1.12.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from sdk_checks import INSTALL, Checks, gate, sdk_version

try:
    import anyio
    import jsonschema
    from mcp import ClientSession, StdioServerParameters
    from mcp import types
    from mcp.client.stdio import stdio_client
except ImportError as error:  # pragma: no cover - depends on the environment
    print(f"client_check: the MCP Python SDK could not be imported ({error}); run: {INSTALL}", file=sys.stderr)
    sys.exit(2)


gate("client_check")

REPO = Path(__file__).resolve().parents[2]

EXPECTED_ANNOTATIONS = {
    # Effect::ReadOnly
    "get_weather": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    # Effect::NonIdempotent
    "create_invoice": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
}

INVALID_PARAMS = -32602
# Where the server puts a refusal's stable code.
ERROR_META = "tool-core/error"


def wire(model: Any) -> dict[str, Any]:
    """A result as it was on the wire (camelCase keys), whatever the SDK's version names fields."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def server_parameters() -> StdioServerParameters:
    binary = os.environ.get("MCP_SERVER_BIN")
    if binary:
        command, args = binary, []
    else:
        command, args = "cargo", ["run", "-q", "--example", "mcp_server", "--features", "mcp"]
    return StdioServerParameters(command=command, args=args, env=dict(os.environ), cwd=str(REPO))


def expected_schemas() -> dict[str, Any]:
    path = os.environ.get("MCP_EXPECTED_SCHEMAS") or Path(__file__).with_name("expected_schemas.json")
    with open(path, encoding="utf-8") as file:
        return json.load(file)


async def list_page(session: ClientSession, cursor: str | None) -> dict[str, Any]:
    if cursor is None:
        return wire(await session.list_tools())
    params_type = getattr(types, "PaginatedRequestParams", None)
    if params_type is None:
        # mcp 1.9's list_tools sends the cursor outside `params`, where servers do not look.
        raise RuntimeError("this version of the mcp package cannot send a tools/list cursor; "
                           'upgrade it: python3 -m pip install -U "mcp>=1.12"')
    try:
        result = await session.list_tools(params=params_type(cursor=cursor))
    except TypeError:  # older 1.x versions take only the cursor
        result = await session.list_tools(cursor=cursor)
    return wire(result)


async def rpc_error(call: Any) -> tuple[int | None, str]:
    """The JSON-RPC error code and message a request ends with; (None, result) if it succeeded."""
    try:
        result = await call
    except Exception as error:  # McpError (1.x) and MCPError (2.x) both carry `.error`
        data = getattr(error, "error", None)
        if data is None:
            return None, f"{type(error).__name__}: {error}"
        return data.code, data.message
    return None, json.dumps(wire(result))


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []) if block.get("type") == "text")


async def run(checks: Checks) -> None:
    async with stdio_client(server_parameters()) as (read, write):
        async with ClientSession(read, write) as session:
            init = wire(await session.initialize())
            checks.check(init.get("serverInfo", {}).get("name") == "tool-core-example",
                         "initialize names the example server", init.get("serverInfo"))
            checks.check("tools" in init.get("capabilities", {}), "the server declares the tools capability")

            # tools/list, every page.
            tools: list[dict[str, Any]] = []
            pages, cursor = 0, None
            while True:
                page = await list_page(session, cursor)
                pages += 1
                tools.extend(page.get("tools", []))
                cursor = page.get("nextCursor")
                if cursor is None or pages > 10:
                    break
            names = [tool["name"] for tool in tools]
            checks.check(names == ["get_weather", "create_invoice"], "tools/list lists both tools in order", names)
            checks.check(pages >= 2, "tools/list is paginated through nextCursor", f"{pages} page(s)")
            by_name = {tool["name"]: tool for tool in tools}
            for name, schema in expected_schemas().items():
                tool = by_name.get(name, {})
                checks.check(tool.get("inputSchema") == schema, f"{name}: inputSchema is the canonical schema",
                             json.dumps(tool.get("inputSchema"), sort_keys=True))
                output = tool.get("outputSchema")
                checks.check(isinstance(output, dict) and output.get("type") == "object",
                             f"{name}: outputSchema is an object schema", output)
                annotations = tool.get("annotations", {})
                expected = EXPECTED_ANNOTATIONS[name]
                checks.check(all(annotations.get(k) == v for k, v in expected.items()),
                             f"{name}: annotations {expected}", annotations)

            code, message = await rpc_error(list_page(session, "not-a-cursor"))
            checks.check(code == INVALID_PARAMS, "an invalid cursor is JSON-RPC error -32602", (code, message))

            output_schemas = {tool["name"]: tool["outputSchema"] for tool in tools if "outputSchema" in tool}

            async def call(what: str, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
                """A tools/call through the SDK, whose result must match the tool's outputSchema."""
                try:
                    result = wire(await session.call_tool(name, arguments))
                except Exception as error:  # the SDK refused the result
                    checks.check(False, f"{what}: the SDK accepts the result", f"{type(error).__name__}: {error}")
                    return {}
                checks.check(True, f"{what}: the SDK accepts the result")
                schema = output_schemas.get(name)
                structured = result.get("structuredContent")
                if schema is not None and structured is not None:
                    problem = jsonschema.exceptions.best_match(
                        jsonschema.validators.validator_for(schema)(schema).iter_errors(structured))
                    checks.check(problem is None, f"{what}: structuredContent matches the outputSchema",
                                 problem and problem.message)
                if schema is not None and result.get("isError") is True:
                    checks.check(structured is None, f"{what}: an error result has no structuredContent", structured)
                return result

            def error_code(result: dict[str, Any]) -> Any:
                return (result.get("_meta") or {}).get(ERROR_META, {}).get("code")

            # A valid call.
            result = await call("get_weather", "get_weather", {"city": "Paris", "units": "celsius"})
            structured = result.get("structuredContent")
            checks.check(result.get("isError") is not True, "get_weather: a valid call is not an error", result)
            checks.check(isinstance(structured, dict) and structured.get("city") == "Paris"
                         and structured.get("units") == "celsius"
                         and isinstance(structured.get("temperature"), (int, float)),
                         "get_weather: structuredContent holds the report", structured)
            try:
                text_json = json.loads(text_of(result))
            except ValueError:
                text_json = None
            checks.check(text_json == structured, "get_weather: the text block is the same JSON", text_of(result))

            result = await call("create_invoice", "create_invoice",
                                {"customerId": "cus_42", "amount": 120.5, "currency": "EUR"})
            invoice = result.get("structuredContent") or {}
            checks.check(result.get("isError") is not True and str(invoice.get("invoiceId", "")).startswith("inv_")
                         and invoice.get("amount") == 120.5,
                         "create_invoice: a valid call returns the invoice", result)

            # Invalid calls: every violation, each on its own line with its field path.
            result = await call("invalid create_invoice", "create_invoice",
                                {"customerId": "cus_42", "amount": "120.5", "currency": "dollars"})
            lines = text_of(result).split("\n")
            checks.check(result.get("isError") is True, "invalid create_invoice: isError is true", result)
            checks.check(len(lines) == 2 and lines[0].startswith("- /amount: ") and lines[1].startswith("- /currency: "),
                         "invalid create_invoice: one text line per violation, /amount then /currency", lines)
            checks.check(error_code(result) == "invalid_arguments",
                         "invalid create_invoice: _meta carries the code invalid_arguments", result.get("_meta"))

            result = await call("get_weather without arguments", "get_weather", None)
            lines = text_of(result).split("\n")
            checks.check(result.get("isError") is True and len(lines) == 2 and lines[0].startswith("- /city: ")
                         and lines[1].startswith("- /units: "),
                         "get_weather without arguments: isError naming /city and /units", result)

            # The handler refuses: its public message reaches the client.
            result = await call("refused create_invoice", "create_invoice",
                                {"customerId": "cus_closed", "amount": 10, "currency": "USD"})
            checks.check(result.get("isError") is True and "that customer account is closed" in text_of(result)
                         and error_code(result) == "execution_failed",
                         "a handler's refusal: isError with its public message", result)

            # An unknown tool: a protocol error.
            code, message = await rpc_error(session.call_tool("no_such_tool", {}))
            checks.check(code == INVALID_PARAMS and "Unknown tool" in message,
                         "an unknown tool is JSON-RPC error -32602 Unknown tool", (code, message))

            # Over the input cap: a tool error the model can fix by sending less.
            result = await call("oversized get_weather", "get_weather", {"city": "x" * 10_000, "units": "celsius"})
            checks.check(result.get("isError") is True and error_code(result) == "input_too_large"
                         and "8192 bytes" in text_of(result),
                         "arguments over the 8 KiB cap: isError with input_too_large", result)


def main() -> int:
    checks = Checks()
    timeout = float(os.environ.get("MCP_CHECK_TIMEOUT", "900"))

    async def bounded() -> None:
        with anyio.fail_after(timeout):
            await run(checks)

    try:
        anyio.run(bounded)
    except Exception as error:  # a crash is a failed check too, with its reason
        # anyio wraps what went wrong inside its task groups; name the innermost errors.
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        reason = f"the session ended early: {type(error).__name__}: {error}"
        checks.failures.append(reason)
        print(f"FAIL {reason}")
    if checks.failures:
        print(f"client_check: {len(checks.failures)} check(s) failed:", file=sys.stderr)
        for failure in checks.failures:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print(f"client_check: mcp {sdk_version()}")
    print("client_check: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
