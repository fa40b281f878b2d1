"""The OpenAPI 3 schema and the Swagger UI, which must work with no internet."""

import re

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command

from games.api import urls as api_urls
from settlement.api.urls import bet_urlpatterns

pytestmark = pytest.mark.django_db


def test_the_schema_is_openapi_3_and_covers_every_endpoint(api_as):
    response = api_as(None).get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert set(schema["components"]["securitySchemes"]) >= {"tokenAuth", "cookieAuth"}
    documented = {(path, method.upper()) for path, operations in schema["paths"].items() for method in operations}
    for pattern in [*api_urls.urlpatterns, *bet_urlpatterns]:
        path = "/api/v1/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        for method in pattern.callback.view_class.required_permissions:
            assert (path, method) in documented, (path, method)


def test_money_is_documented_as_decimal_strings(api_as):
    schema = api_as(None).get("/api/schema/", {"format": "json"}).json()
    stake = schema["components"]["schemas"]["Bet"]["properties"]["stake"]
    assert stake["type"] == "string" and stake["format"] == "decimal"


def test_the_schema_generates_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert (tmp_path / "schema.yaml").read_text().startswith("openapi: 3.")


def test_the_docs_reference_only_local_static_files(api_as):
    response = api_as(None).get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert not re.search(r"https?://|//cdn|unpkg|jsdelivr", html), "the docs must not load anything remote"
    references = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert references
    # The start-up script is the page's own, a file of its own (no inline script: the CSP allows none).
    start_up = [reference for reference in references if reference.startswith("/api/docs/?")]
    assert len(start_up) == 1, references
    for reference in references:
        if reference in start_up:
            continue
        assert reference.startswith("/static/"), reference
        assert finders.find(reference.removeprefix("/static/")), f"{reference} is not a local static file"
    script = api_as(None).get(start_up[0].replace("&amp;", "&")).content.decode()
    assert '"/api/schema/"' in script
    assert not re.search(r"https?://|//cdn|unpkg|jsdelivr", script)


def test_the_docs_open_with_an_introduction(api_as):
    description = api_as(None).get("/api/schema/", {"format": "json"}).json()["info"]["description"]
    for topic in ("## Roles", "**integration**", "**support**", "**regulator**", "create_staff_user",
                  "Authorization: Token",
                  "## Idempotency keys", "idempotency_key", "## Errors", '400 {"stake"', "X-Request-ID",
                  "## Provably fair (PF-1)", "server_seed_hash"):
        assert topic in description, topic


def test_an_action_held_for_a_second_person_documents_its_202_body(api_as, operator, funded_account):
    schema = api_as(None).get("/api/schema/", {"format": "json"}).json()
    components = schema["components"]["schemas"]
    for path, method in (("/api/v1/games/{slug}/", "patch"), ("/api/v1/rounds/{round_id}/void/", "post"),
                         ("/api/v1/accounts/{external_id}/adjust/", "post"), ("/api/v1/games/", "post")):
        held = schema["paths"][path][method]["responses"]["202"]
        assert held["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ApprovalHeld"}, path
    assert components["ApprovalHeld"]["properties"] == {"approval": {"$ref": "#/components/schemas/Approval"}}
    # The body answered is the one documented.
    funded_account("whale", "0.00")
    response = api_as(operator).post("/api/v1/accounts/whale/adjust/", {"amount": "50000.00", "reason": "jackpot"})
    assert response.status_code == 202
    assert set(response.json()) == set(components["ApprovalHeld"]["required"])
    assert set(response.json()["approval"]) == set(components["Approval"]["properties"])
