// The answers and request bodies, named after the Python client's timeline_client.types, from the
// generated schema (src/schema.ts: `npm run gen:types`).
import type { components } from "./schema.js";
import type { NativeFormat, NativeRequests } from "./native.js";

type S = components["schemas"];

export type ConversationAnswer = S["ConversationOut"];
export type ConversationDetailAnswer = S["ConversationDetailOut"];
export type ConversationPage = S["PaginatedConversationOutList"];
export type ConversationSettings = NonNullable<S["ConversationCreateInRequest"]["settings"]>;
export type BlockAnswer = S["BlockOut"];
export type BlockInput = S["BlockInRequest"];
export type AttachmentInput = S["AttachmentInRequest"];
export type ReadAnswer = S["BlocksReadOut"];
export type RenderAnswer = S["RenderOut"];
export type RenderBody = S["RenderInRequest"];
export type CompactionAnswer = S["CompactionRecordOut"];
export type CompactionQueuedAnswer = S["CompactQueuedOut"];
export type CompactionRecord = S["CompactionRecordOut"];
export type CompactionsPage = S["CompactionsPageOut"];
export type OperationAnswer = S["OperationOut"];
export type OperationsPage = S["OperationsPageOut"];
export type OperationKind = S["OperationKindEnum"];
export type UsageReportAnswer = S["UsageOut"];
export type UsageAnswer = S["ConversationUsageOut"];
export type TenantUsagePage = S["PaginatedConversationUsageRowOutList"];
export type TenantUsageRow = S["ConversationUsageRowOut"];
export type CacheMissReason = S["CacheMissReasonEnum"];
export type SearchHit = S["SearchHitOut"];
export type SourceAnswer = S["SourceOut"];
export type SourceInput = S["SourceInRequest"];
export type TimelineExport = S["TimelineExportOut"];
export type TimelineImport = S["TimelineImportInRequest"];
export type ContextAnswer = S["ContextOut"];
export type CompactionStrategy = S["ContextUpdateInRequest"]["compaction_strategy"];
export type StoredMessage = S["MessagesOut"]["messages"][number];

/** A render: with a native format, `request` holds the SDK call's parameters, typed by that SDK. */
export type Rendered<F> = F extends NativeFormat
  ? Omit<RenderAnswer, "request"> & { request: NativeRequests[F] }
  : RenderAnswer;

/** The render options (`RenderInRequest` without `format`; every default optional). */
export type RenderOptions = Partial<Omit<RenderBody, "format">>;
