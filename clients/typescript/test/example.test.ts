// The TypeScript example docs/examples/anthropic_tool_loop.mts runs as written against the live
// service (compiled by `npm test`), and the committed schema types match the service's schema.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { promisify } from "node:util";
import { apiKey, baseUrl, skipLive } from "./env.js";

const run = promisify(execFile);
const pkg = fileURLToPath(new URL("../../../../", import.meta.url)); // build/clients/typescript/test → the package

test("the Anthropic tool-use example runs: renders, reports usage, compacts", { skip: skipLive }, async () => {
  const example = new URL("../../../docs/examples/anthropic_tool_loop.mjs", import.meta.url);
  const { stdout } = await run(process.execPath, [fileURLToPath(example)], {
    env: { ...process.env, TIMELINE_API_URL: baseUrl, TIMELINE_API_KEY: apiKey },
    timeout: 120_000,
  });
  assert.match(stdout, /turn 4: answer: Order 1005 ships tomorrow\./);
  assert.match(stdout, /the render compacted: summary at /);
  assert.match(stdout, /forced compaction: (applied|rejected)/);
  assert.match(stdout, /8 model calls, every request valid/);
  assert.match(stdout, /8 renders reported/);
});

test("src/schema.ts is what `npm run gen:types` generates from the service's schema", async () => {
  await run(process.execPath, ["scripts/gen-types.mjs", "--check"], { cwd: pkg, timeout: 120_000 });
});
