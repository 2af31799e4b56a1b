"""The served OpenAPI schema is valid and declares what the service enforces (issue 12, point 5)."""

from io import StringIO

import pytest
from django.core.management import call_command
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db
C = "/api/v1/conversations/{conv}"
CTX = "/api/v1/conversations/{conv}/contexts/{context}"


@pytest.fixture
def schema(client):
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def operation(schema, path, method):
    return schema["paths"][path][method]


def parameter(schema, path, method, name):
    (found,) = [p for p in operation(schema, path, method)["parameters"] if p["name"] == name]
    return found


def component(schema, name):
    return schema["components"]["schemas"][name]


def test_openapi_schema_validates_without_warnings(tmp_path):
    target = tmp_path / "openapi.yaml"
    call_command(
        "spectacular",
        "--validate",
        "--fail-on-warn",
        "--file",
        str(target),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    text = target.read_text()
    for path in (
        "/render/",
        "/compact/",
        "/hide/",
        "/search/",
        "/sources/",
        "/timeline/",
        "/turns/",
        "/conversations/import/",
    ):
        assert path in text


def test_served_schema_passes_openapi_spec_validator(schema):
    validate(schema)  # raises on e.g. "Path parameter 'context' ... was not resolved"


def test_path_parameters_are_declared_exactly_where_the_path_has_them(schema):
    for path, item in schema["paths"].items():
        for method, op in item.items():
            declared = sorted(p["name"] for p in op.get("parameters", []) if p["in"] == "path")
            in_path = sorted(part[1:-1] for part in path.split("/") if part.startswith("{"))
            assert declared == in_path, (method, path)
    context = parameter(schema, f"{CTX}/render/", "post", "context")
    assert context["schema"]["pattern"] == "^[a-z][a-z0-9_]{0,63}$"


def test_every_operation_documents_its_errors_in_the_one_error_shape(schema):
    error_ref = "#/components/schemas/ErrorOut"
    for path, item in schema["paths"].items():
        for method, op in item.items():
            assert "401" in op["responses"], (method, path)
            for code, response in op["responses"].items():
                if code.startswith("4"):
                    assert response["content"]["application/json"]["schema"]["$ref"] == error_ref
    assert sorted(component(schema, "ErrorBodyOut")["required"]) == ["code", "details", "message"]


def test_query_parameter_constraints_are_declared(schema):
    limit = parameter(schema, "/api/v1/conversations/", "get", "limit")["schema"]
    assert (limit["minimum"], limit["maximum"]) == (1, 200)
    q = parameter(schema, f"{C}/search/", "get", "q")
    assert q["required"] and q["schema"]["maxLength"] == 500 and q["schema"]["pattern"].startswith("[^")
    path = parameter(schema, f"{C}/blocks/", "get", "path")
    # optional since GET …/blocks/ without it lists the context's blocks
    assert not path.get("required") and path["schema"]["pattern"].startswith("^(ar|fi|tc|su|so):")
    page = parameter(schema, f"{C}/blocks/", "get", "limit")["schema"]
    assert (page["minimum"], page["maximum"]) == (1, 200)
    cursor = parameter(schema, f"{C}/compactions/", "get", "cursor")["schema"]
    assert cursor["pattern"] == "^cmp_[0-9a-f]{16}$"
    window = parameter(schema, f"{C}/timeline/", "get", "window")
    assert window["schema"]["enum"] == ["all", "visible"]


def test_body_constraints_are_declared(schema):
    render = component(schema, "RenderInRequest")
    assert render["properties"]["now"]["format"] == "date-time"
    assert render["not"] == {"required": ["system", "system_tokens"]}
    assert component(schema, "BlocksInRequest")["properties"]["blocks"]["minItems"] == 1
    assert component(schema, "SourcesInRequest")["properties"]["sources"]["minItems"] == 1
    assert component(schema, "MessagesInRequest")["properties"]["messages"]["minItems"] == 1
    hide = component(schema, "HideInRequest")
    assert hide["properties"]["path"]["pattern"].startswith("^(ar|fi|tc|su|so):")
    assert "path" in hide["required"]
    block = component(schema, "BlockInRequest")["properties"]
    assert block["base64"]["oneOf"][0]["format"] == "byte" and block["text"]["maxLength"] > 0


def test_strict_input_serializers_reject_unknown_fields_in_the_schema_too(schema):
    strict = [name for name in schema["components"]["schemas"] if name.endswith("Request")]
    assert len(strict) >= 10
    for name in strict:
        assert component(schema, name)["additionalProperties"] is False, name


def test_settings_keys_and_ranges_are_declared(schema):
    settings = component(schema, "ConversationCreateInRequest")["properties"]["settings"]
    assert settings["additionalProperties"] is False
    assert settings["properties"]["max_tokens"] == {"type": "integer", "minimum": 1000, "maximum": 10_000_000}
    assert settings["properties"]["threshold"]["type"] == "number"
    assert settings["properties"]["keep_recent_tokens"]["nullable"] is True


def test_strategy_shapes_are_declared(schema):
    strategy = component(schema, "ContextUpdateInRequest")["properties"]["compaction_strategy"]
    names = [
        shape["properties"]["name"]["enum"]
        for shape in strategy["oneOf"]
        if "name" in shape.get("properties", {})
    ]
    assert names == [["summarize"], ["truncate_oldest"], ["sliding_window"]]
    truncate = strategy["oneOf"][2]
    assert truncate["required"] == ["name", "max_messages"] and truncate["additionalProperties"] is False


def test_docs_ui_is_served_without_a_cdn(client):
    page = client.get("/api/docs/").content.decode()
    assert "/static/drf_spectacular_sidecar/" in page
    assert "cdn" not in page.lower()
    assert client.get("/api/schema/").status_code == 200


def test_creating_operations_link_to_the_operations_on_what_they_created(schema):
    created = schema["paths"]["/api/v1/conversations/"]["post"]["responses"]["201"]["links"]
    assert created["conversations_retrieve"]["parameters"] == {"conv": "$response.body#/id"}
    assert "v1_conversations_render_create" in created
    imported = schema["paths"]["/api/v1/conversations/import/"]["post"]["responses"]["201"]["links"]
    assert imported.keys() == created.keys()
    context = schema["paths"][f"{C}/contexts/"]["post"]["responses"]["201"]["links"]
    assert context["v1_conversations_contexts_render_create"]["parameters"] == {
        "conv": "$request.path.conv",
        "context": "$response.body#/name",
    }


def test_every_write_requires_a_json_object_body(schema):
    for path, item in schema["paths"].items():
        for method in ("post", "put", "patch"):
            if method in item and "requestBody" in item[method]:
                assert item[method]["requestBody"]["required"] is True, (method, path)
