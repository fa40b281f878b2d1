from django.urls import path

from apitokens.api import views

urlpatterns = [
    path("api-tokens/", views.ApiTokenListView.as_view(), name="api-token-list"),
    path("api-tokens/<id:token_id>/rotate/", views.ApiTokenRotateView.as_view(), name="api-token-rotate"),
    path("api-tokens/<id:token_id>/revoke/", views.ApiTokenRevokeView.as_view(), name="api-token-revoke"),
]
