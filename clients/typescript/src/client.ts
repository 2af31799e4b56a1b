// The client of the block timeline API: conversations, turns, blocks, render, usage, compaction,
// read/hide/search, export/import, named contexts (mirrors the Python client's TimelineClient).
import { type FetchLike, type Query, Transport } from "./http.js";
import { geminiCamelCase, isNativeFormat, type RenderFormat } from "./native.js";
import type {
  AttachmentInput,
  BlockAnswer,
  BlockInput,
  CacheMissReason,
  CompactionAnswer,
  CompactionQueuedAnswer,
  CompactionRecord,
  CompactionsPage,
  CompactionStrategy,
  ContextAnswer,
  ConversationAnswer,
  ConversationDetailAnswer,
  ConversationPage,
  ConversationSettings,
  OperationAnswer,
  OperationKind,
  OperationsPage,
  ReadAnswer,
  RenderAnswer,
  Rendered,
  RenderOptions,
  SearchHit,
  SourceAnswer,
  SourceInput,
  StoredMessage,
  TenantUsagePage,
  TenantUsageRow,
  TimelineExport,
  TimelineImport,
  UsageAnswer,
  UsageReportAnswer,
} from "./types.js";

export interface ClientOptions {
  /** The service's URL, a path prefix included (`https://example.com/timeline`). */
  baseUrl: string;
  /** A key of `manage.py create_api_key` (`tlk_…`); every call is scoped to its tenant. */
  apiKey: string;
  /** Retries of a refused connection or a 503 (default 5; 0 turns them off). */
  retries?: number;
  /** The first retry's wait (default 250 ms), doubled at each retry. */
  backoffMs?: number;
  /** The longest wait between two tries, Retry-After included (default 10,000 ms). */
  maxBackoffMs?: number;
  /** A call's timeout (default 60,000 ms): past it, TimelineUnavailable (maybeProcessed). */
  timeoutMs?: number;
  /** The fetch to use (default the platform's `fetch`): a proxy, a test double. */
  fetch?: FetchLike;
}

/** A block to contribute: `type` and whatever else it needs (`author`, `text`, `meta`, an `id` for idempotency). */
export type NewBlock = Partial<BlockInput> & Pick<BlockInput, "type">;

/** What `POST …/replies/` answers (docs/api.md "Replies and tool results"). */
export interface ReplyAnswer {
  blocks: BlockAnswer[];
  response_id: string;
  format: "anthropic" | "openai_responses" | "openai_chat" | "gemini";
  /** The calls to run: the provider's id, your declared name, the provider's name, the arguments. */
  tool_calls: { tool_call_id: string; name: string; provider_name: string; input: unknown }[];
  usage: UsageReportAnswer | null;
}

/** Per-timeline calls address `main` unless given a named context. */
export interface ContextOption {
  context?: string;
}

/** Something a model call answered: the SDK's response object (or its JSON) with its usage. */
export type ModelResponse = object;

const RENDERS_REMEMBERED = 1024;
const CONTEXT_LIMIT = /prompt is too long|context_length_exceeded|maximum context length/i;

/**
 * True for a provider's "context too long" answer: Anthropic's HTTP 400 "prompt is too long: N
 * tokens > M maximum", OpenAI's `context_length_exceeded`. Duck-typed: the SDKs are not needed.
 */
export function isContextLimitError(error: unknown): boolean {
  if (!error || typeof error !== "object") return false;
  const status = (error as { status?: unknown }).status;
  if (typeof status === "number" && status !== 400) return false;
  const texts = [String(error), String((error as { message?: unknown }).message ?? "")];
  try {
    texts.push(JSON.stringify((error as { error?: unknown }).error ?? ""));
  } catch {
    // an unserializable body: the message decides
  }
  return texts.some((text) => CONTEXT_LIMIT.test(text));
}

function plain(value: unknown): unknown {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
}

