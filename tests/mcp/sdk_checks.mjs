// What the TypeScript MCP client checks share: the SDK's version and a record of checks.

import { readFileSync } from 'node:fs';

export const INSTALL = 'npm ci --prefix tests/mcp';

/** The installed SDK's version, for the log. */
export function sdkVersion() {
    try {
        const path = new URL('node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url);
        return JSON.parse(readFileSync(path, 'utf8')).version;
    } catch {
        return '(version unknown)';
    }
}

/** Records each check; the run fails if any did. */
export class Checks {
    constructor() {
        this.failures = [];
    }

    check(condition, what, detail) {
        if (condition) {
            console.log(`ok   ${what}`);
        } else {
            const shown = detail?.stack ?? JSON.stringify(detail);
            const suffix = detail === undefined ? '' : `\n       got: ${shown}`;
            console.log(`FAIL ${what}${suffix}`);
            this.failures.push(what);
        }
        return condition;
    }
}
