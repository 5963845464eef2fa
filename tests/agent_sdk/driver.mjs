// The npm Claude Agent SDK (@anthropic-ai/claude-agent-sdk) driving cox by
// pathToClaudeCodeExecutable.
//
// Usage: node driver.mjs SDK_DIR COX WORK [CASE]
//   SDK_DIR  the folder holding node_modules/@anthropic-ai/claude-agent-sdk
//   COX      the cox binary; COX_HOME, COX_PROVIDER and COX_SCENARIO come
//            from the environment
//   WORK     the session's folder
//   CASE     hello (the default): one query() with a string prompt and a
//            canUseTool callback that allows what it is asked; the hello
//            file must be written.
//            mcp: a query() whose system prompt, title and in-process MCP
//            server (createSdkMcpServer) travel in `initialize`, as this
//            SDK sends them; the model calls the script's tool.
//            elicit: the reference MCP server (its node_modules folder in
//            the environment's MCP_MODULES) asks for input mid-call; the
//            script's onElicitation fills in the form, and the server's
//            result must carry what it filled in.
// Prints `ok <session id>` when the result is a success, else exits
// non-zero saying why.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, cox, work, kase = "hello"] = process.argv.slice(2);
const sdk = await import(
  pathToFileURL(join(sdkDir, "node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs")).href
);
const fail = (why) => {
  console.error(`FAILED: ${why}`);
  process.exit(1);
};
if (kase === "mcp") {
  const { z } = await import(
    pathToFileURL(join(sdkDir, "node_modules/zod/index.js")).href
  );
  const calc = sdk.createSdkMcpServer({
    name: "calc",
    version: "1.0.0",
    tools: [
      sdk.tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => ({
        content: [{ type: "text", text: `Sum: ${a + b}` }],
      })),
    ],
  });
  const messages = [];
  for await (const message of sdk.query({
    prompt: "add 20 and 22",
    options: {
      pathToClaudeCodeExecutable: cox,
      cwd: work,
      env: { ...process.env },
      systemPrompt: "You are a calculator that answers in one line.",
      title: "Adding numbers",
      mcpServers: { calc },
      allowedTools: ["mcp__calc__add"],
    },
  })) {
    messages.push(message);
  }
  const init = messages.find((m) => m.type === "system" && m.subtype === "init");
  if (!init || !init.mcp_servers.some((s) => s.name === "calc" && s.status === "connected"))
    fail(`init ${JSON.stringify(init)}`);
  if (!init.tools.includes("mcp__calc__add")) fail(`tools ${init.tools}`);
  const result = messages.find((m) => m.type === "result");
  if (!result || result.is_error) fail(`no good result: ${JSON.stringify(result)}`);
  if (result.result !== "It is 42.") fail(`result ${result.result}`);
  console.log(`ok ${result.session_id}`);
  process.exit(0);
}

if (kase === "elicit") {
  const server = join(process.env.MCP_MODULES, ".bin/mcp-server-everything");
  const forms = [];
  const messages = [];
  for await (const message of sdk.query({
    prompt: "fill it",
    options: {
      pathToClaudeCodeExecutable: cox,
      cwd: work,
      env: { ...process.env },
      mcpServers: { every: { type: "stdio", command: "node", args: [server, "stdio"] } },
      // On the command line (--mcp-config), not in `initialize`.
      mcpServersDelivery: "argv",
      canUseTool: async (_name, input) => ({ behavior: "allow", updatedInput: input }),
      onElicitation: async (request) => {
        forms.push(request);
        return { action: "accept", content: { name: "Ada Lovelace" } };
      },
    },
  })) {
    messages.push(message);
  }
  if (forms.length !== 1) fail(`forms ${JSON.stringify(forms)}`);
  const form = forms[0];
  if (form.serverName !== "every" || form.mode !== "form") fail(`form ${JSON.stringify(form)}`);
  if (JSON.stringify(form.requestedSchema.required) !== '["name"]') fail(`schema ${JSON.stringify(form)}`);
  const said = JSON.stringify(messages.filter((m) => m.type === "user"));
  if (!said.includes("Ada Lovelace")) fail(`the server did not get the form: ${said.slice(0, 2000)}`);
  const result = messages.find((m) => m.type === "result");
  if (!result || result.is_error || result.result !== "Form done.") fail(`result ${JSON.stringify(result)}`);
  console.log(`ok ${result.session_id}`);
  process.exit(0);
}

const asked = [];
const messages = [];
for await (const message of sdk.query({
  prompt: "create hello.txt containing hi",
  options: {
    pathToClaudeCodeExecutable: cox,
    cwd: work,
    env: { ...process.env },
    canUseTool: async (toolName, input) => {
      asked.push(toolName);
      return { behavior: "allow", updatedInput: input };
    },
  },
})) {
  messages.push(message);
}
const result = messages.find((m) => m.type === "result");
if (!result || result.is_error) fail(`no good result: ${JSON.stringify(result)}`);
if (result.result !== "Created hello.txt.") fail(`result ${result.result}`);
if (asked.join() !== "Write") fail(`asked ${asked}`);
if (readFileSync(join(work, "hello.txt"), "utf8") !== "hi\n") fail("hello.txt");
console.log(`ok ${result.session_id}`);
