from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from games import views as public_views

urlpatterns = [
    path("", public_views.fairness, name="fairness"),
    path("admin/", admin.site.urls),
    path("api/v1/settlement/", include("settlement.api.urls")),
    path("api/v1/", include("games.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI from drf-spectacular-sidecar's static files: works with no internet.
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]

handler404 = "games.api.views.not_found"
