// timeline-client: the TypeScript client of the timeline service (docs/client.md "TypeScript").
export { TimelineClient, Context, attachment, isContextLimitError, usageOf } from "./client.js";
export type { ClientOptions, ContextOption, ModelResponse, NewBlock, NewMessage, ReplyAnswer } from "./client.js";
export { TimelineError, TimelineAPIError, TimelineUnavailable, Transport, retryDelay } from "./http.js";
export type { FetchLike, Query, TransportOptions } from "./http.js";
export { NATIVE_FORMATS, isNativeFormat, geminiCamelCase } from "./native.js";
export type { NativeFormat, NativeRequests, RenderFormat, SeedFormat } from "./native.js";
export type * from "./types.js";
export type { components, paths, operations } from "./schema.js";
export { providerToolName, timelineToolName } from "./tool-names.js";
