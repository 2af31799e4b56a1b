// The live service the suite runs against: tests/e2e/test_typescript_client.py starts it (a real
// server on the test database) and passes its URL and two keys of two tenants.
import { TimelineClient, type ClientOptions } from "timeline-client";

export const baseUrl = process.env.TIMELINE_API_URL ?? "";
export const apiKey = process.env.TIMELINE_API_KEY ?? "";
export const otherKey = process.env.TIMELINE_API_KEY_OTHER || "none";
export const live = Boolean(baseUrl && apiKey && process.env.TIMELINE_API_KEY_OTHER);
export const skipLive = live ? false : "no live server: set TIMELINE_API_URL, TIMELINE_API_KEY and TIMELINE_API_KEY_OTHER";

export function client(options: Partial<ClientOptions> = {}): TimelineClient {
  // Without a live server the live tests skip; the clients are still built (never called).
  return new TimelineClient({ baseUrl: baseUrl || "http://127.0.0.1:1", apiKey: apiKey || "none", ...options });
}

/** A fresh id: every run creates its own conversations. */
export function unique(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
