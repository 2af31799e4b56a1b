// Tool names the providers accept: the TypeScript copy of timeline_client.tool_names (and of the
// service's rendering/native/tool_names.py; test/tool-names.test.ts checks it against the
// service's renders). A seed tool id such as `web_tools.web_search` is no Anthropic / OpenAI tool
// name ([A-Za-z0-9_-]{1,64}), so every format maps it one way, documented in
// docs/native-formats.md: letters, digits and `_` stay; every other character becomes `-` and two
// lowercase hex digits per UTF-8 byte (`.` → `-2e`); a mapped name longer than 64 characters keeps
// its first 50 and ends in `-h` and 12 hex digits of the SHA-256 of the original name.

const MAX_NAME_CHARS = 64;
const HASHED_HEAD = 50;
const HASH_DIGITS = 12;
const KEPT = /^[A-Za-z0-9_]$/;

function escape(text: string): string {
  let out = "";
  for (const char of text) {
    if (KEPT.test(char)) out += char;
    else for (const byte of new TextEncoder().encode(char)) out += `-${byte.toString(16).padStart(2, "0")}`;
  }
  return out;
}

function unescape(text: string): string {
  const bytes: number[] = [];
  for (let at = 0; at < text.length; ) {
    if (text[at] === "-") {
      const hex = text.slice(at + 1, at + 3);
      if (!/^[0-9a-f]{2}$/.test(hex)) throw new Error(`not an escaped name: ${JSON.stringify(text)}`);
      bytes.push(parseInt(hex, 16));
      at += 3;
    } else {
      bytes.push(...new TextEncoder().encode(text[at]));
      at += 1;
    }
  }
  return new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
}

/** The name a provider accepts for the tool the timeline calls `name`: declare your tools under it. */
export function providerToolName(name: string): string {
  const escaped = escape(name) || "-00";
  if (escaped.length <= MAX_NAME_CHARS) return escaped;
  const digest = sha256Hex(new TextEncoder().encode(name)).slice(0, HASH_DIGITS);
  let head = escaped.slice(0, HASHED_HEAD);
  const cut = head.lastIndexOf("-");
  if (cut >= head.length - 2) head = head.slice(0, cut); // never cut an escape in half
  return `${head}-h${digest}`;
}

/**
 * The timeline's name for a provider tool name, the inverse of providerToolName: a shortened
 * name is looked up among `declared` (your own tool names). Throws when it cannot be reversed.
 */
export function timelineToolName(providerName: string, declared: Iterable<string> = []): string {
  if (/-h[0-9a-f]{12}$/.test(providerName)) {
    for (const name of declared) if (providerToolName(name) === providerName) return name;
    throw new Error(`${JSON.stringify(providerName)} is a shortened tool name; declare the original`);
  }
  const name = unescape(providerName);
  if (providerToolName(name) !== providerName) throw new Error(`${JSON.stringify(providerName)} is no mapped tool name`);
  return name;
}

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
  0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
  0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of bytes as hex, synchronous and without node:crypto (edge runtimes have none). */
export function sha256Hex(data: Uint8Array): string {
  const length = data.length;
  const padded = new Uint8Array(Math.ceil((length + 9) / 64) * 64);
  padded.set(data);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000));
  view.setUint32(padded.length - 4, (length << 3) >>> 0);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!, b = w[i - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = [h[0]!, h[1]!, h[2]!, h[3]!, h[4]!, h[5]!, h[6]!, h[7]!];
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      [hh, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    const next = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = (h[i]! + next[i]!) >>> 0;
  }
  return Array.from(h, (x) => x.toString(16).padStart(8, "0")).join("");
}
