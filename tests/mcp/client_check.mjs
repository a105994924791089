#!/usr/bin/env node
// Checks the example MCP server with the official TypeScript MCP SDK (@modelcontextprotocol/sdk),
// a client nobody here wrote, as client_check.py does with the Python SDK.
//
// Usage (from the repository root; node 18 or newer):
//
//     npm ci --prefix tests/mcp
//     node tests/mcp/client_check.mjs
//
// The server is launched through the SDK's stdio transport: `cargo run -q --example mcp_server --features mcp`,
// or the binary named by MCP_SERVER_BIN (as `cargo test --test mcp` does). The expected input
// schemas are read from tests/mcp/expected_schemas.json (`cargo test` checks that file against
// the Rust types), or from the file MCP_EXPECTED_SCHEMAS names.
//
// Every call goes through the SDK's own `Client.callTool`, which refuses a result whose
// structuredContent does not match the tool's outputSchema. That client only remembers the output
// schemas of the last tools/list page it fetched, so every result is also checked here against
// the advertised outputSchema with the SDK's own validator, whichever page the tool was on.
//
// It checks:
// - tools/list: both tools, over more than one page, each inputSchema equal to the canonical
//   schema, an object outputSchema, annotations matching the declared effects; an invalid cursor
//   is a JSON-RPC error -32602;
// - valid calls: structuredContent that matches the outputSchema, and a text block holding the
//   same JSON;
// - invalid calls (create_invoice has an outputSchema): accepted by the SDK, isError, one text line
//   per violation, no structuredContent, and the code in _meta;
// - a handler's refusal: isError with the handler's public message;
// - an unknown tool: a JSON-RPC error -32602 "Unknown tool";
// - arguments over the server's 8 KiB input cap: isError with code input_too_large.
//
// With --probe it only loads the SDK. Exits 0 when every check passes, 1 listing the failed
// checks, 2 when the SDK is missing.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { INSTALL, Checks, sdkVersion } from './sdk_checks.mjs';

let sdk;
try {
    const [client, stdio, types, ajv] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/stdio.js'),
        import('@modelcontextprotocol/sdk/types.js'),
        import('@modelcontextprotocol/sdk/validation/ajv'),
    ]);
    sdk = {
        Client: client.Client,
        StdioClientTransport: stdio.StdioClientTransport,
        McpError: types.McpError,
        Validator: ajv.AjvJsonSchemaValidator,
    };
} catch (error) {
    console.error(`client_check: the MCP TypeScript SDK could not be loaded (${error.message}); run: ${INSTALL}`);
    process.exit(2);
}

const HERE = new URL('.', import.meta.url);
const REPO = fileURLToPath(new URL('../../', HERE));

if (process.argv.includes('--probe')) {
    console.log(`client_check: @modelcontextprotocol/sdk ${sdkVersion()} loads`);
    process.exit(0);
}

const EXPECTED_ANNOTATIONS = {
    // Effect::ReadOnly
    get_weather: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    // Effect::NonIdempotent
    create_invoice: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
};

const INVALID_PARAMS = -32602;
/** Where the server puts a refusal's stable code. */
const ERROR_META = 'tool-core/error';

function serverParameters() {
    const binary = process.env.MCP_SERVER_BIN;
    const [command, args] = binary ? [binary, []] : ['cargo', ['run', '-q', '--example', 'mcp_server', '--features', 'mcp']];
    return { command, args, env: { ...process.env }, cwd: REPO, stderr: 'inherit' };
}

function expectedSchemas() {
    const path = process.env.MCP_EXPECTED_SCHEMAS || fileURLToPath(new URL('expected_schemas.json', HERE));
    return JSON.parse(readFileSync(path, 'utf8'));
}

/** Deep equality of JSON values, key order aside. */
function sameJson(a, b) {
    if (Array.isArray(a) || Array.isArray(b)) {
        return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
    }
    if (a && b && typeof a === 'object' && typeof b === 'object') {
        const keys = Object.keys(a);
        return keys.length === Object.keys(b).length && keys.every(k => k in b && sameJson(a[k], b[k]));
    }
    return a === b;
}

