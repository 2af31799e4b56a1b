"""Issue 21.7: the client's typed answers (``timeline_client.types``) are the server's OpenAPI
components: the same keys, the same optional keys, ``None`` exactly where the schema says
nullable, and a nested component typed by its own ``TypedDict``."""

from __future__ import annotations

import types as pytypes
import typing

import pytest
from drf_spectacular.generators import SchemaGenerator
from timeline_client import types

# Every TypedDict of timeline_client.types and the component it describes.
COMPONENTS: dict[type, str] = {
    types.ConversationAnswer: "ConversationOut",
    types.ConversationDetailAnswer: "ConversationDetailOut",
    types.ConversationPage: "PaginatedConversationOutList",
    types.BlockAnswer: "BlockOut",
    types.BlocksAnswer: "BlocksOut",
    types.SourceAnswer: "SourceOut",
    types.SourcesAnswer: "SourcesPoolOut",
    types.ReadAnswer: "BlocksReadOut",
    types.SearchHit: "SearchHitOut",
    types.SearchAnswer: "SearchOut",
    types.TokensAnswer: "TokensOut",
    types.CompactionFigures: "CompactionOut",
    types.PruningAnswer: "PruningOut",
    types.CacheAnswer: "CacheOut",
    types.CacheCreationAnswer: "CacheCreationOut",
    types.UsageForecast: "UsageForecastOut",
    types.RenderAnswer: "RenderOut",
    types.CompactionAnswer: "CompactionRecordOut",
    types.CompactionQueuedAnswer: "CompactQueuedOut",
    types.CompactionsPage: "CompactionsPageOut",
    types.OperationAnswer: "OperationOut",
    types.OperationsPage: "OperationsPageOut",
    types.TokensByKind: "TokensByKindOut",
    types.ForecastTokens: "ForecastTokensOut",
    types.UsageReportAnswer: "UsageOut",
    types.ReplyAnswer: "ReplyOut",
    types.ToolCallAnswer: "ToolCallOut",
    types.UsageMiss: "MissOut",
    types.UsageAnswer: "ConversationUsageOut",
    types.TenantUsageRow: "ConversationUsageRowOut",
    types.TenantUsagePage: "PaginatedConversationUsageRowOutList",
    types.ExportBlock: "ExportBlockOut",
    types.ExportCompaction: "ExportCompactionOut",
    types.TimelineExport: "TimelineExportOut",
    types.ContextAnswer: "ContextOut",
    types.ContextsAnswer: "ContextListOut",
    types.MessagesAnswer: "MessagesOut",
}
# Components described by a TypedDict shared with another one of the same shape.
SAME_SHAPE = {"UsageTotalsTokensOut": types.TokensByKind}
# The component each path answers, for the client's methods (status 200/201/202).
ANSWERS = {
    ("/api/v1/conversations/", "post"): "ConversationOut",
    ("/api/v1/conversations/{conv}/", "get"): "ConversationDetailOut",
    ("/api/v1/conversations/{conv}/render/", "post"): "RenderOut",
    ("/api/v1/conversations/{conv}/compact/", "post"): "CompactionRecordOut",
    ("/api/v1/conversations/{conv}/compactions/{compaction}/revert/", "post"): "CompactionRecordOut",
    ("/api/v1/conversations/{conv}/renders/{render_id}/usage/", "post"): "UsageOut",
    ("/api/v1/conversations/{conv}/usage/", "get"): "ConversationUsageOut",
    ("/api/v1/conversations/{conv}/search/", "get"): "SearchOut",
    ("/api/v1/conversations/{conv}/blocks/", "get"): "BlocksReadOut",
    ("/api/v1/conversations/{conv}/timeline/", "get"): "TimelineExportOut",
    ("/api/v1/conversations/{conv}/operations/", "get"): "OperationsPageOut",
    ("/api/v1/conversations/import/", "post"): "ConversationOut",
    ("/api/v1/usage/", "get"): "PaginatedConversationUsageRowOutList",
}


@pytest.fixture(scope="module")
def schemas() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def typed_dicts() -> list[type]:
    return [
        value
        for value in vars(types).values()
        if isinstance(value, type) and typing.is_typeddict(value) and value.__module__ == types.__name__
    ]


def test_every_typed_answer_names_its_component():
    assert set(typed_dicts()) == set(COMPONENTS) | {types.UsageTotals}


def component_of(hint: object) -> str | None:
    """The component a property's type stands for (``X | None`` → X; ``list[X]`` → X)."""
    if typing.get_origin(hint) in (typing.Union, pytypes.UnionType):
        (hint,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if typing.get_origin(hint) is list:
        (hint,) = typing.get_args(hint)
    if isinstance(hint, type) and typing.is_typeddict(hint):
        return COMPONENTS[hint]
    return None


def referenced(prop: dict) -> str | None:
    for candidate in (prop, prop.get("items") or {}, *prop.get("allOf", [])):
        if "$ref" in candidate:
            name = candidate["$ref"].split("/")[-1]
            return None if name.endswith("Enum") else name
    return None


@pytest.mark.parametrize("answer", list(COMPONENTS), ids=lambda t: t.__name__)
def test_the_typed_answer_is_its_openapi_component(answer, schemas):
    component = schemas["components"]["schemas"][COMPONENTS[answer]]
    properties = component["properties"]
    required = set(component.get("required", []))
    assert answer.__required_keys__ == required, "keys the service always sends"
    assert answer.__optional_keys__ == set(properties) - required, "keys the service may leave out"

    hints = typing.get_type_hints(answer)
    for key, prop in properties.items():
        nullable = type(None) in typing.get_args(hints[key])
        assert nullable == bool(prop.get("nullable")), f"{key}: None exactly where the schema says nullable"
        nested = referenced(prop)
        expected = COMPONENTS.get(SAME_SHAPE[nested]) if nested in SAME_SHAPE else nested
        assert component_of(hints[key]) == expected, f"{key} is typed by its component's TypedDict"


@pytest.mark.parametrize("shared, answer", list(SAME_SHAPE.items()))
def test_a_shared_typed_answer_fits_every_component_it_stands_for(shared, answer, schemas):
    component = schemas["components"]["schemas"][shared]
    assert answer.__required_keys__ == set(component["required"])
    assert answer.__optional_keys__ == set()


@pytest.mark.parametrize("path, method", list(ANSWERS), ids=lambda p: str(p))
def test_the_client_methods_answer_the_component_of_their_endpoint(path, method, schemas):
    responses = schemas["paths"][path][method]["responses"]
    answered = [
        response["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
        for status, response in responses.items()
        if status in ("200", "201")
    ]
    assert ANSWERS[path, method] in answered
