"""A real ACP client (PyPI agent-client-protocol) driving `cox acp`.

Usage: client.py CASE COX SCHEMA WORK [SESSION]
  CASE    prompt | load | cancel | buffers (the editor's buffers: the client
          offers fs/read_text_file and fs/write_text_file, and holds an
          unsaved change to notes.txt) | terminal, terminal_cancel (the
          client offers terminals and starts the commands itself) | image
          (a prompt with an image block)
  COX     the cox binary; COX_HOME, COX_PROVIDER, COX_SCENARIO come from the
          environment
  SCHEMA  the protocol's published JSON schema (v1/schema.json of the npm
          package @agentclientprotocol/sdk)
  WORK    the session's folder
Every message in both directions is validated against the schema: what
cox sends against its `Agent` branch, what the client sends against the
`Client` branch. Prints `ok CASE <messages> <session id>` and exits 0, or
fails with the reason; the terminal cases first print `started <json>`,
the commands the client was asked to start.
"""

import asyncio
import json
import os
import signal
import sys

import acp
import jsonschema
from acp.connection import StreamDirection


class Schema:
    """The published schema: each side's message envelope, and each
    method's params and result by the definitions the schema marks with
    `x-method` (the envelope alone lets any object through as an
    extension's params)."""

    def __init__(self, schema_path):
        schema = json.load(open(schema_path))
        self.schema = schema
        branches = {b["title"]: b for b in schema["anyOf"]}
        self.envelopes = {
            side: self.validator(branches[side]) for side in ("Agent", "Client")
        }
        self.defs = {}
        for name, definition in schema["$defs"].items():
            method = definition.get("x-method")
            if method is None:
                continue
            for suffix in ("Request", "Notification", "Response"):
                if name.endswith(suffix):
                    self.defs[(method, suffix)] = self.validator({"$ref": f"#/$defs/{name}"})
        self.error = self.validator({"$ref": "#/$defs/Error"})

    def validator(self, body):
        root = {"$schema": self.schema["$schema"], "$defs": self.schema["$defs"], **body}
        return jsonschema.Draft202012Validator(root)


class Recorder:
    def __init__(self, schema_path):
        self.schema = Schema(schema_path)
        self.methods = {}
        self.seen = []
        self.errors = []

    def fail(self, side, message, why):
        self.errors.append(f"{side} message {json.dumps(message)[:300]}: {why[:300]}")

    def check(self, side, message, validator, value):
        for error in validator.iter_errors(value):
            self.fail(side, message, error.message)
            return

    def __call__(self, event):
        side = "Agent" if event.direction == StreamDirection.INCOMING else "Client"
        message = dict(event.message)
        message.setdefault("jsonrpc", "2.0")
        self.seen.append((side, message))
        self.check(side, message, self.schema.envelopes[side], message)
        method = message.get("method")
        if method is not None:
            kind = "Request" if "id" in message else "Notification"
            if kind == "Request":
                self.methods[(side, message["id"])] = method
            validator = self.schema.defs.get((method, kind))
            if validator is None:
                self.fail(side, message, f"no schema for {kind.lower()} {method}")
            else:
                self.check(side, message, validator, message.get("params", {}))
            return
        # A response answers a request of the other side.
        asker = "Client" if side == "Agent" else "Agent"
        method = self.methods.get((asker, message.get("id")))
        if "error" in message:
            self.check(side, message, self.schema.error, message["error"])
        elif method is None:
            self.fail(side, message, "a response to no request")
        else:
            self.check(side, message, self.schema.defs[(method, "Response")], message.get("result"))