const USAGE_KEYS = ["input_tokens", "prompt_tokens", "prompt_token_count", "promptTokenCount"];

/** `[usage, model]` of an SDK response (Anthropic, OpenAI Responses / Chat, google-genai) or a bare usage object (model ""). */
export function usageOf(response: ModelResponse): [Record<string, unknown>, string] {
  const data = plain(response);
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    throw new TypeError("expected an SDK response, its JSON, or a usage object");
  }
  const record = data as Record<string, unknown>;
  if (USAGE_KEYS.some((key) => key in record)) return [record, ""];
  const usage = record.usage ?? record.usageMetadata ?? record.usage_metadata;
  if (!usage || typeof usage !== "object") throw new TypeError("the response carries no usage object");
  const model = record.model ?? record.modelVersion ?? record.model_version;
  return [usage as Record<string, unknown>, typeof model === "string" ? model : ""];
}

/** An attachment for startTurn; `data` is sent as base64. */
export function attachment(
  name: string,
  mime: string,
  options: { data?: Uint8Array; text?: string; summary?: string } = {},
): AttachmentInput {
  const item: AttachmentInput = { name, mime, text: options.text ?? "", summary: options.summary ?? "" };
  if (options.data !== undefined) item.base64 = base64(options.data);
  return item;
}

const enc = encodeURIComponent;

/** Bytes as base64, with the platform's btoa (Node 20, browsers, edge runtimes alike). */
function base64(data: Uint8Array): string {
  let binary = "";
  for (let at = 0; at < data.length; at += 0x8000) binary += String.fromCharCode(...data.subarray(at, at + 0x8000));
  return btoa(binary);
}

/** The cursor of a page's `next` URL. */
function cursorOf(next: string): string | null {
  return new URL(next).searchParams.get("cursor");
}

/**
 * Typed access to `/api/v1`. Every method throws TimelineAPIError on a 4xx/5xx answer and
 * TimelineUnavailable when it got no answer; a refused connection or a 503 is retried first.
 */
