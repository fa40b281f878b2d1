"""Routes of /api/v1/ for games, seeds, rounds and bets."""

from django.urls import path

from games.api import policies, views

urlpatterns = [
    path("games/", views.GameListView.as_view(), name="game-list"),
    path("rtp-policies/", policies.RtpPolicyListView.as_view(), name="rtp-policy-list"),
    path("rtp-policies/<int:policy_id>/", policies.RtpPolicyDetailView.as_view(), name="rtp-policy-detail"),
    path("games/<slug:slug>/", views.GameDetailView.as_view(), name="game-detail"),
    path("games/<slug:slug>/odds/", views.GameOddsView.as_view(), name="game-odds"),
    path("games/<slug:slug>/seeds/", views.GameSeedsView.as_view(), name="game-seeds"),
    path("games/<slug:slug>/seeds/rotate/", views.SeedRotateView.as_view(), name="game-seeds-rotate"),
    path("games/<slug:slug>/rounds/", views.GameRoundsView.as_view(), name="game-rounds"),
    path("rounds/", views.RoundListView.as_view(), name="round-list"),
    path("rounds/<id:round_id>/", views.RoundDetailView.as_view(), name="round-detail"),
    path("rounds/<id:round_id>/bets/", views.RoundBetsView.as_view(), name="round-bets"),
    path("rounds/<id:round_id>/bets/bulk/", views.RoundBetsBulkView.as_view(), name="round-bets-bulk"),
    path("rounds/<id:round_id>/deal/", views.RoundDealView.as_view(), name="round-deal"),
    path("rounds/<id:round_id>/void/", views.RoundVoidView.as_view(), name="round-void"),
    path("rounds/<id:round_id>/verify/", views.RoundVerifyView.as_view(), name="round-verify"),
    path("bets/", views.BetListView.as_view(), name="bet-list"),
    path("bets/<id:bet_id>/", views.BetDetailView.as_view(), name="bet-detail"),
]
