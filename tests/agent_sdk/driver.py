"""The Claude Agent SDK (PyPI claude-agent-sdk) driving cox by `cli_path`.

Usage: driver.py CASE COX WORK [SESSION]
  CASE  query | client | callback | interrupt | resume | structured | mcp | hooks | agents
  COX   the cox binary; COX_HOME, COX_PROVIDER and COX_SCENARIO come from
        the environment
  WORK  the session's folder

Every frame cox prints goes through the SDK's own message parser: a frame
it cannot parse ends the run with an error. On success the last line
printed is `ok <session id>`; on failure the script exits non-zero saying
why.
"""

import asyncio
import os
import sys

from claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from claude_agent_sdk.types import PermissionRuleValue


def check(condition, what):
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def options(cox, work, **extra):
    return ClaudeAgentOptions(cli_path=cox, cwd=work, env=dict(os.environ), **extra)


async def run_query(cox, work, prompt, **extra):
    messages = []
    async for message in query(prompt=prompt, options=options(cox, work, **extra)):
        messages.append(message)
    return messages


def result_of(messages):
    results = [m for m in messages if isinstance(m, ResultMessage)]
    check(len(results) == 1, f"one result, got {len(results)}: {messages}")
    return results[0]


async def main(case, cox, work, session=None):
    if case == "query":
        messages = await run_query(
            cox, work, "create hello.txt containing hi", permission_mode="acceptEdits"
        )
        init = messages[0]
        check(isinstance(init, SystemMessage) and init.subtype == "init", init)
        check(init.data["claude_code_version"], init.data)
        uses = [
            b for m in messages if isinstance(m, AssistantMessage)
            for b in m.content if isinstance(b, ToolUseBlock)
        ]
        check([u.name for u in uses] == ["Write"], uses)
        check(any(isinstance(m, UserMessage) for m in messages), "a tool result frame")
        result = result_of(messages)
        check(result.subtype == "success" and not result.is_error, result)
        check(result.result == "Created hello.txt.", result.result)
        check(result.num_turns == 2, result.num_turns)
        check(open(os.path.join(work, "hello.txt")).read() == "hi\n", "hello.txt")
        print("ok", result.session_id)
    elif case == "client":
        async with ClaudeSDKClient(options=options(cox, work)) as client:
            await client.query("first")
            answers = []
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    answers += [b.text for b in message.content if isinstance(b, TextBlock)]
                last = message
            check(isinstance(last, ResultMessage) and last.result == "First answer.", last)
            first_session = last.session_id
            # Both are answered (an error would raise here).
            await client.set_permission_mode("acceptEdits")
            await client.set_model("scripted")
            await client.query("and now the second")
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    answers += [b.text for b in message.content if isinstance(b, TextBlock)]
                last = message
            check(isinstance(last, ResultMessage) and last.result == "Second answer.", last)
            check(last.session_id == first_session, "one session over two turns")
            check(answers == ["First answer.", "Second answer."], answers)
        print("ok", first_session)
    elif case == "callback":
        asked = []

        async def can_use_tool(tool_name, tool_input, context):
            asked.append((tool_name, dict(tool_input)))
            command = tool_input.get("command", "")
            if command.startswith("rm "):
                return PermissionResultDeny(message="not that file")
            if "original" in command:
                rewritten = command.replace("original", "rewritten")
                return PermissionResultAllow(
                    updated_input={"command": rewritten},
                    updated_permissions=[PermissionUpdate(
                        type="addRules",
                        rules=[PermissionRuleValue(tool_name="Bash", rule_content=rewritten)],
                        behavior="allow",
                        destination="session",
                    )],
                )
            return PermissionResultAllow()

        async def prompt():
            yield {"type": "user", "message": {"role": "user", "content": "tidy up"}}

        messages = []
        async for message in query(
            prompt=prompt(), options=options(cox, work, can_use_tool=can_use_tool)
        ):
            messages.append(message)
        result = result_of(messages)
        check(not result.is_error, result)
        # The third command was allowed for the session by the second answer.
        check([a[0] for a in asked] == ["Bash", "Bash"], asked)
        check(os.path.exists(os.path.join(work, "important.txt")), "the denied rm ran")
        check(open(os.path.join(work, "out.txt")).read() == "rewritten\n", "the rewrite")
        denials = result.permission_denials or []
        check(len(denials) == 1 and denials[0]["tool_name"] == "Bash", denials)
        print("ok", result.session_id)
    elif case == "interrupt":
        async with ClaudeSDKClient(
            options=options(cox, work, permission_mode="bypassPermissions")
        ) as client:
            await client.query("run the long thing")
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage) and any(
                    isinstance(b, ToolUseBlock) for b in message.content
                ):
                    await client.interrupt()
                last = message
            check(isinstance(last, ResultMessage) and last.is_error, last)
            check(last.subtype == "error_during_execution", last.subtype)
        print("ok", last.session_id)
    elif case == "structured":
        schema = {
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        }
        messages = await run_query(
            cox, work, "count the files",
            output_format={"type": "json_schema", "schema": schema},
        )
        result = result_of(messages)
        check(not result.is_error, result)
        check(result.structured_output == {"count": 3}, result.structured_output)
        print("ok", result.session_id)
    elif case == "mcp":
        @tool("add", "Add two numbers", {"a": int, "b": int})
        async def add(args):
            return {"content": [{"type": "text", "text": f"Sum: {args['a'] + args['b']}"}]}

        calc = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
        messages = await run_query(
            cox, work, "add 20 and 22",
            mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"],
        )
        init = messages[0]
        check(
            {"name": "calc", "status": "connected"} in init.data["mcp_servers"],
            init.data["mcp_servers"],
        )
        result = result_of(messages)
        check(not result.is_error, result)
        check(result.result == "It is 42.", result.result)
        print("ok", result.session_id)
    elif case == "hooks":
        seen = []

        async def guard(input_data, tool_use_id, context):
            seen.append((input_data["hook_event_name"], input_data["tool_name"],
                         input_data["tool_input"].get("command")))
            if "rm " in input_data["tool_input"].get("command", ""):
                return {"hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no deleting here",
                }}
            return {}

        messages = await run_query(
            cox, work, "tidy up", permission_mode="bypassPermissions",
            hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]},
            include_hook_events=True,
        )
        runs = [
            m for m in messages
            if isinstance(m, SystemMessage) and m.subtype == "hook_response"
        ]
        check(len(runs) == 2 and runs[0].data["outcome"] == "blocked", runs)
        result = result_of(messages)
        check(not result.is_error, result)
        check(seen == [
            ("PreToolUse", "Bash", "rm important.txt"),
            ("PreToolUse", "Bash", "echo ok > ok.txt"),
        ], seen)
        check(os.path.exists(os.path.join(work, "important.txt")), "the hook did not stop rm")
        check(os.path.exists(os.path.join(work, "ok.txt")), "the allowed command did not run")
        print("ok", result.session_id)
    elif case == "agents":
        reviewer = AgentDefinition(
            description="Reviews changes", prompt="You review changes carefully.",
            tools=["Read", "Grep"],
        )
        messages = await run_query(cox, work, "get it reviewed", agents={"reviewer": reviewer})
        result = result_of(messages)
        check(not result.is_error, result)
        check(result.result == "The reviewer is happy.", result.result)
        print("ok", result.session_id)
    elif case == "resume":
        messages = await run_query(cox, work, "go on", resume=session)
        result = result_of(messages)
        check(result.session_id == session, (result.session_id, session))
        check(result.result == "Still here.", result.result)
        print("ok", result.session_id)
    else:
        check(False, f"unknown case {case}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
