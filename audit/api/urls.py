from django.urls import path

from audit.api import views

urlpatterns = [
    path("audit/head/", views.AuditHeadView.as_view(), name="audit-head"),
    path("audit/proofs/inclusion/", views.InclusionProofView.as_view(), name="audit-inclusion-proof"),
    path("audit/proofs/consistency/", views.ConsistencyProofView.as_view(), name="audit-consistency-proof"),
    path("audit/events/", views.AuditEventListView.as_view(), name="audit-events"),
    path("auth-events/", views.AuthEventListView.as_view(), name="auth-events"),
]
