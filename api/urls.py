from django.urls import path, register_converter

from api import deletions, memories, retrieval, reviews, subject_tokens, tasks, views
from api.converters import AnyCaseUUIDConverter

# An id in a path, in either case (the schema: SPECTACULAR_SETTINGS' PATH_CONVERTER_OVERRIDES).
register_converter(AnyCaseUUIDConverter, "anyuuid")

app_name = "api"

urlpatterns = [
    path("whoami", views.WhoAmIView.as_view(), name="whoami"),
    path("retrieve", retrieval.RetrieveView.as_view(), name="retrieve"),
    path("traces/<anyuuid:trace_id>", retrieval.TraceDetailView.as_view(), name="trace-detail"),
    path("traces/<anyuuid:trace_id>/usage", retrieval.TraceUsageView.as_view(), name="trace-usage"),
    path("tasks/close", tasks.TaskCloseView.as_view(), name="task-close"),
    path("subject-tokens", subject_tokens.SubjectTokenView.as_view(), name="subject-tokens"),
    path("deletions", deletions.DeletionListCreateView.as_view(), name="deletions"),
    path(
        "deletions/<anyuuid:operation_id>",
        deletions.DeletionDetailView.as_view(),
        name="deletion-detail",
    ),
    path("memories", memories.MemoryListCreateView.as_view(), name="memories"),
    path("memories/batch", memories.MemoryBatchView.as_view(), name="memories-batch"),
    # GET: detail with provenance, chain and events; DELETE: a deletion operation.
    path("memories/<anyuuid:memory_id>", memories.MemoryDetailView.as_view(), name="memory-detail"),
    path(
        "memories/<anyuuid:memory_id>/supersede",
        memories.MemorySupersedeView.as_view(),
        name="memory-supersede",
    ),
    path(
        "memories/<anyuuid:memory_id>/revoke",
        memories.MemoryRevokeView.as_view(),
        name="memory-revoke",
    ),
    path("review/items", reviews.ReviewItemListView.as_view(), name="review-items"),
    path(
        "review/items/<anyuuid:item_id>",
        reviews.ReviewItemDetailView.as_view(),
        name="review-item",
    ),
    path(
        "review/items/<anyuuid:item_id>/approve",
        reviews.ReviewApproveView.as_view(),
        name="review-approve",
    ),
    path(
        "review/items/<anyuuid:item_id>/reject",
        reviews.ReviewRejectView.as_view(),
        name="review-reject",
    ),
]
