// Retries and errors with a fault-injecting fetch in front of the live service, and the pure backoff.
import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { test } from "node:test";
import { TimelineAPIError, TimelineUnavailable, retryDelay, type FetchLike } from "timeline-client";
import { baseUrl, client, skipLive, unique } from "./env.js";

test("retryDelay doubles from backoffMs, honours a numeric Retry-After, never exceeds maxBackoffMs", () => {
  const base = { backoffMs: 250, maxBackoffMs: 10_000 };
  assert.deepEqual([0, 1, 2, 3].map((a) => retryDelay(a, base)), [250, 500, 1000, 2000]);
  assert.equal(retryDelay(0, { ...base, retryAfter: "2" }), 2000);
  assert.equal(retryDelay(4, { ...base, retryAfter: "2" }), 4000); // the exponential delay is longer
  assert.equal(retryDelay(0, { ...base, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT" }), 250); // a date: ignored
  assert.equal(retryDelay(10, base), 10_000);
  assert.equal(retryDelay(0, { ...base, retryAfter: "60" }), 10_000);
});

/** The platform fetch, answering 503 (with Retry-After) to the first `failures` requests. */
function flaky(failures: number, log: string[]): FetchLike {
  return async (url, init) => {
    log.push(`${init.method} ${new URL(url).pathname}`);
    if (log.length <= failures) {
      return new Response(JSON.stringify({ error: { code: "database_unavailable", message: "down", details: { dependency: "database", retry_after: 2 } } }), {
        status: 503,
        headers: { "Retry-After": "2", "Content-Type": "application/json" },
      });
    }
    return fetch(url, init);
  };
}

test("a 503 is retried (Retry-After capped by maxBackoffMs) and the write lands once", { skip: skipLive }, async () => {
  const log: string[] = [];
  const api = client({ fetch: flaky(2, log), maxBackoffMs: 20 });
  const id = unique("retry");
  const started = Date.now();
  const created = await api.createConversation({ id, title: "after two 503s" });
  assert.equal(created.id, id);
  assert.deepEqual(log, Array(3).fill("POST /api/v1/conversations/"));
  assert.ok(Date.now() - started < 1500, "the 2 s Retry-After is capped at maxBackoffMs");
  assert.equal((await client().conversation(id)).title, "after two 503s");
});

test("a 503 past the last retry is the TimelineAPIError of the service's error shape", { skip: skipLive }, async () => {
  const log: string[] = [];
  const api = client({ fetch: flaky(10, log), retries: 2, maxBackoffMs: 5 });
  const error = await api.conversation("anything").then(
    () => assert.fail("no error"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof TimelineAPIError);
  assert.deepEqual([error.status, error.code, error.message, error.details], [503, "database_unavailable", "down", { dependency: "database", retry_after: 2 }]);
  assert.equal(log.length, 3);
});

test("retries: 0 sends once", { skip: skipLive }, async () => {
  const log: string[] = [];
  await assert.rejects(client({ fetch: flaky(10, log), retries: 0 }).conversation("x"), TimelineAPIError);
  assert.equal(log.length, 1);
});

test("a refused connection is retried, then TimelineUnavailable that nothing reached the service", async () => {
  const tries: string[] = [];
  const refusing: FetchLike = async (url) => {
    tries.push(url);
    throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) });
  };
  const api = client({ baseUrl: "http://127.0.0.1:9", apiKey: "k", fetch: refusing, retries: 3, backoffMs: 1 });
  const error = await api.conversation("c").catch((e: unknown) => e);
  assert.ok(error instanceof TimelineUnavailable);
  assert.equal(error.maybeProcessed, false);
  assert.equal(tries.length, 4);
  assert.match(error.message, /could not be reached \(4 attempts\): fetch failed: connect ECONNREFUSED/);
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("a real refused connection (nothing listens) is TimelineUnavailable, maybeProcessed false", async () => {
  const api = client({ baseUrl: `http://127.0.0.1:${await closedPort()}`, apiKey: "k", retries: 1, backoffMs: 1 });
  const error = await api.conversations().next().catch((e: unknown) => e);
  assert.ok(error instanceof TimelineUnavailable, String(error));
  assert.equal(error.maybeProcessed, false);
  assert.match(error.message, /could not be reached \(2 attempts\).*ECONNREFUSED/);
});

test("a connection dropped mid-request is not repeated: TimelineUnavailable, maybe processed", { skip: skipLive }, async () => {
  let calls = 0;
  const dropping: FetchLike = async (url, init) => {
    calls += 1;
    await fetch(url, init); // the service got it
    throw new TypeError("fetch failed", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
  };
  const id = unique("dropped");
  const error = await client({ fetch: dropping }).createConversation({ id }).catch((e: unknown) => e);
  assert.ok(error instanceof TimelineUnavailable);
  assert.equal(error.maybeProcessed, true);
  assert.equal(calls, 1);
  assert.equal((await client().conversation(id)).id, id); // it was processed: the id makes a repeat safe
  await assert.rejects(client().createConversation({ id }), (e: unknown) => e instanceof TimelineAPIError && e.status === 409);
});

test("a timeout is TimelineUnavailable, maybe processed", { skip: skipLive }, async () => {
  const slow: FetchLike = (_url, init) =>
    new Promise((_, reject) => {
      const late = setTimeout(() => reject(new Error("the timeout did not fire")), 5000);
      init.signal?.addEventListener("abort", () => {
        clearTimeout(late);
        reject(init.signal?.reason);
      });
    });
  const error = await client({ fetch: slow, timeoutMs: 50 }).conversation("x").catch((e: unknown) => e);
  assert.ok(error instanceof TimelineUnavailable);
  assert.equal(error.maybeProcessed, true);
  assert.ok(baseUrl);
});
