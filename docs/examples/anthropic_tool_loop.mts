// A native Anthropic tool-use loop on the timeline service in TypeScript, offline.
//
// The loop is what an agent runs against the real API: render the conversation in the provider's
// own format (format "anthropic_messages"), call messages.create({ model, max_tokens, tools,
// ...rendered.request }) on the real @anthropic-ai/sdk, report the usage the call billed, store
// the model's tool calls, the tools' results and the final answer as blocks, repeat. Here the
// model is scripted: the SDK's `fetch` is mocked, answers a tool call on a turn's first request
// and the answer once the request holds the tool's result, and checks what it gets (tool_use
// answered by its tool_result, alternating roles). The conversation is small on purpose
// (max_tokens 6,000): a later turn's render compacts, and a forced compaction ends the run.
//
// Run it against `make run` (clients/typescript: `npm ci && npm run build:examples`, then):
//   TIMELINE_API_KEY=tlk_… node clients/typescript/build/docs/examples/anthropic_tool_loop.mjs
import Anthropic from "@anthropic-ai/sdk";
import { type NewBlock, TimelineClient } from "timeline-client";

const SYSTEM = "You are an order-support agent. Look orders up before you answer; answer in one sentence.";
const TOOLS: Anthropic.Tool[] = [
  {
    name: "lookup_order",
    description: "An order's shipping events by its number.",
    input_schema: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
  },
];
const QUESTIONS = ["Where is order 1001?", "And order 1002?", "Compare 1003 and 1004.", "Is 1005 late?"];

/** The Messages API behind a mocked fetch: checks each request, answers a tool call, then the answer. */
function scriptedModel(): { fetch: typeof fetch; calls: () => number } {
  let calls = 0;
  const scripted = async (_url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const body = JSON.parse(String(init?.body)) as Anthropic.MessageCreateParamsNonStreaming;
    const messages = body.messages;
    messages.forEach((message, i) => {
      if (i > 0 && messages[i - 1]?.role === message.role) throw new Error(`request ${calls + 1}: two ${message.role} messages in a row`);
    });
    const parts = (m: Anthropic.MessageParam | undefined) => (typeof m?.content === "string" ? [] : (m?.content ?? []));
    const uses = messages.flatMap((m) => parts(m).filter((p) => p.type === "tool_use").map((p) => (p as Anthropic.ToolUseBlockParam).id));
    const results = messages.flatMap((m) => parts(m).filter((p) => p.type === "tool_result").map((p) => (p as Anthropic.ToolResultBlockParam).tool_use_id));
    if (uses.join() !== results.join()) throw new Error(`request ${calls + 1}: tool_use ${uses} answered by ${results}`);
    calls += 1;
    const last = parts(messages.at(-1));
    const answered = last.some((p) => p.type === "tool_result");
    const order = JSON.stringify(messages).match(/\b10\d\d\b/g)?.at(-1) ?? "?";
    const content = answered
      ? [{ type: "text", text: `Order ${order} ships tomorrow.` }]
      : [
          { type: "text", text: `Looking order ${order} up.` },
          { type: "tool_use", id: `toolu_${calls}`, name: "lookup_order", input: { order } },
        ];
    const input = Math.ceil(JSON.stringify(messages).length / 4);
    const message = {
      id: `msg_${calls}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: answered ? "end_turn" : "tool_use",
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    };
    return new Response(JSON.stringify(message), { status: 200, headers: { "content-type": "application/json" } });
  };
  return { fetch: scripted as typeof fetch, calls: () => calls };
}

/** A bulky tool result (about 1,500 tokens): what makes the conversation grow. */
function runTool(order: string): string {
  return Array.from({ length: 80 }, (_, i) => `order ${order} line ${i}: parcel scanned at hub ${i % 7}, status in transit`).join("\n");
}

const api = new TimelineClient({
  baseUrl: process.env.TIMELINE_API_URL ?? "http://127.0.0.1:8000",
  apiKey: process.env.TIMELINE_API_KEY ?? "",
});
const model = scriptedModel();
const anthropic = new Anthropic({ apiKey: "test", fetch: model.fetch });
const conv = (await api.createConversation({ title: "Offline TypeScript tool loop", settings: { max_tokens: 6000 } })).id;

for (const [index, question] of QUESTIONS.entries()) {
  const turn = index + 1;
  await api.startTurn(conv, question);
  for (;;) {
    const rendered = await api.render(conv, { format: "anthropic_messages", system: SYSTEM });
    if (rendered.compaction) console.log(`turn ${turn}: the render compacted: summary at ${rendered.compaction.summary_path}`);
    // rendered.request is typed as the SDK's own parameters: tsc checks this call.
    const reply = await anthropic.messages.create({ model: "claude-sonnet-4-6", max_tokens: 1024, tools: TOOLS, ...rendered.request });
    const report = await api.reportUsage(rendered, reply);
    console.log(`turn ${turn}: ${rendered.request.messages.length} messages, ${rendered.tokens.total} tokens; reported ${report.tokens.uncached_input} input tokens`);
    const text = reply.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
    const calls = reply.content.filter((part): part is Anthropic.ToolUseBlock => part.type === "tool_use");
    if (calls.length === 0) {
      await api.contribute(conv, [{ type: "assistant.completion", author: "assistant", text, id: `${reply.id}.done` }]);
      console.log(`turn ${turn}: answer: ${text}`);
      break;
    }
    const blocks: NewBlock[] = [{ type: "react.notes", author: "react", text, id: `${reply.id}.notes` }];
    for (const call of calls) {
      const meta = { tool_call_id: call.id, tool_id: call.name };
      const order = String((call.input as { order?: unknown }).order);
      blocks.push(
        { type: "react.tool.call", author: "react", text: JSON.stringify({ tool_id: call.name, params: call.input }), meta, id: `${call.id}.call` },
        { type: "react.tool.result", author: "tool", text: runTool(order), meta, id: `${call.id}.result` },
      );
    }
    await api.contribute(conv, blocks);
  }
}

const forced = await api.compact(conv, { force: true, wait: true });
console.log(`forced compaction: ${forced.status}, ${forced.before_tokens} -> ${forced.after_tokens} tokens`);
let applied = 0;
for await (const compaction of api.compactions(conv)) if (compaction.status === "applied") applied += 1;
const usage = await api.usage(conv);
console.log(`${applied} compactions applied; ${usage.renders} renders reported, cost $${usage.cost_usd}`);
console.log(`${model.calls()} model calls, every request valid`);
