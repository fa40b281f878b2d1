from django.urls import path

from wallet.api import views

urlpatterns = [
    path("accounts/", views.AccountListView.as_view(), name="account-list"),
    path("accounts/<str:external_id>/", views.AccountDetailView.as_view(), name="account-detail"),
    path("accounts/<str:external_id>/ledger/", views.AccountLedgerView.as_view(), name="account-ledger"),
    path("accounts/<str:external_id>/adjust/", views.AccountAdjustView.as_view(), name="account-adjust"),
]
