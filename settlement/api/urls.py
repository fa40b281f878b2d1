"""Routes of /api/v1/settlement/."""

from django.urls import path

from settlement.api import views

app_name = "settlement-api"

urlpatterns = [
    path("queue/", views.SettlementQueueView.as_view(), name="queue"),
    path("batches/", views.SettlementBatchListView.as_view(), name="batch-list"),
    path("sweep/", views.SettlementSweepView.as_view(), name="sweep"),
]
