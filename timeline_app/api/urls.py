from django.urls import include, path, re_path

from timeline_app.api import messages, views

CONV = r"(?P<conv>[A-Za-z0-9][A-Za-z0-9_.\-]{0,63})"
CONTEXT = r"(?P<context>[a-z][a-z0-9_]{0,63})"

# Sub-paths shared by the main context and every named context.
timeline_patterns = [
    path("blocks/", views.BlocksView.as_view()),
    path("turns/", views.TurnsView.as_view()),
    path("render/", views.RenderView.as_view()),
    path("compact/", views.CompactView.as_view()),
    path("hide/", views.HideView.as_view()),
    path("search/", views.SearchView.as_view()),
    path("sources/", views.SourcesView.as_view()),
    path("timeline/", views.TimelineExportView.as_view()),
    path("messages/", messages.MessagesView.as_view()),
]

urlpatterns = [
    path("conversations/", views.ConversationListView.as_view(), name="conversation-list"),
    path("conversations/import/", views.TimelineImportView.as_view(), name="conversation-import"),
    re_path(rf"^conversations/{CONV}/$", views.ConversationDetailView.as_view(), name="conversation-detail"),
    re_path(rf"^conversations/{CONV}/contexts/$", messages.ContextListView.as_view(), name="context-list"),
    re_path(
        rf"^conversations/{CONV}/contexts/{CONTEXT}/$",
        messages.ContextDetailView.as_view(),
        name="context-detail",
    ),
    re_path(
        rf"^conversations/{CONV}/full-context/$", messages.FullContextView.as_view(), name="full-context"
    ),
    re_path(rf"^conversations/{CONV}/contexts/{CONTEXT}/", include(timeline_patterns)),
    re_path(rf"^conversations/{CONV}/", include(timeline_patterns)),
]
