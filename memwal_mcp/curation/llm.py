"""The LLM decider: one chat completion per proposal with nominees, via the openai package.

Works with any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, LM Studio). Every
failure -- timeout, HTTP error, refusal, garbage -- is "no decision", which the
evaluator turns into a conservative CREATE. It never raises into the worker.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

import anyio

from ..config import LLMSettings
from .prompt import LLMDecision, Nominee, build_messages, parse_decision

log = logging.getLogger("memwal_mcp.curation")


class Decider(Protocol):
    @property
    def model(self) -> str: ...

    async def decide(self, proposal: str, nominees: Sequence[Nominee]) -> LLMDecision | None: ...


class OpenAIDecider:
    def __init__(self, settings: LLMSettings) -> None:
        from openai import AsyncOpenAI  # imported here: keeps server start-up fast

        if not settings.base_url or not settings.model:
            raise ValueError("the LLM tier needs both MEMWAL_LLM__BASE_URL and MEMWAL_LLM__MODEL")
        self._settings = settings
        self._client = AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout_s,
            max_retries=0,
        )

    @property
    def model(self) -> str:
        return self._settings.model or ""

    async def decide(self, proposal: str, nominees: Sequence[Nominee]) -> LLMDecision | None:
        try:
            with anyio.fail_after(self._settings.timeout_s + 1):
                response = await self._client.chat.completions.create(
                    model=self.model,
                    messages=build_messages(proposal, nominees),  # type: ignore[arg-type]
                    max_tokens=self._settings.max_output_tokens,
                    temperature=0,
                )
        except TimeoutError:
            log.warning("LLM decision timed out after %.1fs", self._settings.timeout_s)
            return None
        except Exception as exc:  # any transport/HTTP/SDK failure means "no decision"
            log.warning("LLM decision failed: %s: %s", type(exc).__name__, exc)
            return None
        # The reply is untrusted data: the SDK does not check its shape, so `content` may be a
        # number, a list, null or absent, and any surprise in reading it is "no decision".
        try:
            reply = response.choices[0].message.content
            decision = parse_decision(reply, nominees) if isinstance(reply, str) else None
        except Exception as exc:
            log.warning("LLM reply could not be read: %s: %s", type(exc).__name__, exc)
            return None
        if decision is None:
            log.warning("LLM reply had no usable decision: %s", _shown(reply))
        return decision


def _shown(reply: object) -> str:
    """A reply for the log, cut short; `repr` of whatever arrived, so nothing in it can fail."""
    text = repr(reply) if not isinstance(reply, str) else repr(reply[:200])
    return text[:240]


def make_decider(settings: LLMSettings) -> Decider | None:
    if not settings.base_url or not settings.model:
        return None
    return OpenAIDecider(settings)
