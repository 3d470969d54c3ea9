// The real-client harness: drives kubepact servers with the official MCP
// TypeScript SDK clients — the clients inside most editors and agents — and
// fails when the client refuses any answer.
//
//   node harness.mjs PLAN.json [sdk | client]
//
// The second argument picks the client: "sdk" (the default) is the 1.x
// client of @modelcontextprotocol/sdk, which speaks the protocol up to
// 2025-11-25; "client" is the 2.x @modelcontextprotocol/client, which
// speaks both eras: 2025-11-25 (its default, the legacy initialize
// handshake) and 2026-07-28 (server/discover, stateless requests).
//
// PLAN.json is written by test/clients/clients_test.go (run by `make test`):
//
//   {"configs": [{
//      "name": "catalog/stdio",
//      "transport": "stdio" | "http",
//      "era": "2025-11-25" | "2026-07-28",                                      // optional, default 2025-11-25
//      "command": "/path/kubepact", "args": [...], "cwd": "...", "env": {...},  // stdio
//      "url": "http://127.0.0.1:PORT/mcp",                                       // http
//      "headers": {"Authorization": "Bearer …"},                                 // http, optional
//      "elicit": "accept" | "decline",                                           // optional
//      "annotations": {"pacto_call_read": {"readOnlyHint": true}},              // optional
//      "calls": [{"tool": "listProducts", "args": {...}, "expect": "ok" | "toolError" | "any",
//                 "code": "NOT_CONFIRMED", "elicitContains": "DELETE http://…",
//                 "resultContains": "\"status\":200", "textContains": "…",
//                 "pages": {"maxBytes": 65536, "minPages": 3, "list": "nodes", "total": "total.nodes"}}]  // all optional
//   }]}
//
// The era is pinned: the 2.x client negotiates exactly that version (for
// 2026-07-28, {pin} mode: no fallback), and a configuration whose client
// agreed on another version fails. The 1.x client fails a 2026-07-28
// configuration: it cannot speak it.
//
// A call with "textContains" must answer a text content holding it. A call
// with "pages" is a paged answer: the harness follows structuredContent
// .nextCursor (the same arguments plus cursor) to the last page, each page
// at most maxBytes of JSON; there must be at least minPages, and the
// lengths of the "list" field of every page must add up to the first
// page's "total" (dot paths into structuredContent).
//
// With "elicit", the client declares the elicitation capability (form mode)
// and answers every elicitation/create with that action (on 2026-07-28 the
// 2.x client answers the server's input-required result through the same
// handler and retries the call); a call with "elicitContains" must have been
// preceded by exactly one elicitation whose message contains that text, and
// one with "code" must answer a tool error of that code; one with
// "resultContains" must answer structuredContent whose JSON holds that text.
// "annotations" are values the listed tools' annotations must have.
//
// Per configuration: connect; page through tools/list, resources/list,
// resources/templates/list and prompts/list (those the server announces);
// compile every inputSchema and outputSchema with Ajv (draft 2020-12, strict
// off, formats on); make each call with the SDK's own output validation
// active (the client checks structuredContent against the tool's
// outputSchema). It prints one line per configuration, then
// "clients: N passed, N failed (PACKAGE VERSION)", and exits 1 when any
// configuration failed.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const legacyEra = "2025-11-25";

// loadClient imports the client family kind names and adapts the few
// places where the two major versions differ.
async function loadClient(kind) {
  if (kind === "client") {
    const pkg = "@modelcontextprotocol/client";
    const m = await import(pkg);
    const { StdioClientTransport } = await import(`${pkg}/stdio`);
    return {
      pkg, eras: [legacyEra, "2026-07-28"], Client: m.Client, StdioClientTransport, StreamableHTTPClientTransport: m.StreamableHTTPClientTransport,
      options: (era) => (era === legacyEra ? {} : { versionNegotiation: { mode: { pin: era } } }),
      onElicit: (client, handler) => client.setRequestHandler("elicitation/create", handler),
      // The 2.x client validates against the definition it is handed.
      call: (client, params, tool) => client.callTool(params, { toolDefinition: tool }),
      canValidate: () => true,
    };
  }
  if (kind !== "sdk") throw new Error(`unknown client ${JSON.stringify(kind)}: want sdk or client`);
  const pkg = "@modelcontextprotocol/sdk";
  const { Client } = await import(`${pkg}/client/index.js`);
  const { StdioClientTransport } = await import(`${pkg}/client/stdio.js`);
  const { StreamableHTTPClientTransport } = await import(`${pkg}/client/streamableHttp.js`);
  const { ElicitRequestSchema } = await import(`${pkg}/types.js`);
  return {
    pkg, eras: [legacyEra], Client, StdioClientTransport, StreamableHTTPClientTransport,
    options: () => ({}),
    onElicit: (client, handler) => client.setRequestHandler(ElicitRequestSchema, handler),
    // The 1.x client keeps the output validators of the last page listed
    // only: list the tool's own page again so the call is validated.
    call: async (client, params, _tool, cursor) => {
      await client.listTools(cursor === undefined ? {} : { cursor });
      return client.callTool(params);
    },
    canValidate: (client, name) => Boolean(client.getToolOutputValidator(name)),
  };
}

