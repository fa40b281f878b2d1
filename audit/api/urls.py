from django.urls import path

from audit.api import views

urlpatterns = [
    path("audit/head/", views.AuditHeadView.as_view(), name="audit-head"),
    path("audit/events/", views.AuditEventListView.as_view(), name="audit-events"),
]
