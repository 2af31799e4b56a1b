// HTTP plumbing: one fetch bound to the service's URL and key, the errors, and retries of what is
// safe to retry (the Python client's timeline_client.http, in TypeScript).
//
// A request that could not connect (the service restarting) or that the service answered 503 (a
// dependency such as PostgreSQL or Redis unreachable for a moment) is retried up to `retries`
// times with exponential backoff: backoffMs × 2^attempt, at least the answer's Retry-After, never
// more than maxBackoffMs per wait. Writes stay safe to repeat: they carry client ids (blocks with
// an `id`, conversations with an `id`, messages with a `message_id`).

/** Every error of the client: catch this to handle whatever went wrong with a call. */
export class TimelineError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A 4xx/5xx answer of the service, with its `{"error": {code, message, details}}`. */
export class TimelineAPIError extends TimelineError {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details?: Record<string, unknown> | null) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
    this.code = code;
    this.message = message;
    this.details = details ?? {};
  }
}

/**
 * The service gave no answer: the connection could not be made (after the retries), or the
 * request timed out or broke off. `reason` is the transport's message; `maybeProcessed` is false
 * when the request surely never reached the service, true when it may have been processed (repeat
 * a write only when it is safe to, e.g. blocks with ids). The fetch error is the `cause`.
 */
export class TimelineUnavailable extends TimelineError {
  readonly reason: string;
  readonly maybeProcessed: boolean;

  constructor(message: string, options: { reason: string; maybeProcessed: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.reason = options.reason;
    this.maybeProcessed = options.maybeProcessed;
  }
}

/**
 * Milliseconds to wait before retry number `attempt` (0-based): exponential, at least a numeric
 * Retry-After (seconds), capped at maxBackoffMs.
 */
export function retryDelay(
  attempt: number,
  options: { retryAfter?: string | null; backoffMs: number; maxBackoffMs: number },
): number {
  let delay = options.backoffMs * 2 ** attempt;
  const seconds = options.retryAfter ? Number(options.retryAfter) : Number.NaN;
  if (Number.isFinite(seconds)) delay = Math.max(delay, seconds * 1000); // an HTTP date: the exponential delay stands
  return Math.max(0, Math.min(delay, options.maxBackoffMs));
}

/** Codes of a fetch error (undici's `cause.code`) for a connection that was never made. */
const NOT_CONNECTED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function reasonOf(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const inner = cause instanceof Error ? `: ${cause.message}` : "";
  return error instanceof Error ? `${error.message}${inner}` : String(error);
}

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;
export type Query = Record<string, string | number | boolean | undefined | null>;

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  retries?: number;
  backoffMs?: number;
  maxBackoffMs?: number;
  timeoutMs?: number;
  fetch?: FetchLike;
  sleep?: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The client's HTTP requests: paths are relative to `baseUrl` (a path prefix included). */
export class Transport {
  readonly baseUrl: string;
  readonly retries: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly timeoutMs: number;
  private readonly headers: Record<string, string>;
  private readonly fetch: FetchLike;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: TransportOptions) {
    if (!options.baseUrl) throw new TypeError("baseUrl is required");
    if (!options.apiKey) throw new TypeError("apiKey is required");
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.retries = options.retries ?? 5;
    this.backoffMs = options.backoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 10_000;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.headers = { Authorization: `Bearer ${options.apiKey}`, Accept: "application/json" };
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== "function") throw new TypeError("no fetch: pass options.fetch");
    this.fetch = fetchImpl;
    this.sleep = options.sleep ?? sleepFor;
  }

  url(path: string, query?: Query): string {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }

  /** The decoded JSON answer (undefined for an empty one); throws a TimelineError. */
  async request<T>(method: string, path: string, options: { json?: unknown; query?: Query } = {}): Promise<T> {
    const url = this.url(path, options.query);
    const headers: Record<string, string> = { ...this.headers };
    let body: string | undefined;
    if (options.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(options.json);
    }
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      let retryAfter: string | null = null;
      try {
        response = await this.fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (error) {
        const code = errorCode(error);
        const reason = reasonOf(error);
        if (code === undefined || !NOT_CONNECTED.has(code)) {
          // A timeout or a dropped connection: it may have been processed, so it is not repeated.
          throw new TimelineUnavailable(
            `${method} ${url} got no answer (${reason}); the service may have processed it`,
            { reason, maybeProcessed: true, cause: error },
          );
        }
        if (attempt >= this.retries) {
          const tries = attempt > 0 ? ` (${attempt + 1} attempts)` : "";
          throw new TimelineUnavailable(
            `the timeline service at ${this.baseUrl} could not be reached${tries}: ${reason}`,
            { reason, maybeProcessed: false, cause: error },
          );
        }
        await this.sleep(retryDelay(attempt, { retryAfter, backoffMs: this.backoffMs, maxBackoffMs: this.maxBackoffMs }));
        continue;
      }
      if (response.status === 503 && attempt < this.retries) {
        retryAfter = response.headers.get("Retry-After");
        await response.body?.cancel();
        await this.sleep(retryDelay(attempt, { retryAfter, backoffMs: this.backoffMs, maxBackoffMs: this.maxBackoffMs }));
        continue;
      }
      return (await Transport.result(response, method, url)) as T;
    }
  }

  private static async result(response: Response, method: string, url: string): Promise<unknown> {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      const reason = reasonOf(error);
      throw new TimelineUnavailable(`${method} ${url}: the answer broke off (${reason})`, {
        reason,
        maybeProcessed: true,
        cause: error,
      });
    }
    if (response.status >= 400) {
      let error: { code?: unknown; message?: unknown; details?: unknown } | undefined;
      try {
        error = (JSON.parse(text) as { error?: typeof error }).error;
      } catch {
        error = undefined;
      }
      if (!error || typeof error !== "object") {
        throw new TimelineAPIError(response.status, "http_error", text.slice(0, 500));
      }
      const details = error.details && typeof error.details === "object" ? (error.details as Record<string, unknown>) : {};
      throw new TimelineAPIError(response.status, String(error.code ?? ""), String(error.message ?? ""), details);
    }
    if (response.status === 204 || text === "") return undefined;
    return JSON.parse(text) as unknown;
  }
}