const maxPages = 1000;

// compileSchema compiles one schema with a fresh Ajv, so one tool's $id or
// $defs never collide with another's.
function compileSchema(schema) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.compile(schema);
}

// pages lists every page of one list method and returns the items with the
// cursor that fetched each item's page (undefined for the first page).
async function pages(list, key) {
  const items = [];
  const seen = new Set();
  let cursor;
  for (let i = 0; i < maxPages; i++) {
    const res = await list(cursor === undefined ? {} : { cursor });
    if (!Array.isArray(res[key])) throw new Error(`${key}: the result has no ${key} array`);
    for (const item of res[key]) items.push({ item, cursor });
    if (!res.nextCursor) return items;
    if (seen.has(res.nextCursor)) throw new Error(`${key}: cursor ${JSON.stringify(res.nextCursor)} repeats`);
    seen.add(res.nextCursor);
    cursor = res.nextCursor;
  }
  throw new Error(`${key}: more than ${maxPages} pages`);
}

async function runConfig(lib, cfg) {
  const era = cfg.era ?? legacyEra;
  if (!lib.eras.includes(era)) return { ok: false, step: "connect", detail: `${lib.pkg} does not speak protocol ${era} (it speaks ${lib.eras.join(", ")})` };
  const transport = cfg.transport === "stdio"
    ? new lib.StdioClientTransport({ command: cfg.command, args: cfg.args, cwd: cfg.cwd, env: cfg.env, stderr: "pipe" })
    : new lib.StreamableHTTPClientTransport(new URL(cfg.url), cfg.headers ? { requestInit: { headers: cfg.headers } } : undefined);
  let stderr = "";
  if (cfg.transport === "stdio") transport.stderr?.on("data", (d) => { stderr += d; });
  // The protocol version the client and server agreed on, as the client
  // hands it to its transport.
  let negotiated = "unknown";
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => { negotiated = v; setVersion?.(v); };
  const client = new lib.Client({ name: "kubepact-client-harness", version: "0" },
    { ...lib.options(era), ...(cfg.elicit ? { capabilities: { elicitation: { form: {} } } } : {}) });
  const elicited = [];
  if (cfg.elicit) {
    lib.onElicit(client, async (req) => {
      elicited.push(req.params.message ?? "");
      return { action: cfg.elicit };
    });
  }
  const facts = [];
  let step = "initialize";
  try {
    await client.connect(transport);
    const caps = client.getServerCapabilities() ?? {};
    negotiated = client.getNegotiatedProtocolVersion?.() ?? negotiated;
    if (negotiated !== era) throw new Error(`the client agreed on protocol ${negotiated}, want ${era}`);
    facts.push(`protocol ${negotiated}`);

    step = "tools/list";
    // The SDK checks every tool definition against the MCP schema here.
    const tools = await pages((p) => client.listTools(p), "tools");
    if (tools.length === 0) throw new Error("no tools listed");
    const byName = new Map();
    for (const { item, cursor } of tools) {
      if (byName.has(item.name)) throw new Error(`tool ${item.name} is listed twice`);
      byName.set(item.name, { tool: item, cursor });
      step = `ajv ${item.name}.inputSchema`;
      compileSchema(item.inputSchema);
      if (item.outputSchema) {
        step = `ajv ${item.name}.outputSchema`;
        compileSchema(item.outputSchema);
      }
    }
    facts.push(`${tools.length} tools`);
    for (const [name, want] of Object.entries(cfg.annotations ?? {})) {
      step = `annotations of ${name}`;
      const entry = byName.get(name);
      if (!entry) throw new Error(`tool ${name} is not listed`);
      for (const [hint, value] of Object.entries(want)) {
        if (entry.tool.annotations?.[hint] !== value) {
          throw new Error(`${hint} is ${JSON.stringify(entry.tool.annotations?.[hint])}, want ${value}`);
        }
      }
    }

    if (caps.resources) {
      step = "resources/list";
      facts.push(`${(await pages((p) => client.listResources(p), "resources")).length} resources`);
      step = "resources/templates/list";
      facts.push(`${(await pages((p) => client.listResourceTemplates(p), "resourceTemplates")).length} templates`);
    }
    if (caps.prompts) {
      step = "prompts/list";
      facts.push(`${(await pages((p) => client.listPrompts(p), "prompts")).length} prompts`);
    }

    for (const call of cfg.calls ?? []) {
      step = `tools/call ${call.tool} ${JSON.stringify(call.args)}`;
      const entry = byName.get(call.tool);
      if (!entry) throw new Error(`tool ${call.tool} is not listed (listed: ${[...byName.keys()].join(", ")})`);
      const asked = elicited.length;
      const res = await lib.call(client, { name: call.tool, arguments: call.args }, entry.tool, entry.cursor);
      if (entry.tool.outputSchema && !lib.canValidate(client, call.tool)) {
        throw new Error("the client holds no output validator for the tool; its answer went unchecked");
      }
      if (call.elicitContains !== undefined) {
        if (elicited.length !== asked + 1) throw new Error(`${elicited.length - asked} elicitation(s) during the call, want 1`);
        if (!elicited[asked].includes(call.elicitContains)) {
          throw new Error(`the elicitation ${JSON.stringify(elicited[asked])} does not show ${JSON.stringify(call.elicitContains)}`);
        }
      }
      if (call.code !== undefined && res.structuredContent?.error?.code !== call.code) {
        throw new Error(`error.code ${JSON.stringify(res.structuredContent?.error?.code)}, want ${call.code}: ${JSON.stringify(res.structuredContent ?? res.content)}`);
      }
      if (call.resultContains !== undefined && !JSON.stringify(res.structuredContent ?? null).includes(call.resultContains)) {
        throw new Error(`structuredContent does not hold ${call.resultContains}: ${JSON.stringify(res.structuredContent ?? res.content)}`);
      }
      const expect = call.expect ?? "ok";
      if (expect === "ok" && res.isError) throw new Error(`tool error: ${JSON.stringify(res.structuredContent ?? res.content)}`);
      if (call.textContains !== undefined) {
        const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
        if (!text.includes(call.textContains)) throw new Error(`the text ${JSON.stringify(text)} does not say ${JSON.stringify(call.textContains)}`);
      }
      if (call.pages !== undefined) await followPages(client, call, res);
      if (expect === "toolError") {
        if (!res.isError) throw new Error(`succeeded, want a tool error: ${JSON.stringify(res.structuredContent)}`);
        if (typeof res.structuredContent?.error?.code !== "string") {
          throw new Error(`a tool error without error.code: ${JSON.stringify(res.structuredContent ?? res.content)}`);
        }
      }
    }
    facts.push(`${(cfg.calls ?? []).length} calls`);
    return { ok: true, facts };
  } catch (err) {
    // One line per failure (the SDK reports schema faults as indented JSON),
    // then the server's last log lines, indented.
    let detail = err instanceof Error ? err.message : String(err);
    try { detail = JSON.stringify(JSON.parse(detail)); } catch { detail = detail.replaceAll("\n", " "); }
    const log = stderr.trim().split("\n").slice(-10).map((l) => `    | ${l}`).join("\n");
    return { ok: false, step, detail: detail + (log ? `\n${log}` : "") };
  } finally {
    await client.close().catch(() => {});
  }
}

