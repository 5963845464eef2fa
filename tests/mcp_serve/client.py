"""The official MCP Python SDK (PyPI `mcp`) driving `cox mcp serve`.

Usage: client.py CASE COX WORK
  CASE  session (serve_two_turns.toml: `cox` then `cox-reply`) | denied
        (serve_denied.toml: an ask is denied with its reason, the client
        answering no elicitation) | allowed (hello.toml) and declined
        (serve_declined.toml): the client answers the ask through
        elicitation
  COX   the cox binary; COX_HOME, COX_PROVIDER, COX_SCENARIO come from the
        environment (passed on whole: the SDK gives a server a minimal one)
  WORK  the folder the session works in
Prints `ok CASE` and exits 0, or fails with the reason.
"""

import asyncio
import os
import sys

import jsonschema
from mcp import ClientSession, StdioServerParameters, types
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


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
