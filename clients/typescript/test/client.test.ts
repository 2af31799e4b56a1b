// Every method of TimelineClient once against the live service, the error shapes, two tenants,
// and pagination over more than one page.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TimelineAPIError, attachment, isContextLimitError } from "timeline-client";
import { apiKey, baseUrl, client, otherKey, skipLive, unique } from "./env.js";

const api = client();
const other = client({ apiKey: otherKey });

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function refusal(promise: Promise<unknown>): Promise<TimelineAPIError> {
  const error = await promise.then(
    () => assert.fail("expected a TimelineAPIError"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof TimelineAPIError, String(error));
  return error;
}

const toolBlocks = (callId: string, result: string) => [
  { type: "react.tool.call", author: "react", text: "{}", meta: { tool_call_id: callId, tool_id: "lookup" }, id: `${callId}.call` },
  { type: "react.tool.result", author: "tool", text: result, meta: { tool_call_id: callId, tool_id: "lookup" }, id: `${callId}.result` },
];

test("a conversation: create, read, update, turn, contribute, read back, hide, unhide, search, sources", { skip: skipLive }, async () => {
  const id = unique("chat");
  const created = await api.createConversation({ id, title: "Client", settings: { max_tokens: 20_000 } });
  assert.deepEqual([created.id, created.title, created.settings.max_tokens], [id, "Client", 20_000]);
  const updated = await api.updateConversation(id, { title: "Renamed" });
  assert.equal(updated.title, "Renamed");
  assert.equal((await api.conversation(id)).title, "Renamed");

  const blocks = await api.startTurn(id, "Find a restaurant", {
    turnId: "turn_1",
    attachments: [attachment("a.txt", "text/plain", { data: new TextEncoder().encode("notes") })],
  });
  assert.equal(blocks[1]?.path, "ar:turn_1.user.prompt");
  const stored = await api.contribute(id, toolBlocks("tc_1", "Trattoria"));
  const again = await api.contribute(id, toolBlocks("tc_1", "Trattoria")); // the ids: stored once
  assert.deepEqual(again.map((b) => b.seq), stored.map((b) => b.seq));

  const path = "tc:turn_1.tc_1.result";
  assert.equal((await api.read(id, path)).blocks[0]?.text, "Trattoria");
  await api.hide(id, path, "[hidden]");
  assert.deepEqual((await api.read(id, path, { includeHidden: false })).blocks, []);
  assert.equal((await api.read(id, path)).blocks[0]?.hidden, true);
  const shown = await api.unhide(id, path);
  assert.equal(shown[0]?.hidden, false);
  assert.deepEqual((await api.search(id, "Trattoria")).map((hit) => hit.path), [path]);
  assert.deepEqual((await api.addSources(id, [{ url: "https://a.example", title: "A" }])).map((s) => s.sid), [1]);
  assert.deepEqual((await api.sources(id)).map((s) => s.url), ["https://a.example"]);
});

test("render in every format; a native one's request; reportUsage takes the SDK response as it is; usage", { skip: skipLive }, async () => {
  const id = unique("render");
  await api.createConversation({ id });
  await api.startTurn(id, "Where is order 1001?", { turnId: "t1" });
  await api.contribute(id, toolBlocks("toolu_1", "in transit"));

  const text = await api.render(id, { format: "text", debug: true });
  assert.match(text.debug ?? "", /in transit/);
  assert.ok((await api.render(id)).blocks.length > 0); // anthropic, the default
  assert.ok((await api.render(id, { format: "openai" })).blocks.length > 0);

  const messages = await api.render(id, { format: "anthropic_messages", system: "Be brief." });
  assert.deepEqual(messages.request.messages.map((m) => m.role), ["user", "assistant", "user"]);
  assert.ok(Array.isArray(messages.request.system));
  const responses = await api.render(id, { format: "openai_responses", system: "Be brief." });
  assert.equal(responses.request.instructions, "Be brief.");
  assert.ok(Array.isArray(responses.request.input));
  const chat = await api.render(id, { format: "openai_chat" });
  assert.equal(chat.request.messages[0]?.role, "user");
  assert.equal(typeof chat.request.prompt_cache_key, "string");

  // An Anthropic Message and an OpenAI ChatCompletion, as their SDKs return them.
  const anthropicReply = {
    id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-6", content: [], stop_reason: "end_turn",
    usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 50, cache_creation_input_tokens: 0 },
  };
  const report = await api.reportUsage(messages, anthropicReply);
  assert.deepEqual([report.render_id, report.model, report.tokens.cache_read, report.provider], [messages.render_id, "claude-sonnet-4-6", 50, "anthropic"]);
  const chatReply = { id: "c", object: "chat.completion", model: "gpt-4.1", choices: [], usage: { prompt_tokens: 80, completion_tokens: 5, total_tokens: 85 } };
  assert.equal((await api.reportUsage(chat, chatReply)).provider, "openai");
  // Another client, knowing nothing of the render: the conversation is given.
  const elsewhere = await client().reportUsage(responses.render_id ?? "", { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 11 }, { conversation: id, model: "gpt-4.1" });
  assert.equal(elsewhere.render_id, responses.render_id);
  await assert.rejects(client().reportUsage(messages, anthropicReply), /unknown render/);
  await assert.rejects(api.reportUsage(messages, { usage: { input_tokens: 1, output_tokens: 1 } }), /names no model/);

  const usage = await api.usage(id);
  assert.equal(usage.renders, 3);
  assert.equal((await api.usage(id, { context: "main" })).renders, 3);
  const rows = await all(api.tenantUsage());
  assert.ok(rows.some((row) => row.id === id));
});