export class TimelineClient {
  readonly transport: Transport;
  /** render_id → [conversation, context] of the latest renders, for reportUsage. */
  private readonly renders = new Map<string, [string, string]>();

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
  }

  private call<T>(method: string, path: string, options: { json?: unknown; query?: Query } = {}): Promise<T> {
    return this.transport.request<T>(method, path, options);
  }

  /** The URL path of a timeline: `main` is the conversation's own, others are under contexts/. */
  path(conversation: string, context: string | undefined, tail: string): string {
    const base = `/api/v1/conversations/${enc(conversation)}/`;
    return !context || context === "main" ? base + tail : `${base}contexts/${enc(context)}/${tail}`;
  }

  // -- conversations

  createConversation(
    options: { id?: string; title?: string; settings?: ConversationSettings } = {},
  ): Promise<ConversationAnswer> {
    const body: Record<string, unknown> = { title: options.title ?? "" };
    if (options.id !== undefined) body.id = options.id;
    if (options.settings) body.settings = options.settings;
    return this.call("POST", "/api/v1/conversations/", { json: body });
  }

  conversation(conversation: string): Promise<ConversationDetailAnswer> {
    return this.call("GET", `/api/v1/conversations/${enc(conversation)}/`);
  }

  /** Change the title and/or settings; `settings` replaces the overrides object as a whole. */
  updateConversation(
    conversation: string,
    changes: { title?: string; settings?: ConversationSettings },
  ): Promise<ConversationDetailAnswer> {
    const body: Record<string, unknown> = {};
    if (changes.title !== undefined) body.title = changes.title;
    if (changes.settings !== undefined) body.settings = changes.settings;
    return this.call("PATCH", `/api/v1/conversations/${enc(conversation)}/`, { json: body });
  }

  /** Erase a conversation with everything it owns. */
  async deleteConversation(conversation: string): Promise<void> {
    await this.call("DELETE", `/api/v1/conversations/${enc(conversation)}/`);
  }

  /** Every conversation of the key's tenant, newest first (follows the cursor pages of `limit`, default 50). */
  async *conversations(options: { limit?: number } = {}): AsyncGenerator<ConversationAnswer, void, undefined> {
    let cursor: string | null = null;
    do {
      const query: Query = { cursor, limit: options.limit };
      const page: ConversationPage = await this.call("GET", "/api/v1/conversations/", { query });
      yield* page.results;
      cursor = page.next ? cursorOf(page.next) : null;
    } while (cursor);
  }

  // -- one timeline

  async startTurn(
    conversation: string,
    prompt: string,
    options: ContextOption & { turnId?: string; attachments?: AttachmentInput[] } = {},
  ): Promise<BlockAnswer[]> {
    const body: Record<string, unknown> = { prompt, attachments: options.attachments ?? [] };
    if (options.turnId) body.turn_id = options.turnId;
    const answer = await this.call<{ blocks: BlockAnswer[] }>("POST", this.path(conversation, options.context, "turns/"), { json: body });
    return answer.blocks;
  }

  /** Append blocks (seed 000 `ContextBrowser.contribute`); an `id` on each makes a repeat store nothing twice. */
  async contribute(
    conversation: string,
    blocks: NewBlock[],
    options: ContextOption = {},
  ): Promise<BlockAnswer[]> {
    const answer = await this.call<{ blocks: BlockAnswer[] }>("POST", this.path(conversation, options.context, "blocks/"), {
      json: { blocks },
    });
    return answer.blocks;
  }

  /**
   * Render for the next model call. With a native `format` the answer's `request` is the SDK
   * call's parameters, typed by that SDK (see NativeRequests); `gemini_contents` comes with
   * @google/genai's camelCase field names.
   */
  async render<F extends RenderFormat = "anthropic">(
    conversation: string,
    options: RenderOptions & ContextOption & { format?: F } = {},
  ): Promise<Rendered<F>> {
    const { context, ...body } = options;
    const answer = await this.call<RenderAnswer>("POST", this.path(conversation, context, "render/"), { json: body });
    if (answer.render_id) {
      this.renders.set(answer.render_id, [conversation, context ?? "main"]);
      for (const key of this.renders.keys()) {
        if (this.renders.size <= RENDERS_REMEMBERED) break;
        this.renders.delete(key);
      }
    }
    if (body.format === "gemini_contents" && answer.request) {
      answer.request = geminiCamelCase(answer.request) as Record<string, unknown>;
    }
    if (isNativeFormat(body.format) && !answer.request) {
      throw new TypeError(`the ${body.format} render has no request`);
    }
    return answer as Rendered<F>;
  }

  // -- cost

  /**
   * Report what the provider billed for the call made with `render` (a render answer or its
   * render_id): `response` is the SDK's response object as it came (Anthropic Message, OpenAI
   * Response or ChatCompletion, google-genai GenerateContentResponse), its JSON, or its usage alone
   * (then give `model`). The conversation and context are remembered from render(); give them for
   * a render made by another client. Safe to repeat: the same report answers the stored row.
   */
  async reportUsage(
    render: { render_id: string | null } | string,
    response: ModelResponse,
    options: ContextOption & { model?: string; cacheMissReason?: CacheMissReason; conversation?: string } = {},
  ): Promise<UsageReportAnswer> {
    const renderId = typeof render === "string" ? render : render.render_id;
    if (!renderId) throw new TypeError("this render has no render_id to report usage on");
    let { conversation, context } = options;
    if (conversation === undefined) {
      const remembered = this.renders.get(renderId);
      if (!remembered) throw new TypeError("unknown render: pass conversation (and context) for a render made elsewhere");
      [conversation, context] = [remembered[0], context ?? remembered[1]];
    }
    const [usage, responseModel] = usageOf(response);
    const model = options.model ?? responseModel;
    if (!model) throw new TypeError("the response names no model: pass options.model");
    const body: Record<string, unknown> = { usage, model };
    if (options.cacheMissReason !== undefined) body.cache_miss_reason = options.cacheMissReason;
    return this.call("POST", this.path(conversation, context, `renders/${enc(renderId)}/usage/`), { json: body });
  }

  /** Totals of a conversation (every context), or of one `context`. */
  usage(conversation: string, options: ContextOption = {}): Promise<UsageAnswer> {
    const path = options.context ? this.path(conversation, options.context, "usage/") : `/api/v1/conversations/${enc(conversation)}/usage/`;
    return this.call("GET", path);
  }

  /** The tenant's usage per conversation for renders in [since, until) (follows the pages). */
  async *tenantUsage(options: { since?: string; until?: string } = {}): AsyncGenerator<TenantUsageRow, void, undefined> {
    let cursor: string | null = null;
    do {
      const query: Query = { since: options.since, until: options.until, cursor };
      const page: TenantUsagePage = await this.call("GET", "/api/v1/usage/", { query });
      yield* page.results;
      cursor = page.next ? cursorOf(page.next) : null;
    } while (cursor);
  }

  // -- compaction

  /** Compact now (`wait: true`: the outcome) or queue a compaction (the queued row, 202). */
  compact(conversation: string, options: ContextOption & { force?: boolean; wait: true }): Promise<CompactionAnswer>;
  compact(conversation: string, options?: ContextOption & { force?: boolean; wait?: false }): Promise<CompactionQueuedAnswer>;
  compact(
    conversation: string,
    options?: ContextOption & { force?: boolean; wait?: boolean },
  ): Promise<CompactionAnswer | CompactionQueuedAnswer>;
  compact(
    conversation: string,
    options: ContextOption & { force?: boolean; wait?: boolean } = {},
  ): Promise<CompactionAnswer | CompactionQueuedAnswer> {
    const body = { force: options.force ?? false, wait: options.wait ?? false };
    return this.call("POST", this.path(conversation, options.context, "compact/"), { json: body });
  }

  /** The context's compactions, newest first (follows the pages). */
  async *compactions(
    conversation: string,
    options: ContextOption & { limit?: number } = {},
  ): AsyncGenerator<CompactionRecord, void, undefined> {
    const path = this.path(conversation, options.context, "compactions/");
    let cursor: string | null = null;
    do {
      const page: CompactionsPage = await this.call("GET", path, { query: { cursor, limit: options.limit } });
      yield* page.results;
      cursor = page.next ? cursorOf(page.next) : null;
    } while (cursor);
  }

  /** The context's operations log, newest first (follows the pages): every operation that changed
   * what the model sees, of `kinds` (all when empty), at `since` or later and before `until`
   * (ISO-8601 dates or times, or epoch seconds). */
  async *operations(
    conversation: string,
    options: ContextOption & { kinds?: OperationKind[]; since?: string; until?: string; limit?: number } = {},
  ): AsyncGenerator<OperationAnswer, void, undefined> {
    const path = this.path(conversation, options.context, "operations/");
    const filters = {
      kind: options.kinds?.length ? options.kinds.join(",") : undefined,
      since: options.since,
      until: options.until,
      limit: options.limit,
    };
    let cursor: string | null = null;
    do {
      const page: OperationsPage = await this.call("GET", path, { query: { ...filters, cursor } });
      yield* page.results;
      cursor = page.next ? cursorOf(page.next) : null;
    } while (cursor);
  }

  /** One compaction (follow a queued one until its status is final). */
  compaction(conversation: string, id: string, options: ContextOption = {}): Promise<CompactionRecord> {
    return this.call("GET", this.path(conversation, options.context, `compactions/${enc(id)}/`));
  }

  /** Take back the context's newest applied compaction: the next render is byte for byte the one
   * before it (any other compaction is a 409 whose `details.revertible` names the one that can;
   * reverting twice changes nothing). */
  revertCompaction(conversation: string, id: string, options: ContextOption = {}): Promise<CompactionRecord> {
    return this.call("POST", this.path(conversation, options.context, `compactions/${enc(id)}/revert/`), { json: {} });
  }

  // -- reading and editing

  /** Blocks at `path` (hidden and compacted ones too, unless includeHidden is false): the seeds' `react.read`. */
  read(conversation: string, path: string, options: ContextOption & { includeHidden?: boolean } = {}): Promise<ReadAnswer> {
    const query = { path, include_hidden: options.includeHidden === false ? "0" : "1" };
    return this.call("GET", this.path(conversation, options.context, "blocks/"), { query });
  }

  async hide(conversation: string, path: string, replacementText: string, options: ContextOption = {}): Promise<BlockAnswer[]> {
    const json = { path, replacement_text: replacementText };
    const answer = await this.call<{ blocks: BlockAnswer[] }>("POST", this.path(conversation, options.context, "hide/"), { json });
    return answer.blocks;
  }

  /** Show the hidden blocks at `path` again from the next render on (undoes hide and TTL pruning). */
  async unhide(conversation: string, path: string, options: ContextOption = {}): Promise<BlockAnswer[]> {
    const answer = await this.call<{ blocks: BlockAnswer[] }>("POST", this.path(conversation, options.context, "unhide/"), {
      json: { path },
    });
    return answer.blocks;
  }

  async search(conversation: string, query: string, options: ContextOption = {}): Promise<SearchHit[]> {
    const answer = await this.call<{ results: SearchHit[] }>("GET", this.path(conversation, options.context, "search/"), {
      query: { q: query },
    });
    return answer.results;
  }

  async sources(conversation: string, options: ContextOption = {}): Promise<SourceAnswer[]> {
    const answer = await this.call<{ sources_pool: SourceAnswer[] }>("GET", this.path(conversation, options.context, "sources/"));
    return answer.sources_pool;
  }

  /** Merge sources into the pool by URL (their sids stay stable). */
  async addSources(conversation: string, sources: SourceInput[], options: ContextOption = {}): Promise<SourceAnswer[]> {
    const answer = await this.call<{ sources_pool: SourceAnswer[] }>("POST", this.path(conversation, options.context, "sources/"), {
      json: { sources },
    });
    return answer.sources_pool;
  }

  export(conversation: string, options: ContextOption & { window?: "all" | "visible" } = {}): Promise<TimelineExport> {
    return this.call("GET", this.path(conversation, options.context, "timeline/"), { query: { window: options.window ?? "all" } });
  }

  /** Import an export (`conv.timeline.v1`) as a new conversation (`id`: its id). */
  importTimeline(payload: TimelineExport | TimelineImport, options: { id?: string } = {}): Promise<ConversationAnswer> {
    const body = { ...payload, ...(options.id ? { id: options.id } : {}) };
    return this.call("POST", "/api/v1/conversations/import/", { json: body });
  }

  // -- named contexts

  /** The named context (created on the service by its first append). */
  context(conversation: string, name = "main"): Context {
    return new Context(this, conversation, name);
  }

  /**
   * A new context: named `label_a`, `label_b`, … (the first free one) or exactly `name`,
   * optionally starting with a copy of `branchFrom`'s messages (same ids, so the full context
   * shows them once).
   */
  async createContext(
    conversation: string,
    options: { label?: string; name?: string; branchFrom?: string; compactionStrategy?: CompactionStrategy },
  ): Promise<Context> {
    const body: Record<string, unknown> = {};
    if (options.label !== undefined) body.label = options.label;
    if (options.name !== undefined) body.name = options.name;
    if (options.branchFrom !== undefined) body.branch_from = options.branchFrom;
    if (options.compactionStrategy !== undefined) body.compaction_strategy = options.compactionStrategy;
    const created = await this.call<ContextAnswer>("POST", `/api/v1/conversations/${enc(conversation)}/contexts/`, { json: body });
    return new Context(this, conversation, created.name);
  }

  async listContexts(conversation: string): Promise<ContextAnswer[]> {
    const answer = await this.call<{ contexts: ContextAnswer[] }>("GET", `/api/v1/conversations/${enc(conversation)}/contexts/`);
    return answer.contexts;
  }

  /** Messages of every context named `label` or `label_…` (every context without labels), deduplicated by message_id, in time order. */
  async fullContext(conversation: string, labels?: string | string[]): Promise<StoredMessage[]> {
    const list = typeof labels === "string" ? [labels] : labels;
    const query = list && list.length ? { labels: list.join(",") } : {};
    const answer = await this.call<{ messages: StoredMessage[] }>("GET", `/api/v1/conversations/${enc(conversation)}/full-context/`, {
      query,
    });
    return answer.messages;
  }

  // -- the native agent loop (POST …/replies/ and …/tool-results/: docs/api.md "Replies and tool results")

  /**
   * Store the model's reply as it came (an Anthropic Message, an OpenAI Response or
   * ChatCompletion, a google-genai GenerateContentResponse: the SDK object or its JSON): its
   * thinking, notes or completion and tool calls become blocks of the current turn. With `render`
   * (the render the call was made from, or its render_id) the reply's usage becomes that render's
   * usage report. `tools`: your declared tool names, to map a shortened provider name back.
   * Answers the stored blocks and `tool_calls`, the calls to run. Safe to repeat.
   */
  recordReply(
    conversation: string,
    response: ModelResponse,
    options: ContextOption & { render?: { render_id: string | null } | string; tools?: string[]; model?: string } = {},
  ): Promise<ReplyAnswer> {
    const body: Record<string, unknown> = { response: plain(response), tools: options.tools ?? [] };
    const renderId = typeof options.render === "string" ? options.render : options.render?.render_id;
    if (renderId) body.render_id = renderId;
    if (options.model !== undefined) body.model = options.model;
    return this.call("POST", this.path(conversation, options.context, "replies/"), { json: body });
  }

  /**
   * Store tool results by call id, each in the turn of its call: `{callId: output}` (a text or
   * any JSON value). `errors`: the call ids whose output is an error, or `{callId: error output}`
   * (merged into `results`); `images`: `{callId: [{mime, data}]}`. An unknown call id is refused
   * (400 naming it); repeating is safe.
   */
  async recordToolResults(
    conversation: string,
    results: Record<string, unknown>,
    options: ContextOption & {
      errors?: string[] | Record<string, unknown>;
      images?: Record<string, { mime: string; data: Uint8Array }[]>;
    } = {},
  ): Promise<BlockAnswer[]> {
    const errors = options.errors ?? [];
    const outputs: Record<string, unknown> = { ...results, ...(Array.isArray(errors) ? {} : errors) };
    const failed = new Set(Array.isArray(errors) ? errors : Object.keys(errors));
    const images = options.images ?? {};
    const items = [...new Set([...Object.keys(outputs), ...Object.keys(images)])].map((callId) => {
      const item: Record<string, unknown> = { tool_call_id: callId, output: outputs[callId] ?? "" };
      if (failed.has(callId)) item.is_error = true;
      const own = images[callId];
      if (own) item.images = own.map((image) => ({ mime: image.mime, base64: base64(image.data) }));
      return item;
    });
    const answer = await this.call<{ blocks: BlockAnswer[] }>("POST", this.path(conversation, options.context, "tool-results/"), {
      json: { results: items },
    });
    return answer.blocks;
  }

  // -- the seed's retry loop

  /**
   * Render, call the model; on a context-limit error render again with `force_sanitize` and
   * retry once (seed 000 "Retry with Compaction"). Other errors propagate unchanged.
   */
  async retryWithCompaction<T, F extends RenderFormat = "anthropic">(
    conversation: string,
    call: (rendered: Rendered<F>) => Promise<T>,
    options: RenderOptions & ContextOption & { format?: F } = {},
  ): Promise<T> {
    const rendered = await this.render(conversation, options);
    try {
      return await call(rendered);
    } catch (error) {
      if (!isContextLimitError(error)) throw error;
    }
    return call(await this.render(conversation, { ...options, force_sanitize: true }));
  }

  /** @internal the HTTP call of a Context */
  request<T>(method: string, path: string, options: { json?: unknown; query?: Query } = {}): Promise<T> {
    return this.call<T>(method, path, options);
  }
}