function textOf(result) {
    return (result.content ?? []).filter(block => block.type === 'text').map(block => block.text).join('\n');
}

/** The JSON-RPC error code and message a request ends with; [null, result] if it succeeded. */
async function rpcError(request) {
    try {
        return [null, JSON.stringify(await request)];
    } catch (error) {
        return error instanceof sdk.McpError ? [error.code, error.message] : [null, String(error)];
    }
}

async function run(checks, timeout) {
    const client = new sdk.Client({ name: 'tool-core-client-check', version: '0' });
    const transport = new sdk.StdioClientTransport(serverParameters());
    const options = { timeout };
    await client.connect(transport, options);
    try {
        await checkSession(client, checks, options);
    } finally {
        await client.close();
    }
}

async function checkSession(client, checks, options) {
    const info = client.getServerVersion();
    checks.check(info?.name === 'tool-core-example', 'initialize names the example server', info);
    checks.check(client.getServerCapabilities()?.tools !== undefined, 'the server declares the tools capability');

    // tools/list, every page.
    const tools = [];
    let pages = 0;
    let cursor;
    do {
        const page = await client.listTools(cursor === undefined ? undefined : { cursor }, options);
        pages += 1;
        tools.push(...page.tools);
        cursor = page.nextCursor;
    } while (cursor !== undefined && pages <= 10);
    const names = tools.map(tool => tool.name);
    checks.check(sameJson(names, ['get_weather', 'create_invoice']), 'tools/list lists both tools in order', names);
    checks.check(pages >= 2, 'tools/list is paginated through nextCursor', `${pages} page(s)`);
    const byName = Object.fromEntries(tools.map(tool => [tool.name, tool]));
    for (const [name, schema] of Object.entries(expectedSchemas())) {
        const tool = byName[name] ?? {};
        checks.check(sameJson(tool.inputSchema, schema), `${name}: inputSchema is the canonical schema`, tool.inputSchema);
        checks.check(tool.outputSchema?.type === 'object', `${name}: outputSchema is an object schema`, tool.outputSchema);
        const expected = EXPECTED_ANNOTATIONS[name];
        const annotations = tool.annotations ?? {};
        checks.check(
            Object.entries(expected).every(([key, value]) => annotations[key] === value),
            `${name}: annotations ${JSON.stringify(expected)}`,
            annotations,
        );
    }

    const [code, message] = await rpcError(client.listTools({ cursor: 'not-a-cursor' }, options));
    checks.check(code === INVALID_PARAMS, 'an invalid cursor is JSON-RPC error -32602', [code, message]);

    const validator = new sdk.Validator();
    const outputValidators = Object.fromEntries(
        tools.filter(tool => tool.outputSchema).map(tool => [tool.name, validator.getValidator(tool.outputSchema)]),
    );

    /** A tools/call through the SDK, whose result must be one the SDK and the outputSchema accept. */
    async function call(what, name, args) {
        let result;
        try {
            result = await client.callTool(args === undefined ? { name } : { name, arguments: args }, undefined, options);
        } catch (error) {
            checks.check(false, `${what}: the SDK accepts the result`, String(error));
            return {};
        }
        checks.check(true, `${what}: the SDK accepts the result`);
        const conforms = outputValidators[name];
        if (conforms && result.structuredContent !== undefined) {
            const verdict = conforms(result.structuredContent);
            checks.check(verdict.valid, `${what}: structuredContent matches the outputSchema`, verdict.errorMessage);
        }
        if (conforms && result.isError) {
            checks.check(result.structuredContent === undefined, `${what}: an error result has no structuredContent`,
                result.structuredContent);
        }
        return result;
    }

    // Valid calls.
    let result = await call('get_weather', 'get_weather', { city: 'Paris', units: 'celsius' });
    const report = result.structuredContent;
    checks.check(result.isError !== true, 'get_weather: a valid call is not an error', result);
    checks.check(report?.city === 'Paris' && report?.units === 'celsius' && typeof report?.temperature === 'number',
        'get_weather: structuredContent holds the report', report);
    let textJson;
    try {
        textJson = JSON.parse(textOf(result));
    } catch {
        textJson = undefined;
    }
    checks.check(sameJson(textJson, report), 'get_weather: the text block is the same JSON', textOf(result));

    result = await call('create_invoice', 'create_invoice', { customerId: 'cus_42', amount: 120.5, currency: 'EUR' });
    const invoice = result.structuredContent ?? {};
    checks.check(result.isError !== true && String(invoice.invoiceId ?? '').startsWith('inv_') && invoice.amount === 120.5,
        'create_invoice: a valid call returns the invoice', result);

    // Invalid calls: every violation, each on its own line with its field path.
    result = await call('invalid create_invoice', 'create_invoice',
        { customerId: 'cus_42', amount: '120.5', currency: 'dollars' });
    let lines = textOf(result).split('\n');
    checks.check(result.isError === true, 'invalid create_invoice: isError is true', result);
    checks.check(lines.length === 2 && lines[0].startsWith('- /amount: ') && lines[1].startsWith('- /currency: '),
        'invalid create_invoice: one text line per violation, /amount then /currency', lines);
    checks.check(result._meta?.[ERROR_META]?.code === 'invalid_arguments',
        'invalid create_invoice: _meta carries the code invalid_arguments', result._meta);

    result = await call('get_weather without arguments', 'get_weather');
    lines = textOf(result).split('\n');
    checks.check(result.isError === true && lines.length === 2 && lines[0].startsWith('- /city: ')
        && lines[1].startsWith('- /units: '),
    'get_weather without arguments: isError naming /city and /units', result);

    // The handler refuses: its public message reaches the client.
    result = await call('refused create_invoice', 'create_invoice',
        { customerId: 'cus_closed', amount: 10, currency: 'USD' });
    checks.check(result.isError === true && textOf(result).includes('that customer account is closed')
        && result._meta?.[ERROR_META]?.code === 'execution_failed',
    "a handler's refusal: isError with its public message", result);

    // An unknown tool: a protocol error.
    const [unknownCode, unknownMessage] = await rpcError(client.callTool({ name: 'no_such_tool', arguments: {} }));
    checks.check(unknownCode === INVALID_PARAMS && unknownMessage.includes('Unknown tool'),
        'an unknown tool is JSON-RPC error -32602 Unknown tool', [unknownCode, unknownMessage]);

    // Over the input cap: a tool error the model can fix by sending less.
    result = await call('oversized get_weather', 'get_weather', { city: 'x'.repeat(10_000), units: 'celsius' });
    checks.check(result.isError === true && result._meta?.[ERROR_META]?.code === 'input_too_large'
        && textOf(result).includes('8192 bytes'),
    'arguments over the 8 KiB cap: isError with input_too_large', result);
}

async function main() {
    const checks = new Checks();
    const timeout = 1000 * Number(process.env.MCP_CHECK_TIMEOUT || 900);
    let timer;
    const expired = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no end after ${timeout / 1000}s`)), timeout);
    });
    try {
        await Promise.race([run(checks, timeout), expired]);
    } catch (error) {
        // A crash is a failed check too, with its reason.
        const reason = `the session ended early: ${error}`;
        checks.failures.push(reason);
        console.log(`FAIL ${reason}`);
    } finally {
        clearTimeout(timer);
    }
    console.log(`client_check: @modelcontextprotocol/sdk ${sdkVersion()}`);
    if (checks.failures.length > 0) {
        console.error(`client_check: ${checks.failures.length} check(s) failed:`);
        for (const failure of checks.failures) {
            console.error(`  - ${failure}`);
        }
        return 1;
    }
    console.log('client_check: all checks passed');
    return 0;
}

process.exit(await main());
