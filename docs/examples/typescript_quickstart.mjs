// The TypeScript client in a few lines (docs/client.md "TypeScript"), plain JavaScript so that it
// runs as written: `npm install ./clients/typescript` in your project, then, against `make run`:
//
//   export TIMELINE_API_KEY=tlk_…        # the key make run printed
//   node typescript_quickstart.mjs
//
// Run by tests/e2e/test_typescript_client.py in a new npm project that installs the client.
import { TimelineClient } from "timeline-client";

const api = new TimelineClient({
  baseUrl: process.env.TIMELINE_API_URL ?? "http://127.0.0.1:8000",
  apiKey: process.env.TIMELINE_API_KEY ?? "",
});
const conv = (await api.createConversation({ title: "TypeScript quick start" })).id;
await api.startTurn(conv, "Where is order 1234?");
await api.contribute(conv, [{ type: "react.notes", text: "Looking the order up.", id: "notes-1" }]);
const rendered = await api.render(conv, { format: "anthropic_messages", system: "You are a support agent." });
// rendered.request: { system, messages }, typed as @anthropic-ai/sdk's MessageCreateParams:
// await anthropic.messages.create({ model: "claude-sonnet-4-6", max_tokens: 1024, ...rendered.request });
console.log(rendered.tokens.visible, "visible tokens in", rendered.request.messages.length, "messages");
