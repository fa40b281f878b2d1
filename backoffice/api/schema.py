"""The OpenAPI schema, as exact as the server: what the schema allows the server accepts (or
refuses only for a rule of state or business no schema can state, such as a stake within the
game's limits), and what the schema forbids the server refuses.

- Decimals are strings of ASCII digits (``ExactDecimalField``), never empty, signed only where
  negative values are allowed.
- Request bodies forbid unknown properties (the serializers refuse them: StrictInputMixin).
- Every operation documents the statuses it can answer: 400 where it reads input, 404 where its
  path names an object or it pages by cursor, 413 and 415 where it takes a body, 414 where it
  reads a query (the HTTP server's limit), 429 always.
- Links tie each created object to the operations that use it, for stateful testing.
"""

from drf_spectacular.extensions import OpenApiSerializerFieldExtension

# Strings without a pattern of their own: text the database can store (no NUL, backoffice.text) that
# is not only white space (the serializers trim text, and blank is refused).
STORABLE_TEXT = "^[^\\x00]*[^\\s\\x00][^\\x00]*$"
ERROR_BODY = {"type": "object", "description": "{field: [reason]} or {detail: reason}"}


def _json_error(description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": ERROR_BODY}}}


class ExactDecimalFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "backoffice.api.serializers.ExactDecimalField"
    match_subclasses = True  # money's MoneyDecimalField (wallet.api.serializers) too

    def map_serializer_field(self, auto_schema, direction):
        field = self.target
        whole = (field.max_digits - field.decimal_places) if field.max_digits else None
        whole_digits = f"{{1,{whole}}}" if whole else "+"
        sign = "" if field.min_value is not None and field.min_value >= 0 else "-?"
        places = f"(\\.[0-9]{{1,{field.decimal_places}}})?" if field.decimal_places else ""
        schema = {"type": "string", "format": "decimal", "pattern": f"^{sign}[0-9]{whole_digits}{places}$"}
        if direction == "request":
            schema["minLength"] = 1
        return schema


# (operation that creates, its status) -> [(link name, operationId, {parameter: response field})]
LINKS = {
    ("v1_games_create", "201"): [
        (name, operation, {"slug": "$response.body#/slug"}) for name, operation in [
            ("GetGame", "v1_games_retrieve"), ("ChangeGame", "v1_games_partial_update"),
            ("GameOdds", "v1_games_odds_retrieve"), ("GameSeeds", "v1_games_seeds_retrieve"),
            ("RotateSeeds", "v1_games_seeds_rotate_create"), ("GameRounds", "v1_games_rounds_list"),
            ("OpenRound", "v1_games_rounds_create"),
        ]],
    ("v1_games_rounds_create", "201"): [
        (name, operation, {"round_id": "$response.body#/id"}) for name, operation in [
            ("GetRound", "v1_rounds_retrieve"), ("PlaceBet", "v1_rounds_bets_create"),
            ("DealRound", "v1_rounds_deal_create"), ("VoidRound", "v1_rounds_void_create"),
            ("VerifyRound", "v1_rounds_verify_retrieve"),
        ]],
    ("v1_rounds_bets_create", "201"): [("GetBet", "v1_bets_retrieve", {"bet_id": "$response.body#/id"})],
    ("v1_webhooks_endpoints_create", "201"): [
        (name, operation, {"endpoint_id": "$response.body#/id"}) for name, operation in [
            ("GetEndpoint", "v1_webhooks_endpoints_retrieve"),
            ("ChangeEndpoint", "v1_webhooks_endpoints_partial_update"),
            ("RotateSecret", "v1_webhooks_endpoints_rotate_secret_create"),
            ("EndpointDeliveries", "v1_webhooks_endpoints_deliveries_list"),
        ]],
    ("v1_accounts_create", "201"): [
        (name, operation, {"external_id": "$response.body#/external_id"}) for name, operation in [
            ("GetAccount", "v1_accounts_retrieve"), ("AccountLedger", "v1_accounts_ledger_list"),
            ("AdjustAccount", "v1_accounts_adjust_create"),
        ]],
}


def _storable(schema: dict) -> None:
    if schema.get("type") == "string" and not {"pattern", "enum", "format"} & set(schema):
        schema["pattern"] = STORABLE_TEXT


def exact_schema(result, generator, request, public):
    """drf-spectacular postprocessing hook: the statuses, forbidden properties and links above."""
    for component_name, component in result.get("components", {}).get("schemas", {}).items():
        if component_name.endswith("Request") and component.get("type") == "object":
            component["additionalProperties"] = False
            for property_schema in component.get("properties", {}).values():
                _storable(property_schema)
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            for parameter in parameters:
                _storable(parameter.get("schema", {}))
            if any(parameter["in"] == "query" for parameter in parameters) or "requestBody" in operation:
                responses.setdefault("400", _json_error("Bad input: {field: [reason]}."))
            if any(parameter["in"] == "query" for parameter in parameters):
                # From the HTTP server itself (gunicorn's limit on the request line), before the API.
                responses.setdefault("414", {"description": "The URL is longer than the server reads."})
            if any(parameter["in"] == "path" for parameter in parameters):
                responses.setdefault("404", _json_error("No such object."))
            if any(parameter["name"] == "cursor" for parameter in parameters):
                responses.setdefault("404", _json_error("No such page: a cursor this API did not give out."))
            if method in ("post", "put", "patch"):
                responses.setdefault("413", _json_error("The body is larger than the server accepts."))
                responses.setdefault("415", _json_error("Only application/json is accepted."))
            responses.setdefault("429", _json_error("Too many requests for the token's role; see Retry-After."))
            for (operation_id, status), links in LINKS.items():
                if operation.get("operationId") == operation_id and status in responses:
                    responses[status]["links"] = {
                        name: {"operationId": target, "parameters": parameters_}
                        for name, target, parameters_ in links
                    }
    return result