class Editor(acp.Client):
    """Answers permission requests with `option`, keeps the updates."""

    def __init__(self, option):
        self.option = option
        self.updates = []
        self.asked = 0
        self.running = asyncio.Event()
        self.buffers = {}
        self.written = {}
        self.reads = 0
        self.started = []
        self.terminals = {}
        self.killed = 0
        self.released = 0
        self.outputs = []

    # Terminals, as an editor keeps them: each command in a process group
    # of its own, its output (stdout and stderr) kept as it comes.
    async def create_terminal(
        self, session_id, command, args=None, env=None, cwd=None, output_byte_limit=None, **kwargs
    ):
        self.started.append([command, *(args or [])])
        environ = dict(os.environ)
        for variable in env or []:
            environ[variable.name] = variable.value
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env=environ,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = {"process": process, "output": bytearray()}

        async def read():
            while chunk := await process.stdout.read(4096):
                terminal["output"].extend(chunk)

        terminal["reader"] = asyncio.create_task(read())
        terminal_id = f"term-{len(self.started)}"
        self.terminals[terminal_id] = terminal
        return acp.schema.CreateTerminalResponse(terminal_id=terminal_id)

    @staticmethod
    def exit_status(code):
        if code is None:
            return {}
        if code < 0:
            return {"signal": signal.Signals(-code).name}
        return {"exit_code": code}

    async def wait_for_terminal_exit(self, session_id, terminal_id, **kwargs):
        terminal = self.terminals[terminal_id]
        code = await terminal["process"].wait()
        await terminal["reader"]
        return acp.schema.WaitForTerminalExitResponse(**self.exit_status(code))

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        terminal = self.terminals[terminal_id]
        code = terminal["process"].returncode
        if code is not None:
            await terminal["reader"]
        status = acp.schema.TerminalExitStatus(**self.exit_status(code)) if code is not None else None
        return acp.schema.TerminalOutputResponse(
            output=terminal["output"].decode(errors="replace"), truncated=False, exit_status=status
        )

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        self.killed += 1
        process = self.terminals[terminal_id]["process"]
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await process.wait()
        return acp.schema.KillTerminalResponse()

    async def release_terminal(self, session_id, terminal_id, **kwargs):
        self.released += 1
        terminal = self.terminals.pop(terminal_id)
        self.outputs.append(terminal["output"].decode(errors="replace"))
        if terminal["process"].returncode is None:
            os.killpg(terminal["process"].pid, signal.SIGKILL)
            await terminal["process"].wait()
        return acp.schema.ReleaseTerminalResponse()

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.reads += 1
        if path not in self.buffers:
            raise acp.RequestError.resource_not_found(path)
        return acp.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.written[path] = content
        self.buffers[path] = content
        return acp.WriteTextFileResponse()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.asked += 1
        ids = [o.option_id for o in options]
        assert ids == ["allow_once", "allow_always", "reject_once", "reject_always"], ids
        if self.option is None:
            return acp.RequestPermissionResponse(outcome=acp.schema.DeniedOutcome(outcome="cancelled"))
        return acp.RequestPermissionResponse(
            outcome=acp.schema.AllowedOutcome(outcome="selected", option_id=self.option)
        )

    async def session_update(self, session_id, update, **kwargs):
        kind = update.session_update
        self.updates.append((kind, update))
        if kind == "tool_call_update" and getattr(update, "status", None) == "in_progress":
            self.running.set()

    def kinds(self):
        return [k for k, _ in self.updates]

    def text(self):
        return "".join(u.content.text for k, u in self.updates if k == "agent_message_chunk")


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def main(case, cox, schema, work, session=None):
    recorder = Recorder(schema)
    cancelling = case in ("cancel", "terminal_cancel")
    editor = Editor(None if cancelling else "allow_once")
    flags = ["acp"] + (["--permission-mode", "bypassPermissions"] if cancelling else [])
    # The SDK passes a minimal environment unless told: cox needs COX_HOME
    # and the scripted provider's variables.
    async with acp.spawn_agent_process(
        editor, cox, *flags, env=dict(os.environ), observers=[recorder]
    ) as (conn, process):
        capabilities = None
        if case == "buffers":
            capabilities = acp.schema.ClientCapabilities(
                fs=acp.schema.FileSystemCapabilities(read_text_file=True, write_text_file=True)
            )
        if case.startswith("terminal"):
            capabilities = acp.schema.ClientCapabilities(terminal=True)
        init = await conn.initialize(protocol_version=1, client_capabilities=capabilities)
        check(init.protocol_version == 1, f"protocol version {init.protocol_version}")
        check(init.agent_capabilities.load_session, "loadSession")
        if case == "prompt":
            new = await conn.new_session(cwd=work, mcp_servers=[])
            session = new.session_id
            check(new.modes.current_mode_id == "default", new.modes)
            answer = await conn.prompt(session_id=session, prompt=[acp.text_block("create hello.txt")])
            check(answer.stop_reason == "end_turn", answer)
            check(editor.asked == 1, f"asked {editor.asked}")
            kinds = editor.kinds()
            for kind in ("tool_call", "tool_call_update", "agent_message_chunk"):
                check(kind in kinds, f"{kind} in {kinds}")
            check(editor.text() == "Created hello.txt.", editor.text())
            check(open(f"{work}/hello.txt").read() == "hi\n", "hello.txt")
            await conn.set_session_mode(session_id=session, mode_id="acceptEdits")
            picked = await conn.set_config_option(config_id="model", session_id=session, value="scripted")
            check(picked.config_options[0].current_value == "scripted", picked)
        elif case == "image":
            check(init.agent_capabilities.prompt_capabilities.image, "image prompts")
            new = await conn.new_session(cwd=work, mcp_servers=[])
            session = new.session_id
            dot = (
                "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
                "awAAAABJRU5ErkJggg=="
            )
            answer = await conn.prompt(
                session_id=session,
                prompt=[acp.text_block("what is this"), acp.image_block(dot, "image/png")],
            )
            check(answer.stop_reason == "end_turn", answer)
            check(editor.text() == "A single dot.", editor.text())
        elif case == "load":
            await conn.load_session(cwd=work, session_id=session, mcp_servers=[])
            kinds = editor.kinds()
            check(kinds[0] == "user_message_chunk", kinds)
            check(editor.text() == "Created hello.txt.", editor.text())
        elif case == "buffers":
            notes = os.path.join(work, "notes.txt")
            on_disk = open(notes).read()
            editor.buffers[notes] = "alpha\nbeta\ndelta, not saved yet\n"
            new = await conn.new_session(cwd=work, mcp_servers=[])
            session = new.session_id
            answer = await conn.prompt(session_id=session, prompt=[acp.text_block("change beta")])
            check(answer.stop_reason == "end_turn", answer)
            check(editor.reads >= 2, f"reads {editor.reads}")
            check(
                editor.written.get(notes) == "alpha\ngamma\ndelta, not saved yet\n",
                editor.written,
            )
            check(open(notes).read() == on_disk, "the disk was written")
            shown = [
                c.content.text
                for k, u in editor.updates
                if k == "tool_call_update" and u.content
                for c in u.content
                if getattr(c, "type", None) == "content"
            ]
            check(any("not saved yet" in s for s in shown), shown)
        elif case == "terminal":
            new = await conn.new_session(cwd=work, mcp_servers=[])
            session = new.session_id
            answer = await conn.prompt(session_id=session, prompt=[acp.text_block("run it")])
            check(answer.stop_reason == "end_turn", answer)
            check(editor.asked == 1, f"asked {editor.asked}")
            shown = [
                (u.status, [getattr(c, "type", None) for c in u.content or []])
                for k, u in editor.updates
                if k == "tool_call_update"
            ]
            check(("in_progress", ["terminal"]) in shown, shown)
            check(("completed", ["terminal"]) == shown[-1], shown)
            check(editor.released == len(editor.started) == 1, (editor.released, editor.started))
            check(
                len(editor.outputs) == 1
                and editor.outputs[0].startswith("in-terminal\n")
                and editor.outputs[0].endswith("refused\n"),
                editor.outputs,
            )
        elif case in ("cancel", "terminal_cancel"):
            new = await conn.new_session(cwd=work, mcp_servers=[])
            session = new.session_id
            turn = asyncio.create_task(
                conn.prompt(session_id=session, prompt=[acp.text_block("run the long thing")])
            )
            await asyncio.wait_for(editor.running.wait(), 20)
            await conn.cancel(session_id=session)
            answer = await asyncio.wait_for(turn, 10)
            check(answer.stop_reason == "cancelled", answer)
            if case == "terminal_cancel":
                # The turn's answer may come before the terminal is let go.
                for _ in range(100):
                    if editor.released:
                        break
                    await asyncio.sleep(0.05)
                check(editor.killed == 1 and editor.released == 1, (editor.killed, editor.released))
    if case.startswith("terminal"):
        print("started " + json.dumps(editor.started))
    check(not recorder.errors, "\n".join(recorder.errors))
    check(len(recorder.seen) > 3, f"only {len(recorder.seen)} messages")
    print(f"ok {case} {len(recorder.seen)} {session}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
