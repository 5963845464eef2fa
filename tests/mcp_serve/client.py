"""The official MCP Python SDK (PyPI `mcp`) driving `cox mcp serve`.

Usage: client.py CASE COX WORK
  CASE  session (serve_two_turns.toml: `cox` then `cox-reply`) | denied
        (serve_denied.toml: an ask is denied with its reason, the client
        answering no elicitation) | allowed (hello.toml) and declined
        (serve_declined.toml): the client answers the ask through
        elicitation | stateless_allowed (hello.toml), stateless_declined
        (serve_declined.toml): the same on the 2026-07-28 revision, where
        the ask comes back as an input_required result and the answer with
        the retry (the allowed case drives the retries by hand)
  COX   the cox binary; COX_HOME, COX_PROVIDER, COX_SCENARIO come from the
        environment (passed on whole: the SDK gives a server a minimal one)
  WORK  the folder the session works in
Prints `ok CASE` and exits 0, or fails with the reason.
"""

import asyncio
import os
import sys

import jsonschema
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def main(case, cox, work):
    params = StdioServerParameters(command=cox, args=["mcp", "serve"], env=dict(os.environ), cwd=work)
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        allow = case == "allowed"
        return types.ElicitResult(action="accept", content={"allow": allow})

    if case.startswith("stateless"):
        await stateless(case, params, work)
        print(f"ok {case}")
        return
    callback = on_elicit if case in ("allowed", "declined") else None
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            init = await session.initialize()
            check(init.server_info.name == "cox", init.server_info)
            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            check(names == ["cox", "cox-reply"], names)
            for tool in tools.tools:
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            progress = []

            async def on_progress(value, total, message):
                progress.append(message)

            if case == "session":
                first = await session.call_tool(
                    "cox",
                    {"prompt": "create hello.txt", "cwd": work, "permission_mode": "acceptEdits"},
                    progress_callback=on_progress,
                )
                check(not first.is_error, first)
                out = first.structured_content
                check(out["text"] == "Created hello.txt.", out)
                check(out["stop_reason"] == "end_turn", out)
                check(open(os.path.join(work, "hello.txt")).read() == "hi\n", "hello.txt")
                check(any(m and m.startswith("tool: write") for m in progress), progress)
                check(any(m and m.startswith("text: ") for m in progress), progress)
                second = await session.call_tool(
                    "cox-reply",
                    {"session_id": out["session_id"], "prompt": "what does it say?"},
                )
                check(not second.is_error, second)
                check(second.structured_content["text"] == "It says hi.", second.structured_content)
                check(second.structured_content["session_id"] == out["session_id"], second.structured_content)
                bad = await session.call_tool("cox", {"prompt": "x", "cwd": "relative"})
                check(bad.is_error, bad)
                unknown = await session.call_tool("cox-reply", {"session_id": "01NOSUCH", "prompt": "x"})
                check(unknown.is_error, unknown)
            elif case == "denied":
                answer = await session.call_tool(
                    "cox", {"prompt": "create hello.txt", "cwd": work}, progress_callback=on_progress
                )
                check(not answer.is_error, answer)
                check(answer.structured_content["text"] == "I could not write hello.txt.", answer)
                check(not os.path.exists(os.path.join(work, "hello.txt")), "hello.txt was written")
                check(any(m and m.startswith("denied: ") for m in progress), progress)
            elif case in ("allowed", "declined"):
                answer = await session.call_tool(
                    "cox", {"prompt": "create hello.txt", "cwd": work}, progress_callback=on_progress
                )
                check(not answer.is_error, answer)
                check(len(asked) == 1 and "write" in asked[0], asked)
                written = os.path.exists(os.path.join(work, "hello.txt"))
                check(written == (case == "allowed"), f"written: {written}")
                expected = "Created hello.txt." if case == "allowed" else "You declined hello.txt."
                check(answer.structured_content["text"] == expected, answer)
    print(f"ok {case}")


async def stateless(case, params, work):
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": False})

    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    hello = os.path.join(work, "hello.txt")
    async with Client(params, mode="auto", elicitation_callback=on_elicit) as client:
        check(client.protocol_version == "2026-07-28", client.protocol_version)
        arguments = {"prompt": "create hello.txt", "cwd": work}
        if case == "stateless_declined":
            answer = await client.call_tool("cox", arguments, progress_callback=on_progress)
            check(not answer.is_error, answer)
            check(len(asked) == 1 and "write" in asked[0], asked)
            check(answer.structured_content["text"] == "You declined hello.txt.", answer)
            check(not os.path.exists(hello), "hello.txt was written")
            check(any(m and m.startswith("declined: write") for m in progress), progress)
            return
        first = await client.session.call_tool("cox", arguments, allow_input_required=True)
        check(first.result_type == "input_required", first)
        request = first.input_requests["allow"]
        check(request.method == "elicitation/create", request)
        check("write" in request.params.message, request.params.message)
        check(not os.path.exists(hello), "written before the answer")
        state = first.request_state
        answer = {"allow": types.ElicitResult(action="accept", content={"allow": True})}
        done = await client.session.call_tool(
            "cox",
            arguments,
            input_responses=answer,
            request_state=state,
            allow_input_required=True,
            progress_callback=on_progress,
        )
        check(not done.is_error, done)
        check(done.structured_content["text"] == "Created hello.txt.", done)
        check(open(hello).read() == "hi\n", "hello.txt")
        check(any(m and m.startswith("allowed: write") for m in progress), progress)
        again = await client.session.call_tool(
            "cox", arguments, input_responses=answer, request_state=state, allow_input_required=True
        )
        check(again.is_error and "no longer waits" in again.content[0].text, again)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
