#!/usr/bin/env node
// Checks an MCP server on Streamable HTTP with bearer tokens, through the official TypeScript MCP
// SDK's Streamable HTTP client: the same checks as http_client_check.py, with the other official
// client.
//
// Usage (from the repository root), against the example server:
//
//     npm ci --prefix tests/mcp
//     cargo run --example mcp_http_server --features mcp-http &
//     MCP_HTTP_URL=http://127.0.0.1:8080/mcp MCP_TOKEN=demo-token-alice \
//         MCP_OTHER_TENANT_TOKEN=demo-token-bob node tests/mcp/http_client_check.mjs
//
// `cargo test --test mcp_http` runs it against a server of its own. Environment: as for
// http_client_check.py (MCP_HTTP_URL, MCP_TOKEN, MCP_OTHER_TENANT_TOKEN, MCP_EXPIRED_TOKEN,
// MCP_ALLOWED_ORIGIN, MCP_FOREIGN_ORIGIN, MCP_EXPECTED_CALLER, MCP_AUTHORIZATION_SERVER).
//
// With --probe it only loads the SDK. Exits 0 when every check passes, 1 listing the failed
// checks, 2 when the SDK is missing.

import { INSTALL, Checks, sdkVersion } from './sdk_checks.mjs';

let sdk;
try {
    const [client, http] = await Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    sdk = { Client: client.Client, Transport: http.StreamableHTTPClientTransport };
} catch (error) {
    console.error(`http_client_check: the MCP TypeScript SDK could not be loaded (${error.message}); run: ${INSTALL}`);
    process.exit(2);
}

if (process.argv.includes('--probe')) {
    console.log(`http_client_check: @modelcontextprotocol/sdk ${sdkVersion()} loads`);
    process.exit(0);
}

/**
 * An SDK client over Streamable HTTP whose requests carry `headers` (which may change between
 * requests), and the HTTP statuses it received.
 */
async function connect(url, headers) {
    const connection = { statuses: [], headers, client: undefined };
    const fetchRecording = async (target, init = {}) => {
        const merged = new Headers(init.headers);
        for (const [name, value] of Object.entries(connection.headers)) {
            merged.set(name, value);
        }
        const response = await fetch(target, { ...init, headers: merged });
        connection.statuses.push(response.status);
        return response;
    };
    const transport = new sdk.Transport(new URL(url), { fetch: fetchRecording });
    const client = new sdk.Client({ name: 'tool-core-http-client-check', version: '0' });
    connection.client = client;
    try {
        await client.connect(transport);
    } catch (error) {
        connection.error = error;
    }
    return connection;
}

async function refused(checks, url, headers, status, what) {
    const connection = await connect(url, headers);
    let outcome = connection.error;
    if (outcome === undefined) {
        try {
            outcome = await connection.client.listTools();
        } catch (error) {
            outcome = error;
        }
    }
    checks.check(outcome instanceof Error, `${what}: the SDK fails`, outcome);
    checks.check(connection.statuses.includes(status), `${what}: the server answered ${status}`, connection.statuses);
    await connection.client.close().catch(() => {});
}

/**
 * A 401's challenge names the protected-resource metadata (RFC 9728), which the SDK's OAuth
 * discovery reads: its resource is the endpoint and it lists MCP_AUTHORIZATION_SERVER.
 */
async function metadata(checks, url) {
    const issuer = process.env.MCP_AUTHORIZATION_SERVER;
    if (!issuer) {
        return;
    }
    const auth = await import('@modelcontextprotocol/sdk/client/auth.js');
    const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
    });
    await response.body?.cancel();
    const { resourceMetadataUrl } = auth.extractWWWAuthenticateParams(response);
    checks.check(response.status === 401 && resourceMetadataUrl !== undefined,
        'a 401 names the protected-resource metadata', response.headers.get('www-authenticate'));
    let found;
    try {
        found = await auth.discoverOAuthProtectedResourceMetadata(url, { resourceMetadataUrl });
    } catch (error) {
        found = error;
    }
    const strip = (text) => String(text).replace(/\/$/, '');
    checks.check(strip(found?.resource) === strip(url)
        && (found?.authorization_servers ?? []).map(strip).includes(strip(issuer)),
        'the SDK reads the protected-resource metadata', found);
}