test("compact queued and waited, compactions, one compaction; export and import", { skip: skipLive }, async () => {
  const id = unique("compact");
  await api.createConversation({ id, settings: { keep_recent_tokens: 200 } });
  for (let turn = 1; turn <= 4; turn++) {
    await api.startTurn(id, `Question ${turn}`, { turnId: `t${turn}` });
    await api.contribute(id, toolBlocks(`tc_${turn}`, `result ${turn} `.repeat(300)));
    await api.contribute(id, [{ type: "assistant.completion", author: "assistant", text: `Answer ${turn}.`, id: `a${turn}` }]);
  }
  const done = await api.compact(id, { force: true, wait: true });
  assert.equal(done.status, "applied");
  assert.ok(done.after_tokens < done.before_tokens);
  const queued = await api.compact(id, { force: true });
  assert.ok(["queued", "running", "applied", "rejected", "skipped"].includes(queued.status));
  const listed = await all(api.compactions(id));
  assert.deepEqual(new Set(listed.map((c) => c.id)), new Set([done.id, queued.id]));
  assert.equal((await api.compaction(id, done.id ?? "")).status, "applied");
  // The queued one settles; then the newest applied compaction is taken back, twice (a no-op).
  for (let i = 0; i < 100; i++) {
    const row = await api.compaction(id, queued.id ?? "");
    if (!["queued", "running"].includes(row.status)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const newest = (await all(api.compactions(id))).find((c) => c.status === "applied");
  assert.ok(newest);
  assert.equal((await api.revertCompaction(id, newest.id ?? "")).status, "reverted");
  assert.equal((await api.revertCompaction(id, newest.id ?? "")).status, "reverted");
  const log = await all(api.operations(id));
  assert.equal(log[0]?.kind, "compaction_reverted"); // newest first
  assert.equal(log.filter((entry) => entry.kind === "compaction_reverted").length, 1); // the second revert changed nothing
  const applied = await all(api.operations(id, { kinds: ["compaction_applied"], limit: 1 }));
  assert.ok(applied.length >= 1 && applied.every((entry) => entry.kind === "compaction_applied"));
  assert.equal((await refusal(all(api.operations(id, { kinds: ["no_such_kind" as never] })))).status, 400);

  const exported = await api.export(id);
  assert.equal(exported.conversation_id, id);
  const copy = unique("copy");
  assert.equal((await api.importTimeline(exported, { id: copy })).id, copy);
  assert.equal((await api.export(copy)).blocks.length, exported.blocks.length);
  await api.deleteConversation(copy);
  assert.equal((await refusal(api.conversation(copy))).status, 404);
});

test("named contexts: append (idempotent by message_id), messages, info, strategy, render, pop, clear, branch, list, full context", { skip: skipLive }, async () => {
  const id = unique("ctx");
  await api.createConversation({ id });
  const research = api.context(id, "research");
  assert.deepEqual(await research.messages(), []); // never written
  const [question] = await research.append({ role: "user", content: "What is 2+2?" });
  assert.ok(question?.message_id);
  await research.append({ role: "assistant", content: "4", message_id: "m_answer" });
  await research.append({ role: "assistant", content: "4", message_id: "m_answer" }); // stored once
  assert.deepEqual((await research.messages()).map((m) => m.content), ["What is 2+2?", "4"]);
  assert.equal((await research.info()).message_count, 2);
  assert.deepEqual((await research.setStrategy({ name: "truncate_oldest", max_messages: 10 })).compaction_strategy, {
    name: "truncate_oldest",
    max_messages: 10,
  });
  const rendered = await research.render({ format: "openai_chat" });
  assert.deepEqual(rendered.request.messages.map((m) => m.role), ["user", "assistant"]);

  const branch = await api.createContext(id, { label: "research", branchFrom: "research" });
  assert.equal(branch.name, "research_a");
  assert.equal((await branch.messages()).length, 2);
  assert.equal((await branch.pop())?.message_id, "m_answer");
  await branch.clear();
  assert.deepEqual(await branch.messages(), []);
  assert.deepEqual((await api.listContexts(id)).map((c) => c.name).sort(), ["main", "research", "research_a"]);
  const full = await api.fullContext(id, "research");
  assert.deepEqual(full.map((m) => m.content), ["What is 2+2?", "4"]); // the branch's copies are the same messages
});

test("retryWithCompaction renders again with force_sanitize after a context-limit error, once", { skip: skipLive }, async () => {
  const id = unique("retry_compaction");
  await api.createConversation({ id });
  await api.startTurn(id, "hello");
  const seen: number[] = [];
  const answer = await api.retryWithCompaction(
    id,
    async (rendered) => {
      seen.push(rendered.request.messages.length);
      if (seen.length === 1) throw Object.assign(new Error("400 prompt is too long: 300000 tokens > 200000 maximum"), { status: 400 });
      return "answered";
    },
    { format: "anthropic_messages" },
  );
  assert.equal(answer, "answered");
  assert.equal(seen.length, 2);
  await assert.rejects(
    api.retryWithCompaction(id, async () => {
      throw Object.assign(new Error("overloaded"), { status: 529 });
    }),
    /overloaded/,
  );
  assert.equal(isContextLimitError({ status: 400, message: "context_length_exceeded" }), true);
  assert.equal(isContextLimitError({ status: 500, message: "prompt is too long" }), false);
});

test("errors: the service's error shape as TimelineAPIError (404, 400 with details, 401)", { skip: skipLive }, async () => {
  const missing = await refusal(api.conversation("no_such_conversation"));
  assert.deepEqual([missing.status, missing.code], [404, "not_found"]);
  assert.ok(missing.message.length > 0);
  const invalid = await refusal(api.createConversation({ settings: { max_tokens: -5 } }));
  assert.deepEqual([invalid.status, invalid.code], [400, "invalid"]);
  assert.ok("settings" in invalid.details || "max_tokens" in invalid.details, JSON.stringify(invalid.details));
  const unauthorized = await refusal(client({ apiKey: "tlk_wrong" }).conversation("x"));
  assert.equal(unauthorized.status, 401);
  assert.ok(apiKey !== otherKey && baseUrl);
});

test("two tenants: another tenant's conversation is a 404 on every call, and not listed", { skip: skipLive }, async () => {
  const id = unique("mine");
  await api.createConversation({ id, title: "mine" });
  await api.startTurn(id, "secret plan");
  for (const call of [() => other.conversation(id), () => other.render(id), () => other.search(id, "secret"), () => other.export(id), () => other.startTurn(id, "x")]) {
    assert.equal((await refusal(call())).status, 404);
  }
  assert.ok(!(await all(other.conversations())).some((c) => c.id === id));
  assert.equal((await api.conversation(id)).block_count, 2);
});

test("conversations follows the cursor over more than one page", { skip: skipLive }, async () => {
  const prefix = unique("page");
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await other.createConversation({ id: `${prefix}_${i}` })).id);
  const pages: string[] = [];
  const fetching = client({
    apiKey: otherKey,
    fetch: (url, init) => {
      pages.push(url);
      return fetch(url, init);
    },
  });
  const listed = (await all(fetching.conversations({ limit: 2 }))).map((c) => c.id).filter((c) => c.startsWith(prefix));
  assert.deepEqual(listed, [...ids].reverse()); // newest first, each once
  assert.ok(pages.length >= 3, `${pages.length} pages`);
  assert.ok(pages.slice(1).every((url) => new URL(url).searchParams.get("cursor")));
});
