// The npm Claude Agent SDK (@anthropic-ai/claude-agent-sdk) driving cox by
// pathToClaudeCodeExecutable.
//
// Usage: node driver.mjs SDK_DIR COX WORK
//   SDK_DIR  the folder holding node_modules/@anthropic-ai/claude-agent-sdk
//   COX      the cox binary; COX_HOME, COX_PROVIDER and COX_SCENARIO come
//            from the environment
//   WORK     the session's folder
// One query() with a string prompt and a canUseTool callback that allows
// what it is asked; prints `ok <session id>` when the result is a success
// and the hello file was written, else exits non-zero saying why.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, cox, work] = process.argv.slice(2);
const sdk = await import(
  pathToFileURL(join(sdkDir, "node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs")).href
);
const fail = (why) => {
  console.error(`FAILED: ${why}`);
  process.exit(1);
};
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
