from django.urls import path

from webhooks.api import views

urlpatterns = [
    path("webhooks/endpoints/", views.EndpointListView.as_view(), name="webhook-endpoint-list"),
    path("webhooks/endpoints/<int:endpoint_id>/", views.EndpointDetailView.as_view(), name="webhook-endpoint-detail"),
    path("webhooks/endpoints/<int:endpoint_id>/rotate-secret/", views.EndpointRotateSecretView.as_view(),
         name="webhook-endpoint-rotate-secret"),
    path("webhooks/endpoints/<int:endpoint_id>/deliveries/", views.EndpointDeliveriesView.as_view(),
         name="webhook-endpoint-deliveries"),
]