// at reads a dot path (a.b.c) of v.
function at(v, path) {
  return path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), v);
}

// followPages reads a paged answer to its end (see "pages" above); every
// page is validated by the client against the tool's output schema.
async function followPages(client, call, first) {
  const { maxBytes, minPages, list, total } = call.pages;
  const want = at(first.structuredContent, total);
  if (typeof want !== "number") throw new Error(`the first page has no total at ${total}`);
  let res = first, pages = 0, listed = 0;
  for (;;) {
    pages++;
    const size = JSON.stringify(res.structuredContent).length;
    if (size > maxBytes) throw new Error(`page ${pages} is ${size} bytes, above ${maxBytes}`);
    const items = at(res.structuredContent, list);
    if (!Array.isArray(items)) throw new Error(`page ${pages} has no list at ${list}`);
    listed += items.length;
    const cursor = res.structuredContent.nextCursor;
    if (!cursor) break;
    if (pages > 1000) throw new Error("more than 1000 pages");
    res = await client.callTool({ name: call.tool, arguments: { ...call.args, cursor } });
    if (res.isError) throw new Error(`page ${pages + 1}: ${JSON.stringify(res.structuredContent ?? res.content)}`);
  }
  if (pages < minPages) throw new Error(`${pages} page(s), want at least ${minPages}`);
  if (listed !== want) throw new Error(`the pages list ${listed} of ${list}, the first page's ${total} says ${want}`);
}

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const lib = await loadClient(process.argv[3] ?? "sdk");
const { version } = JSON.parse(readFileSync(new URL(`./node_modules/${lib.pkg}/package.json`, import.meta.url), "utf8"));
let passed = 0, failed = 0;
for (const cfg of plan.configs) {
  const r = await runConfig(lib, cfg);
  if (r.ok) {
    passed++;
    console.log(`ok   ${cfg.name}: ${r.facts.join(", ")}`);
  } else {
    failed++;
    console.log(`FAIL ${cfg.name}: ${r.step}: ${r.detail}`);
  }
}
console.log(`clients: ${passed} passed, ${failed} failed (${lib.pkg} ${version})`);
process.exit(failed === 0 ? 0 : 1);
