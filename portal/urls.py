"""The portal's URLs: end-user pages under /portal/, reviewer pages under /portal/review/."""

from django.urls import include, path

from portal import review_views, views

app_name = "portal"

review_patterns = (
    [
        path("", review_views.ReviewQueueView.as_view(), name="queue"),
        path(
            "items/<uuid:item_id>/approve/",
            review_views.ReviewDecideView.as_view(decision="approve"),
            name="approve",
        ),
        path(
            "items/<uuid:item_id>/reject/",
            review_views.ReviewDecideView.as_view(decision="reject"),
            name="reject",
        ),
        path("conflicts/", review_views.ConflictListView.as_view(), name="conflicts"),
        path(
            "conflicts/<uuid:item_id>/resolve/",
            review_views.ConflictResolveView.as_view(),
            name="resolve",
        ),
        path("rejected/", review_views.RejectedWritesView.as_view(), name="rejected"),
        path("deletions/", review_views.DeadLetterView.as_view(), name="deletions"),
        path(
            "deletions/<uuid:operation_id>/retry/",
            review_views.DeadLetterRetryView.as_view(),
            name="deletion-retry",
        ),
        path("health/", review_views.HealthView.as_view(), name="health"),
    ],
    "review",
)

urlpatterns = [
    path("", views.MemoryListView.as_view(), name="home"),
    path("memories/<uuid:memory_id>/", views.MemoryDetailView.as_view(), name="memory"),
    path(
        "memories/<uuid:memory_id>/correct/",
        views.MemoryCorrectView.as_view(),
        name="memory-correct",
    ),
    path(
        "memories/<uuid:memory_id>/confirm/",
        views.MemoryConfirmView.as_view(),
        name="memory-confirm",
    ),
    path(
        "memories/<uuid:memory_id>/revoke/", views.MemoryRevokeView.as_view(), name="memory-revoke"
    ),
    path(
        "memories/<uuid:memory_id>/withdraw-consent/",
        views.ConsentWithdrawView.as_view(),
        name="memory-withdraw",
    ),
    path(
        "memories/<uuid:memory_id>/delete/", views.MemoryDeleteView.as_view(), name="memory-delete"
    ),
    path("delete-everything/", views.DeleteEverythingView.as_view(), name="delete-everything"),
    path("deletions/", views.DeletionListView.as_view(), name="deletions"),
    path("deletions/<uuid:operation_id>/", views.DeletionDetailView.as_view(), name="deletion"),
    path(
        "deletions/<uuid:operation_id>/status.json",
        views.DeletionStatusView.as_view(),
        name="deletion-status",
    ),
    path("export/", views.ExportView.as_view(), name="export"),
    path("review/", include(review_patterns)),
]
