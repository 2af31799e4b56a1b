from django.urls import include, path, register_converter

from timeline_app.api import (
    compactions,
    contexts,
    conversations,
    exports,
    operations,
    render,
    replies,
    timelines,
    usage,
)
from timeline_app.domain import identifiers


class IdentifierConverter:
    """A path converter for one public identifier: its regex from ``domain.identifiers``, the
    value kept as the string it is."""

    regex: str

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


def _converter(name: str, regex: str) -> None:
    register_converter(type(f"{name.title()}Converter", (IdentifierConverter,), {"regex": regex}), name)


_converter("conv", identifiers.CONVERSATION_ID)
_converter("context", identifiers.CONTEXT_NAME)
_converter("compaction", identifiers.COMPACTION_ID)
_converter("render", identifiers.RENDER_ID)

# Sub-paths shared by the main context and every named context.
timeline_patterns = [
    path("blocks/", timelines.BlocksView.as_view()),
    path("turns/", timelines.TurnsView.as_view()),
    path("render/", render.RenderView.as_view()),
    path("compact/", render.CompactView.as_view()),
    path("compactions/", compactions.CompactionListView.as_view()),
    path("compactions/<compaction:compaction>/", compactions.CompactionDetailView.as_view()),
    path("compactions/<compaction:compaction>/revert/", compactions.CompactionRevertView.as_view()),
    path("operations/", operations.OperationListView.as_view()),
    path("hide/", timelines.HideView.as_view()),
    path("unhide/", timelines.UnhideView.as_view()),
    path("search/", timelines.SearchView.as_view()),
    path("sources/", timelines.SourcesView.as_view()),
    path("timeline/", exports.TimelineExportView.as_view()),
    path("messages/", contexts.MessagesView.as_view()),
    path("messages/pop/", contexts.MessagePopView.as_view()),
    path("renders/<render:render_id>/usage/", usage.UsageReportView.as_view()),
    path("usage/", usage.ConversationUsageView.as_view()),
    path("replies/", replies.RepliesView.as_view()),
    path("tool-results/", replies.ToolResultsView.as_view()),
]

urlpatterns = [
    path("conversations/", conversations.ConversationListView.as_view(), name="conversation-list"),
    path("usage/", usage.TenantUsageView.as_view(), name="usage-list"),
    path("conversations/import/", exports.TimelineImportView.as_view(), name="conversation-import"),
    path(
        "conversations/<conv:conv>/",
        conversations.ConversationDetailView.as_view(),
        name="conversation-detail",
    ),
    path("conversations/<conv:conv>/contexts/", contexts.ContextListView.as_view(), name="context-list"),
    path(
        "conversations/<conv:conv>/contexts/<context:context>/",
        contexts.ContextDetailView.as_view(),
        name="context-detail",
    ),
    path("conversations/<conv:conv>/full-context/", contexts.FullContextView.as_view(), name="full-context"),
    path("conversations/<conv:conv>/contexts/<context:context>/", include(timeline_patterns)),
    path("conversations/<conv:conv>/", include(timeline_patterns)),
]
