"""Scripted chat models for the LangChain tests: they answer from a script and record what they were
given. ``ScriptedChat`` is a plain ``BaseChatModel`` (the middleware renders ``openai_chat`` for it);
``ScriptedAnthropic`` and ``ScriptedOpenAI`` are the real ``ChatAnthropic`` / ``ChatOpenAI`` with only
the network call replaced: they record the request body the provider package builds from the messages
(``_get_request_payload``), so a test sees exactly what would be sent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_anthropic import ChatAnthropic
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_openai import ChatOpenAI
from pydantic import Field


@dataclass
class Script:
    """A list of answers, the inputs seen, the payloads built."""

    answers: list[Any] = field(default_factory=list)
    inputs: list[Any] = field(default_factory=list)
    payloads: list[Any] = field(default_factory=list)


class _Scripted:
    script: Script

    def answers(self, *answers: AIMessage) -> None:
        self.script.answers.extend(answers)

    @property
    def inputs(self) -> list[list[BaseMessage]]:
        return self.script.inputs

    @property
    def payloads(self) -> list[dict[str, Any]]:
        return self.script.payloads

    def _answer(self, messages: list[BaseMessage], payload: dict[str, Any] | None) -> ChatResult:
        self.script.inputs.append(list(messages))
        if payload is not None:
            self.script.payloads.append(payload)
        if not self.script.answers:
            raise AssertionError("the script has no answer left")
        return ChatResult(generations=[ChatGeneration(message=self.script.answers.pop(0))])


class ScriptedChat(_Scripted, BaseChatModel):
    script: Script = Field(default_factory=Script)
    model_name: str = "scripted-1"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._answer(messages, None)


class ScriptedAnthropic(_Scripted, ChatAnthropic):
    script: Script = Field(default_factory=Script)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._answer(messages, self._get_request_payload(messages, stop=stop, **kwargs))


class ScriptedOpenAI(_Scripted, ChatOpenAI):
    script: Script = Field(default_factory=Script)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._answer(messages, self._get_request_payload(messages, stop=stop, **kwargs))
