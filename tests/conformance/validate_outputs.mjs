// Calls every tool through the TypeScript SDK's client, which validates each result's structuredContent
// against the tool's outputSchema (error results included) and throws when it does not match.
// Usage: node validate_outputs.mjs MCP_URL CALLS_JSON  ->  prints one JSON line per call, exits 1 on a mismatch.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, callsJson] = process.argv.slice(2);
const client = new Client({ name: "agenthop-output-schema-check", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
await client.listTools(); // caches the output-schema validators
let failed = false;
for (const [name, args] of JSON.parse(callsJson)) {
  try {
    const result = await client.callTool({ name, arguments: args });
    console.log(JSON.stringify({ name, outcome: result.structuredContent?.outcome, isError: result.isError ?? false }));
  } catch (error) {
    failed = true;
    console.log(JSON.stringify({ name, error: String(error?.message ?? error) }));
  }
}
await client.close();
process.exit(failed ? 1 : 0);