async function run(checks) {
    const url = process.env.MCP_HTTP_URL;
    const token = process.env.MCP_TOKEN;
    const other = process.env.MCP_OTHER_TENANT_TOKEN;
    const bearer = { authorization: `Bearer ${token}` };

    const connection = await connect(url, { ...bearer });
    if (!checks.check(connection.error === undefined, 'initialize with the token', connection.error)) {
        return;
    }
    const client = connection.client;
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    checks.check(names.includes('get_weather') && names.includes('create_invoice'), 'tools/list with the token', names);
    let result = await client.callTool({ name: 'get_weather', arguments: { city: 'Paris', units: 'celsius' } });
    checks.check(!result.isError && result.structuredContent?.city === 'Paris', 'get_weather answers with its report', result);
    if (names.includes('probe')) {
        result = await client.callTool({ name: 'probe', arguments: {} });
        const expected = JSON.parse(process.env.MCP_EXPECTED_CALLER ?? 'null');
        checks.check(expected === null || JSON.stringify(result.structuredContent) === JSON.stringify(expected),
            "the call runs with the token's principal and tenant", result);
    }

    // The same session with another tenant's token: refused, and nothing runs.
    connection.headers.authorization = `Bearer ${other}`;
    const before = connection.statuses.length;
    const [tool, args] = names.includes('probe') ? ['probe', {}] : ['get_weather', { city: 'Oslo', units: 'celsius' }];
    let outcome;
    try {
        outcome = await client.callTool({ name: tool, arguments: args });
    } catch (error) {
        outcome = error;
    }
    checks.check(outcome instanceof Error || outcome?.isError === true,
        "another tenant's token in the session: the call fails", outcome);
    checks.check(connection.statuses.slice(before).includes(403), "another tenant's token: the server answered 403",
        connection.statuses.slice(before));
    connection.headers.authorization = `Bearer ${token}`;
    result = await client.callTool({ name: 'get_weather', arguments: { city: 'Rome', units: 'celsius' } });
    checks.check(result.structuredContent?.city === 'Rome', 'the session goes on with its own token', result);
    await client.close();

    await metadata(checks, url);
    await refused(checks, url, {}, 401, 'no token');
    await refused(checks, url, { authorization: 'Bearer not a token' }, 401, 'a malformed token');
    await refused(checks, url, { authorization: 'Bearer unknown-token-0000' }, 401, 'an unknown token');
    if (process.env.MCP_EXPIRED_TOKEN) {
        await refused(checks, url, { authorization: `Bearer ${process.env.MCP_EXPIRED_TOKEN}` }, 401, 'an expired token');
    }
    const foreign = process.env.MCP_FOREIGN_ORIGIN ?? 'https://evil.example';
    await refused(checks, url, { ...bearer, origin: foreign }, 403, 'a foreign Origin');
    if (process.env.MCP_ALLOWED_ORIGIN) {
        const allowed = await connect(url, { ...bearer, origin: process.env.MCP_ALLOWED_ORIGIN });
        const listed = allowed.error ?? (await allowed.client.listTools()).tools.map((tool) => tool.name);
        checks.check(Array.isArray(listed) && listed.includes('get_weather'), 'the allowed Origin is served', listed);
        await allowed.client.close().catch(() => {});
    }
}

async function main() {
    const checks = new Checks();
    const timeout = 1000 * Number(process.env.MCP_CHECK_TIMEOUT || 60);
    let timer;
    const expired = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no end after ${timeout / 1000}s`)), timeout);
    });
    try {
        await Promise.race([run(checks), expired]);
    } catch (error) {
        const reason = `the check ended early: ${error}`;
        checks.failures.push(reason);
        console.log(`FAIL ${reason}`);
    } finally {
        clearTimeout(timer);
    }
    console.log(`http_client_check: @modelcontextprotocol/sdk ${sdkVersion()}`);
    if (checks.failures.length > 0) {
        console.log(`http_client_check: failed: ${checks.failures.join('; ')}`);
        return 1;
    }
    console.log('http_client_check: all checks passed');
    return 0;
}

process.exit(await main());