/** An OpenAI chat message to append: a `message_id` is added when it has none, so a repeat stores nothing twice. */
export interface NewMessage {
  role: "user" | "assistant" | "tool" | "system";
  content?: unknown;
  name?: string;
  tool_calls?: unknown[];
  tool_call_id?: string;
  /** ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,119}$; generated when absent */
  message_id?: string;
  /** ISO-8601 */
  timestamp?: string;
  [key: string]: unknown;
}

/** A named context of OpenAI-format messages (the seed 004 Context API over HTTP); nothing is cached. */
export class Context {
  constructor(
    readonly client: TimelineClient,
    readonly conversation: string,
    readonly name: string,
  ) {}

  get path(): string {
    return `/api/v1/conversations/${enc(this.conversation)}/contexts/${enc(this.name)}/`;
  }

  /** Append messages as they are; each gets a `message_id` when it has none (idempotent repeats). */
  async append(...messages: NewMessage[]): Promise<StoredMessage[]> {
    const stored: StoredMessage[] = [];
    const batch = messages.map((m) => ({ ...m, message_id: m.message_id ?? `msg_${crypto.randomUUID().replaceAll("-", "")}` }));
    for (let start = 0; start < batch.length; start += 100) {
      const answer = await this.client.request<{ messages: StoredMessage[] }>("POST", `${this.path}messages/`, {
        json: { messages: batch.slice(start, start + 100) },
      });
      stored.push(...answer.messages);
    }
    return stored;
  }

