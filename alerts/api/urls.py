from django.urls import path

from alerts.api import views

urlpatterns = [
    path("alerts/", views.AlertListView.as_view(), name="alert-list"),
    path("alerts/<int:alert_id>/acknowledge/", views.AlertAcknowledgeView.as_view(), name="alert-acknowledge"),
    path("alerts/<int:alert_id>/resolve/", views.AlertResolveView.as_view(), name="alert-resolve"),
    path("incidents/", views.IncidentListView.as_view(), name="incident-list"),
    path("incidents/<int:incident_id>/", views.IncidentDetailView.as_view(), name="incident-detail"),
]
