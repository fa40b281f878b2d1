"""Routes of /api/v1/settlement/, and the settlement actions on bets under /api/v1/ (``bet_urlpatterns``)."""

from django.urls import path

from settlement.api import views

app_name = "settlement-api"

urlpatterns = [
    path("queue/", views.SettlementQueueView.as_view(), name="queue"),
    path("batches/", views.SettlementBatchListView.as_view(), name="batch-list"),
    path("sweep/", views.SettlementSweepView.as_view(), name="sweep"),
]

# Under /api/v1/ beside the other bet routes (baccarat_site.urls joins them).
bet_urlpatterns = [
    path("bets/<id:bet_id>/settle-held/", views.HeldBetSettleView.as_view(), name="bet-settle-held"),
]
