from django.urls import path

from api import deletions, retrieval, views

app_name = "api"

urlpatterns = [
    path("whoami", views.WhoAmIView.as_view(), name="whoami"),
    path("retrieve", retrieval.RetrieveView.as_view(), name="retrieve"),
    path("traces/<uuid:trace_id>", retrieval.TraceDetailView.as_view(), name="trace-detail"),
    path("deletions", deletions.DeletionListCreateView.as_view(), name="deletions"),
    path(
        "deletions/<uuid:operation_id>",
        deletions.DeletionDetailView.as_view(),
        name="deletion-detail",
    ),
    # Until api/memories.py's detail view has delete() (then that view serves this URL).
    path("memories/<uuid:memory_id>", deletions.MemoryDeleteView.as_view(), name="memory-delete"),
]
