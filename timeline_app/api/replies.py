"""The native agent loop's writes: a provider's reply as it came (``…/replies/``) and the results
of its tool calls (``…/tool-results/``). Each view serves the main context and every named one."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from timeline_app.api import serializers as s
from timeline_app.api.base import TenantView, validated_body
from timeline_app.api.fields import (
    Base64Field,
    StrictBooleanField,
    StrictCharField,
    StrictDictField,
    StrictSerializer,
    check_storable,
)
from timeline_app.api.schema import operation
from timeline_app.api.serializers import MODEL_REGEX
from timeline_app.api.timelines import MAIN, REPLAY_NOTE, written
from timeline_app.api.usage import UsageOut
from timeline_app.domain import identifiers
from timeline_app.services.replies import NewToolResult, reply_record, tool_results_record

MAX_RESULTS = 500


class ReplyIn(StrictSerializer):
    response = StrictDictField(
        help_text='the provider\'s reply as it came, as JSON (`model_dump(mode="json")` of the SDK '
        "object): an Anthropic `Message`, an OpenAI `Response` or `ChatCompletion`, a Gemini "
        "`GenerateContentResponse`"
    )
    render_id = StrictCharField(
        required=False,
        regex=f"^{identifiers.RENDER_ID}$",
        help_text="the render the call was made from: the reply's usage becomes its usage report",
    )
    tools = serializers.ListField(
        child=StrictCharField(max_length=256),
        required=False,
        default=list,
        max_length=1000,
        help_text="your declared tool names (the timeline's), to map shortened provider names back",
    )
    model = StrictCharField(
        required=False, regex=MODEL_REGEX, help_text="the model for the usage report (default: the reply's)"
    )


class ToolCallOut(serializers.Serializer[Any]):
    tool_call_id = serializers.CharField(help_text="the provider's id: answer it in …/tool-results/")
    name = serializers.CharField(help_text="the declared (timeline) tool name")
    provider_name = serializers.CharField(help_text="the name as the model sent it")
    input = serializers.DictField(help_text="the arguments")


class ReplyOut(s.BlocksOut):
    response_id = serializers.CharField()
    format = serializers.ChoiceField(choices=["anthropic", "openai_responses", "openai_chat", "gemini"])
    tool_calls = ToolCallOut(many=True, help_text="the calls the agent now has to run, in order")
    usage = UsageOut(allow_null=True, help_text="the render's usage report (null without `render_id`)")


class ImageIn(StrictSerializer):
    mime = StrictCharField(max_length=128, regex=r"^image/[a-z0-9.+\-]+$")
    base64 = Base64Field()


class ToolResultIn(StrictSerializer):
    tool_call_id = StrictCharField(max_length=128, help_text="the call this answers")
    output = serializers.JSONField(
        help_text="text (stored as text/plain) or any JSON value (stored as application/json)"
    )
    is_error = StrictBooleanField(required=False, default=False)
    images = ImageIn.many_init(required=False, default=list, max_length=20)

    def validate_output(self, value: Any) -> Any:
        check_storable(value)
        return value


class ToolResultsIn(StrictSerializer):
    results = ToolResultIn.many_init(allow_empty=False, max_length=MAX_RESULTS)


class RepliesView(TenantView):
    """A provider's reply stored as blocks, with its usage as the render's report."""

    @operation(
        summary="Store a provider's reply as it came (the native agent loop)",
        description="Stores the reply's parts as blocks of the current turn, in the reply's order: "
        "thinking / reasoning / thought signatures as `react.thinking`, text as `react.notes` when "
        "the reply calls tools and as the turn's `assistant.completion` when it does not (a refusal "
        "too, `meta.refusal`), each tool call as `react.tool.call` with the provider's id and the "
        "declared name; with `render_id`, the reply's usage as that render's usage report; all in one "
        "transaction. Answers the stored blocks and the tool calls to run. Idempotent by the "
        f"response id: the same body again answers the stored blocks; {REPLAY_NOTE}. Another body "
        "under the same id, or other usage for the render, is a 409. Not a reply of a known shape, "
        "no response id, or a malformed part: 400 naming the field; an unknown `render_id`: 404.",
        request=ReplyIn,
        responses={201: ReplyOut, 200: ReplyOut},
        errors=(400, 401, 404, 409),
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(ReplyIn, request)
        timeline = self.timeline_for_write(request, conv, context)
        recorded = reply_record(
            timeline=timeline,
            response=data["response"],
            render_id=data.get("render_id"),
            declared=data["tools"],
            model=data.get("model"),
            now=timezone.now(),
        )
        usage = None
        if recorded.usage is not None:
            recorded.usage.timeline = timeline
            usage = UsageOut(recorded.usage).data
        body = {
            **s.BlocksOut({"blocks": recorded.rows}).data,
            "response_id": recorded.reply.response_id,
            "format": recorded.reply.format,
            "tool_calls": [call.as_dict() for call in recorded.calls],
            "usage": usage,
        }
        return Response(body, status=201 if recorded.created else 200)


class ToolResultsView(TenantView):
    """Results of tool calls, by call id, each in the turn of its call."""

    @operation(
        summary="Store the results of tool calls by call id",
        description="Each result becomes a `react.tool.result` in the turn of its call (`meta.tool_id` "
        "the call's tool, `meta.status` `error` and `meta.is_error` when `is_error`): text as "
        "text/plain, any other JSON value as application/json, each image one more result block "
        "of the call. A call id no stored call carries, or one given twice, is a 400 naming it. "
        f"Idempotent per call: {REPLAY_NOTE}; another result for an answered call is a 409.",
        request=ToolResultsIn,
        responses={201: s.BlocksOut, 200: s.BlocksOut},
        errors=(400, 401, 404, 409),
    )
    @transaction.atomic(durable=True)
    def post(self, request: Request, conv: str, context: str = MAIN) -> Response:
        data = validated_body(ToolResultsIn, request)
        timeline = self.timeline_for_write(request, conv, context)
        appended = tool_results_record(
            timeline=timeline,
            results=[
                NewToolResult(
                    tool_call_id=item["tool_call_id"],
                    output=item["output"],
                    is_error=item["is_error"],
                    images=[(image["mime"], image["base64"]) for image in item["images"]],
                )
                for item in data["results"]
            ],
        )
        return Response(s.BlocksOut({"blocks": appended.rows}).data, status=written(appended))
