// Compile-time checks (tsc, strict): a native render's `request` is the SDK call's own parameter
// type, for each provider; a wrong pairing does not compile. And the pure gemini renaming.
import assert from "node:assert/strict";
import { test } from "node:test";
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { GenerateContentParameters, GoogleGenAI } from "@google/genai";
import { geminiCamelCase, type Rendered, type TimelineClient } from "timeline-client";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const requestTypes: [true, true, true, true, true] = [
  true as Equal<Rendered<"anthropic_messages">["request"]["messages"], Anthropic.MessageCreateParamsNonStreaming["messages"]>,
  true as Equal<Rendered<"anthropic_messages">["request"]["system"], Anthropic.MessageCreateParamsNonStreaming["system"]>,
  true as Equal<Rendered<"openai_responses">["request"]["input"], OpenAI.Responses.ResponseCreateParamsNonStreaming["input"]>,
  true as Equal<Rendered<"openai_chat">["request"]["messages"], OpenAI.Chat.ChatCompletionCreateParamsNonStreaming["messages"]>,
  true as Equal<Rendered<"gemini_contents">["request"]["contents"], GenerateContentParameters["contents"]>,
];

/** Never called: tsc checks each SDK call made with a render's request. */
export async function sdkCalls(api: TimelineClient, anthropic: Anthropic, openai: OpenAI, genai: GoogleGenAI): Promise<void> {
  const messages = await api.render("c", { format: "anthropic_messages" });
  await anthropic.messages.create({ model: "claude-sonnet-4-6", max_tokens: 1024, ...messages.request });
  const responses = await api.render("c", { format: "openai_responses" });
  await openai.responses.create({ model: "gpt-4.1", ...responses.request });
  const chat = await api.render("c", { format: "openai_chat", context: "research" });
  await openai.chat.completions.create({ model: "gpt-4.1", ...chat.request });
  const gemini = await api.render("c", { format: "gemini_contents" });
  await genai.models.generateContent({ model: "gemini-2.5-flash", ...gemini.request });

  // @ts-expect-error: Anthropic messages are not chat completion messages
  await openai.chat.completions.create({ model: "gpt-4.1", messages: messages.request.messages });
  // @ts-expect-error: a seed-format render has no typed request
  await anthropic.messages.create({ model: "m", max_tokens: 1, messages: (await api.render("c")).request.messages });
  // @ts-expect-error: not a render format
  await api.render("c", { format: "anthropic_message" });
  const text = await api.render("c", { format: "text", debug: true });
  text.debug?.toUpperCase();
}

test("the SDK request types are checked at compile time", () => {
  assert.deepEqual(requestTypes, [true, true, true, true, true]);
});

test("geminiCamelCase renames the REST names to @google/genai's, keeping a call's args and a function's response as given", () => {
  const rest = {
    contents: [
      { role: "model", parts: [{ function_call: { id: "c1", name: "look_up", args: { order_id: 1 } }, thought_signature: "c2ln" }] },
      { role: "user", parts: [{ function_response: { id: "c1", name: "look_up", response: { output: { in_transit: true } } } }] },
      { role: "user", parts: [{ inline_data: { mime_type: "image/png", data: "iVBO" } }] },
    ],
    config: { system_instruction: { parts: [{ text: "Be brief." }] } },
  };
  assert.deepEqual(geminiCamelCase(rest), {
    contents: [
      { role: "model", parts: [{ functionCall: { id: "c1", name: "look_up", args: { order_id: 1 } }, thoughtSignature: "c2ln" }] },
      { role: "user", parts: [{ functionResponse: { id: "c1", name: "look_up", response: { output: { in_transit: true } } } }] },
      { role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "iVBO" } }] },
    ],
    config: { systemInstruction: { parts: [{ text: "Be brief." }] } },
  });
});

test("the built package imports nothing at run time but its own modules, and depends on nothing", async () => {
  const { readFile, readdir } = await import("node:fs/promises");
  const dist = new URL("../../../../dist/", import.meta.url);
  const files = (await readdir(dist)).filter((name) => name.endsWith(".js"));
  assert.ok(files.includes("index.js"));
  for (const name of files) {
    const text = await readFile(new URL(name, dist), "utf8");
    const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]);
    assert.deepEqual(specifiers.filter((s) => !s?.startsWith("./")), [], name);
  }
  const manifest = JSON.parse(await readFile(new URL("../package.json", dist), "utf8")) as Record<string, unknown>;
  assert.equal(manifest.dependencies, undefined);
  assert.deepEqual(Object.keys(manifest.peerDependenciesMeta as object).sort(), ["@anthropic-ai/sdk", "@google/genai", "openai"]);
});
