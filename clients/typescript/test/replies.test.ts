// recordReply / recordToolResults build the bodies of POST …/replies/ and …/tool-results/ (the
// routes come with the native agent loop; a fetch double answers here, the service's own tests
// cover the routes).
import assert from "node:assert/strict";
import { test } from "node:test";
import { TimelineClient, type FetchLike } from "timeline-client";

function recording(answer: unknown): { fetch: FetchLike; sent: { url: string; body: unknown }[] } {
  const sent: { url: string; body: unknown }[] = [];
  const fetch: FetchLike = async (url, init) => {
    sent.push({ url, body: JSON.parse(String(init.body)) });
    return new Response(JSON.stringify(answer), { status: 201, headers: { "Content-Type": "application/json" } });
  };
  return { fetch, sent };
}

test("recordReply sends the SDK response as JSON with the render's id, the declared tools and the model", async () => {
  const { fetch, sent } = recording({ blocks: [], response_id: "msg_1", format: "anthropic", tool_calls: [], usage: null });
  const api = new TimelineClient({ baseUrl: "http://service/prefix/", apiKey: "k", fetch });
  class Message {
    id = "msg_1";
    content = [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { order: "1" } }];
    usage = { input_tokens: 5, output_tokens: 1 };
  }
  const answer = await api.recordReply("conv 1", new Message(), { render: { render_id: "r_1" }, tools: ["orders.lookup"], context: "research" });
  assert.equal(answer.response_id, "msg_1");
  assert.deepEqual(sent, [
    {
      url: "http://service/prefix/api/v1/conversations/conv%201/contexts/research/replies/",
      body: { response: { ...new Message() }, tools: ["orders.lookup"], render_id: "r_1" },
    },
  ]);
});

test("recordToolResults sends one result per call id: errors flagged, images as base64", async () => {
  const { fetch, sent } = recording({ blocks: [] });
  const api = new TimelineClient({ baseUrl: "http://service", apiKey: "k", fetch });
  await api.recordToolResults("c", { a: "ok", b: { rows: 2 } }, { errors: { c: "timed out" }, images: { a: [{ mime: "image/png", data: new Uint8Array([1, 2, 255]) }] } });
  assert.deepEqual(sent[0]?.body, {
    results: [
      { tool_call_id: "a", output: "ok", images: [{ mime: "image/png", base64: "AQL/" }] },
      { tool_call_id: "b", output: { rows: 2 } },
      { tool_call_id: "c", output: "timed out", is_error: true },
    ],
  });
  assert.equal(sent[0]?.url, "http://service/api/v1/conversations/c/tool-results/");
});
