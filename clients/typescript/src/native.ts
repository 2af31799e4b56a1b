// The native render formats and the type of each one's `request`: the parameters of the
// provider SDK's call, from the SDK packages themselves (optional peer dependencies, types only:
// nothing here is imported at run time).
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { GenerateContentParameters } from "@google/genai";

/**
 * format → the type of the render's `request`: spread it into the SDK call with what the render
 * leaves to you (the model, `max_tokens`, your tools):
 *
 *   anthropic.messages.create({ model, max_tokens, tools, ...rendered.request })
 *   openai.responses.create({ model, tools, ...rendered.request })
 *   openai.chat.completions.create({ model, tools, ...rendered.request })
 *   genai.models.generateContent({ model, ...rendered.request, config: { ...rendered.request.config, tools } })
 */
export interface NativeRequests {
  anthropic_messages: Pick<Anthropic.MessageCreateParamsNonStreaming, "system" | "messages">;
  openai_responses: Pick<OpenAI.Responses.ResponseCreateParamsNonStreaming, "input" | "instructions" | "prompt_cache_key">;
  openai_chat: Pick<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, "messages" | "prompt_cache_key">;
  gemini_contents: Pick<GenerateContentParameters, "contents" | "config">;
}

export type NativeFormat = keyof NativeRequests;

/** The seed dialect's formats (`blocks` holds the content parts, or chat messages for `openai`). */
export type SeedFormat = "anthropic" | "openai" | "text";

export type RenderFormat = SeedFormat | NativeFormat;

export const NATIVE_FORMATS: readonly NativeFormat[] = [
  "anthropic_messages",
  "openai_responses",
  "openai_chat",
  "gemini_contents",
];

export function isNativeFormat(format: unknown): format is NativeFormat {
  return typeof format === "string" && (NATIVE_FORMATS as readonly string[]).includes(format);
}

/** Keys whose values are the caller's own JSON (a call's arguments, a function's result): kept as they are. */
const OPAQUE_KEYS = new Set(["args", "response"]);

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * The service renders `gemini_contents` with the REST/Python field names (`system_instruction`,
 * `function_call`, `inline_data`, `thought_signature`); @google/genai's TypeScript types and its
 * converters read camelCase (`systemInstruction`, `functionCall`, …) and drop the others. This
 * renames every key to camelCase except inside a call's `args` and a function's `response`.
 */
export function geminiCamelCase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(geminiCamelCase);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [camel(key), OPAQUE_KEYS.has(key) ? inner : geminiCamelCase(inner)]),
  );
}