  /** The context's view: its messages since the last clear, its compaction strategy applied ([] before the first append). */
  async messages(): Promise<StoredMessage[]> {
    try {
      const answer = await this.client.request<{ messages: StoredMessage[] }>("GET", `${this.path}messages/`);
      return answer.messages;
    } catch (error) {
      if (this.notCreated(error)) return [];
      throw error;
    }
  }

  info(): Promise<ContextAnswer> {
    return this.client.request("GET", this.path);
  }

  render<F extends RenderFormat = "anthropic">(options: RenderOptions & { format?: F } = {}): Promise<Rendered<F>> {
    return this.client.render(this.conversation, { ...options, context: this.name });
  }

  /** Remove every message from the view; the service keeps them stored. */
  async clear(): Promise<void> {
    try {
      await this.client.request("DELETE", `${this.path}messages/`);
    } catch (error) {
      if (!this.notCreated(error)) throw error;
    }
  }

  /** Take the newest message out of the view and return it (null when the view is empty). */
  async pop(): Promise<StoredMessage | null> {
    try {
      const answer = await this.client.request<{ messages: StoredMessage[] }>("POST", `${this.path}messages/pop/`);
      return answer.messages[0] ?? null;
    } catch (error) {
      if (this.notCreated(error)) return null;
      throw error;
    }
  }

  /** Set the compaction strategy, e.g. `{ name: "truncate_oldest", max_messages: 100 }`. */
  setStrategy(strategy: CompactionStrategy): Promise<ContextAnswer> {
    return this.client.request("PATCH", this.path, { json: { compaction_strategy: strategy } });
  }

  private notCreated(error: unknown): boolean {
    return (
      error instanceof Error &&
      (error as { status?: unknown }).status === 404 &&
      (error as { details?: Record<string, unknown> }).details?.context === this.name
    );
  }
}
