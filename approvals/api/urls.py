from django.urls import path

from approvals.api import views

urlpatterns = [
    path("approvals/", views.ApprovalListView.as_view(), name="approval-list"),
    path("approvals/<int:approval_id>/", views.ApprovalDetailView.as_view(), name="approval-detail"),
    path("approvals/<int:approval_id>/approve/", views.ApprovalApproveView.as_view(), name="approval-approve"),
    path("approvals/<int:approval_id>/reject/", views.ApprovalRejectView.as_view(), name="approval-reject"),
]
