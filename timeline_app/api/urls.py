from django.urls import include, path, re_path

from timeline_app.api import compactions, contexts, conversations, exports, render, timelines, usage

CONV = r"(?P<conv>[A-Za-z0-9][A-Za-z0-9_.\-]{0,63})"
CONTEXT = r"(?P<context>[a-z][a-z0-9_]{0,63})"

# Sub-paths shared by the main context and every named context.
timeline_patterns = [
    path("blocks/", timelines.BlocksView.as_view()),
    path("turns/", timelines.TurnsView.as_view()),
    path("render/", render.RenderView.as_view()),
    path("compact/", render.CompactView.as_view()),
    path("compactions/", compactions.CompactionListView.as_view()),
    re_path(r"^compactions/(?P<compaction>cmp_[0-9a-f]{16})/$", compactions.CompactionDetailView.as_view()),
    path("hide/", timelines.HideView.as_view()),
    path("unhide/", timelines.UnhideView.as_view()),
    path("search/", timelines.SearchView.as_view()),
    path("sources/", timelines.SourcesView.as_view()),
    path("timeline/", exports.TimelineExportView.as_view()),
    path("messages/", contexts.MessagesView.as_view()),
    path("messages/pop/", contexts.MessagePopView.as_view()),
    re_path(r"^renders/(?P<render_id>rnd_[A-Za-z0-9_\-]{1,28})/usage/$", usage.UsageReportView.as_view()),
    path("usage/", usage.ConversationUsageView.as_view()),
]

urlpatterns = [
    path("conversations/", conversations.ConversationListView.as_view(), name="conversation-list"),
    path("usage/", usage.TenantUsageView.as_view(), name="usage-list"),
    path("conversations/import/", exports.TimelineImportView.as_view(), name="conversation-import"),
    re_path(
        rf"^conversations/{CONV}/$",
        conversations.ConversationDetailView.as_view(),
        name="conversation-detail",
    ),
    re_path(rf"^conversations/{CONV}/contexts/$", contexts.ContextListView.as_view(), name="context-list"),
    re_path(
        rf"^conversations/{CONV}/contexts/{CONTEXT}/$",
        contexts.ContextDetailView.as_view(),
        name="context-detail",
    ),
    re_path(
        rf"^conversations/{CONV}/full-context/$", contexts.FullContextView.as_view(), name="full-context"
    ),
    re_path(rf"^conversations/{CONV}/contexts/{CONTEXT}/", include(timeline_patterns)),
    re_path(rf"^conversations/{CONV}/", include(timeline_patterns)),
]
