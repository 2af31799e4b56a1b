// The native loop (gemini_contents,
// POST …/replies/ and …/tool-results/): these run against the live service.
import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { client, skipLive, unique } from "./env.js";


const toolBlocks = [
  { type: "react.tool.call", author: "react", text: JSON.stringify({ tool_id: "lookup_order", params: { order_id: "1001" } }), meta: { tool_call_id: "c1", tool_id: "lookup_order" }, id: "c1.call" },
  { type: "react.tool.result", author: "tool", text: "in transit", meta: { tool_call_id: "c1", tool_id: "lookup_order" }, id: "c1.result" },
];

test("gemini_contents: the request reaches @google/genai's wire with its calls and system instruction; reportUsage of its response", { skip: skipLive }, async () => {
  const platformFetch = globalThis.fetch;
  const api = client({ fetch: platformFetch });
  const conv = (await api.createConversation({ id: unique("gemini") })).id;
  await api.startTurn(conv, "Where is order 1001?");
  await api.contribute(conv, toolBlocks);
  const rendered = await api.render(conv, { format: "gemini_contents", system: "Be brief." });
  let sent: { contents: { parts: Record<string, unknown>[] }[]; systemInstruction?: unknown } | undefined;
  const genai = new GoogleGenAI({ apiKey: "test", httpOptions: { baseUrl: "http://gemini.test" } });
  globalThis.fetch = async (_url, init) => {
    sent = JSON.parse(String(init?.body));
    const answer = { candidates: [{ content: { role: "model", parts: [{ text: "In transit." }] } }], usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 3, totalTokenCount: 103 }, modelVersion: "gemini-2.5-flash", responseId: "resp_1" };
    return new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } });
  };
  let reply;
  try {
    reply = await genai.models.generateContent({ model: "gemini-2.5-flash", ...rendered.request });
  } finally {
    globalThis.fetch = platformFetch;
  }
  const parts = sent?.contents.flatMap((content) => content.parts) ?? [];
  assert.ok(parts.some((part) => (part.functionCall as { id?: string } | undefined)?.id === "c1"), JSON.stringify(sent));
  assert.ok(parts.some((part) => (part.functionResponse as { id?: string } | undefined)?.id === "c1"));
  assert.deepEqual(sent?.systemInstruction, { parts: [{ text: "Be brief." }] });
  const report = await api.reportUsage(rendered, reply);
  assert.deepEqual([report.model, report.render_id], ["gemini-2.5-flash", rendered.render_id]);
});

test("recordReply stores an Anthropic Message as it came (once), recordToolResults answers its call", { skip: skipLive }, async () => {
  const api = client();
  const conv = (await api.createConversation({ id: unique("replies") })).id;
  await api.startTurn(conv, "Where is order 1001?");
  const rendered = await api.render(conv, { format: "anthropic_messages" });
  const message = {
    id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", stop_reason: "tool_use", stop_sequence: null,
    content: [{ type: "text", text: "Looking." }, { type: "tool_use", id: "toolu_1", name: "orders-2elookup", input: { order: "1001" } }],
    usage: { input_tokens: 50, output_tokens: 5 },
  };
  const anthropic = new Anthropic({ apiKey: "test", fetch: async () => new Response(JSON.stringify(message), { status: 200, headers: { "content-type": "application/json" } }) });
  const reply = await anthropic.messages.create({ model: "claude-sonnet-4-6", max_tokens: 100, ...rendered.request });
  const stored = await api.recordReply(conv, reply, { render: rendered, tools: ["orders.lookup"] });
  assert.deepEqual(stored.tool_calls.map((call) => [call.tool_call_id, call.name, call.input]), [["toolu_1", "orders.lookup", { order: "1001" }]]);
  assert.equal(stored.usage?.render_id, rendered.render_id);
  const again = await api.recordReply(conv, reply, { render: rendered, tools: ["orders.lookup"] });
  assert.deepEqual(again.blocks.map((b) => b.seq), stored.blocks.map((b) => b.seq));
  const results = await api.recordToolResults(conv, { toolu_1: { status: "in transit" } });
  assert.deepEqual(results.map((b) => [b.type, b.mime]), [["react.tool.result", "application/json"]]);
  const next = await api.render(conv, { format: "anthropic_messages" });
  assert.deepEqual(next.request.messages.map((m) => m.role), ["user", "assistant", "user"]);
});
