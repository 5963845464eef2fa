"""A scripted upstream for the LiteLLM proxy, so that LiteLLM's own code
writes the bytes cox reads in bins/cox/tests/litellm.rs.

The proxy loads this file as a custom provider (see config.yaml). The case
is named in the session's first user message as `CASE:<name>`; whether the
last message is a tool result says which round of the case is asked for.
Every answer ends with usage, so the test can check it was booked.

Cases:
- write_then_text: a `write` call for hello.txt, then a text answer;
- rate_limit_mid: the first call streams some text, then fails with a rate
  limit; the next one answers whole;
- length_in_tool: a `write` call cut at the output limit, then (once the
  model is told) a text answer.
"""

import asyncio
import re

import litellm
from litellm import CustomLLM

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}

# Calls seen per session (its first user message): a case may fail on its
# first call only.
CALLS = {}


def chunk(text="", tool=None, finish="", usage=None):
    return {
        "text": text,
        "tool_use": tool,
        "is_finished": bool(finish),
        "finish_reason": finish,
        "usage": usage,
        "index": 0,
    }


def tool(arguments, id=None, name=None):
    return {
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
        "index": 0,
    }


def text_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def case_of(messages):
    for message in messages or []:
        if message.get("role") == "user":
            found = re.search(r"CASE:(\w+)", text_of(message))
            if found:
                return found.group(1)
    return "write_then_text"


def after_tools(messages):
    return bool(messages) and messages[-1].get("role") == "tool"


def rate_limit(model):
    return litellm.RateLimitError(
        message="scripted upstream rate limit", llm_provider="cox", model=model
    )


def first_user_text(messages):
    for message in messages or []:
        if message.get("role") == "user":
            return text_of(message)
    return ""


def script(case, messages, model):
    session = first_user_text(messages)
    calls = CALLS.get(session, 0)
    CALLS[session] = calls + 1
    done = [chunk(finish="stop", usage=USAGE)]
    if case == "write_then_text":
        if after_tools(messages):
            return [chunk("Created "), chunk("hello.txt.")] + done
        return [
            chunk(tool=tool("", id="call_w", name="write")),
            chunk(tool=tool('{"path": "hello.txt", ')),
            chunk(tool=tool('"content": "hi\\n"}')),
            chunk(finish="tool_calls", usage=USAGE),
        ]
    if case == "rate_limit_mid":
        if calls == 0:
            return [chunk("Half an "), chunk("answer"), rate_limit(model)]
        return [chunk("The whole answer.")] + done
    if case == "length_in_tool":
        if after_tools(messages):
            return [chunk("Wrote it in parts.")] + done
        return [
            chunk("Writing."),
            chunk(tool=tool("", id="call_cut", name="write")),
            chunk(tool=tool('{"path": "hello.txt", "content": "hi hi')),
            chunk(finish="length", usage=USAGE),
        ]
    raise ValueError(f"unknown case {case!r}")


class Upstream(CustomLLM):
    def completion(self, *args, **kwargs):
        raise litellm.APIConnectionError(
            message="only streaming is scripted",
            llm_provider="cox",
            model=kwargs.get("model", ""),
        )

    async def acompletion(self, *args, **kwargs):
        return self.completion(*args, **kwargs)

    def streaming(self, *args, **kwargs):
        return self.completion(*args, **kwargs)

    async def astreaming(self, *args, **kwargs):
        messages = kwargs.get("messages")
        model = kwargs.get("model", "")
        for item in script(case_of(messages), messages, model):
            if isinstance(item, BaseException):
                raise item
            # Apart in time, so a client sees the text before the error.
            await asyncio.sleep(0.02)
            yield item


upstream = Upstream()
