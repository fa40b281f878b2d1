from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from alerts.api.urls import urlpatterns as alerts_api
from apitokens.api.urls import urlpatterns as api_tokens_api
from approvals.api.urls import urlpatterns as approvals_api
from audit.api.urls import urlpatterns as audit_api
from backoffice.api.index import ApiIndexView
from backoffice.api.step_up import StepUpView
from backoffice.favicon import favicon
from games import views as public_views
from games.api.urls import urlpatterns as games_api
from settlement.api.urls import bet_urlpatterns as settlement_bets_api
from wallet.api.urls import urlpatterns as wallet_api
from webhooks.api.urls import urlpatterns as webhooks_api

# /api/v1/: one namespace ("api") over the apps' routes.
api_v1 = ([*games_api, *settlement_bets_api, *wallet_api, *audit_api, *approvals_api, *alerts_api, *webhooks_api,
           *api_tokens_api], "api")

urlpatterns = [
    path("", public_views.fairness, name="fairness"),
    path("pairs/<str:server_seed_hash>/", public_views.revealed_pair, name="public-pair"),
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("api/v1/settlement/", include("settlement.api.urls")),
    # A fresh second factor for a session's next STEP_UP_MINUTES (backoffice.step_up).
    path("api/v1/auth/step-up/", StepUpView.as_view(), name="api-step-up"),
    path("api/v1/", ApiIndexView.as_view(patterns=tuple(api_v1[0])), name="api-index"),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI from drf-spectacular-sidecar's static files: works with no internet. The split view
    # serves its start-up script as a file of its own (?script), so the page needs no inline script
    # (CONTENT_SECURITY_POLICY); its template has no inline style either.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema",
                                                          template_name="api/swagger_ui.html"), name="api-docs"),
]

# JSON under /api/, a styled page elsewhere (backoffice.errors); the 403 page names the role needed.
handler400 = "backoffice.errors.bad_request"
handler403 = "backoffice.admin.denied.permission_denied"
handler404 = "backoffice.errors.not_found"
handler500 = "backoffice.errors.server_error"
