// providerToolName / timelineToolName are the service's tool-name mapping: the names a render
// gives tool_use blocks are providerToolName of the stored tool ids, and they map back.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { providerToolName, timelineToolName } from "timeline-client";
import { sha256Hex } from "../src/tool-names.js";
import { client, skipLive, unique } from "./env.js";

const NAMES = [
  "lookup_order",
  "web_tools.web_search",
  "a-b",
  "météo.prévision",
  `${"x".repeat(48)}.y.z`, // the 50-character cut falls inside an escape
  `${"long_tool_name_".repeat(6)}.end`,
  "工具.搜索",
];

test("the mapping: provider names match [A-Za-z0-9_-]{1,64} and map back (shortened ones against the declared names)", () => {
  for (const name of NAMES) {
    const mapped = providerToolName(name);
    assert.match(mapped, /^[A-Za-z0-9_-]{1,64}$/, name);
    assert.equal(timelineToolName(mapped, NAMES), name);
  }
  assert.equal(providerToolName("web_tools.web_search"), "web_tools-2eweb_search");
  assert.equal(providerToolName("a-b"), "a-2db");
  assert.throws(() => timelineToolName(providerToolName(NAMES[5] ?? "")), /shortened tool name/);
  assert.throws(() => timelineToolName("a-zz"), /not an escaped name/);
});

test("sha256Hex is SHA-256", () => {
  for (const size of [0, 1, 55, 56, 63, 64, 65, 119, 1000]) {
    const data = new Uint8Array(size).map((_, i) => (i * 31 + size) & 255);
    assert.equal(sha256Hex(data), createHash("sha256").update(data).digest("hex"), String(size));
  }
});

test("a render names each tool_use providerToolName of its stored tool id", { skip: skipLive }, async () => {
  const api = client();
  const conv = (await api.createConversation({ id: unique("tools") })).id;
  await api.startTurn(conv, "Use every tool.");
  await api.contribute(
    conv,
    NAMES.flatMap((name, k) => [
      { type: "react.tool.call", author: "react", text: JSON.stringify({ tool_id: name, params: {} }), meta: { tool_call_id: `call_${k}`, tool_id: name }, id: `call_${k}` },
      { type: "react.tool.result", author: "tool", text: "done", meta: { tool_call_id: `call_${k}`, tool_id: name }, id: `result_${k}` },
    ]),
  );
  const rendered = await api.render(conv, { format: "anthropic_messages" });
  const names = rendered.request.messages.flatMap((message) =>
    typeof message.content === "string" ? [] : message.content.flatMap((part) => (part.type === "tool_use" ? [part.name] : [])),
  );
  assert.deepEqual(names, NAMES.map(providerToolName));
  assert.deepEqual(names.map((name) => timelineToolName(name, NAMES)), NAMES);
});
