#!/usr/bin/env node
// A small MCP server over stdio for cox's tests: newline-delimited
// JSON-RPC, written without the SDK so each misbehaviour is on purpose.
// FAKE_MODE picks one: "ok" (default), "hang" (never answers the
// handshake), "exit" (says why on stderr and leaves before it),
// "crash-on-call" (dies in the middle of a call), "bad-schema" (one tool's
// input schema is not an object schema), "big" (a 10 MB result), "net"
// (a `connect` tool that dials 127.0.0.1:FAKE_PORT), "slow" (a `sleep` tool
// that never answers), "write" (a `write_file` tool: {path, content}),
// "grows" (after its first call it adds a `grown`
// tool and a `hello` prompt, and says so: notifications/tools/list_changed
// and notifications/prompts/list_changed), "grows-at-start"
// (at the first tools/list it adds an `early` tool and says so, then
// answers 200 ms later, as servers that register tools once initialized
// do: the change is said while the client still waits for its listing).
// FAKE_PROMPTS, when set, gives it a `hello` prompt from the start.
// FAKE_START_MS, when set, delays the answer to the handshake by that
// many milliseconds (a server that starts slowly).
// FAKE_DESCRIPTION is the echo tool's description, or FAKE_DESCRIPTION_FILE
// names a file holding it (so a test can change the definition and not the
// server's configuration); FAKE_LOG, when set, is a file each call is
// appended to; FAKE_ENV_DUMP, when set, is a file the names of the
// server's environment variables are written to as it starts.
'use strict';
const fs = require('fs');
const mode = process.env.FAKE_MODE || 'ok';
const description = process.env.FAKE_DESCRIPTION_FILE
  ? fs.readFileSync(process.env.FAKE_DESCRIPTION_FILE, 'utf8').trim()
  : process.env.FAKE_DESCRIPTION || 'Echoes its message.';

if (process.env.FAKE_ENV_DUMP) {
  fs.writeFileSync(process.env.FAKE_ENV_DUMP, Object.keys(process.env).sort().join('\n') + '\n');
}

if (mode === 'exit') {
  process.stderr.write('fake-server: boom, no config\n');
  process.exit(3);
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

const tools = [
  {
    name: 'echo',
    description,
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'shout',
    description: 'Returns its message in capitals, as an error.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
  },
];
const hello = { name: 'hello', description: 'Greets someone.', arguments: [{ name: 'who', required: true }] };
const prompts = process.env.FAKE_PROMPTS ? [hello] : [];
if (mode === 'bad-schema') {
  tools.push({ name: 'broken', description: 'Has a bad schema.', inputSchema: { type: 'string' } });
}
if (mode === 'net') {
  tools.push({ name: 'connect', description: 'Opens a TCP connection to 127.0.0.1:FAKE_PORT.', inputSchema: { type: 'object' } });
}
if (mode === 'slow') {
  tools.push({ name: 'sleep', description: 'Never answers.', inputSchema: { type: 'object' } });
}
if (mode === 'write') {
  tools.push({ name: 'write_file', description: 'Writes content to path.', inputSchema: { type: 'object' } });
}
if (mode === 'big') {
  tools.push({ name: 'big', description: 'Returns 10 MB.', inputSchema: { type: 'object' } });
}

function handle(request) {
  const { id, method, params } = request;
  if (id === undefined) return; // a notification
  if (method === 'initialize') {
    if (mode === 'hang') return;
    const answer = () => send({
      jsonrpc: '2.0',
      id,
      result: {
        protocolVersion: params.protocolVersion,
        capabilities: mode.startsWith('grows')
          ? { tools: { listChanged: true }, prompts: { listChanged: true } }
          : process.env.FAKE_PROMPTS ? { tools: {}, prompts: {} } : { tools: {} },
        serverInfo: { name: 'fake', version: '1.0.0' },
      },
    });
    const delay = Number(process.env.FAKE_START_MS || 0);
    if (delay > 0) setTimeout(answer, delay);
    else answer();
  } else if (method === 'prompts/list') {
    send({ jsonrpc: '2.0', id, result: { prompts } });
  } else if (method === 'prompts/get' && prompts.some((p) => p.name === params.name)) {
    send({ jsonrpc: '2.0', id, result: { messages: [{ role: 'user', content: { type: 'text', text: 'Say hello to ' + ((params.arguments || {}).who || 'nobody') } }] } });
  } else if (method === 'tools/list') {
    if (mode === 'grows-at-start' && !tools.some((t) => t.name === 'early')) {
      tools.push({ name: 'early', description: 'Added as it started.', inputSchema: { type: 'object' } });
      send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      setTimeout(() => send({ jsonrpc: '2.0', id, result: { tools } }), 200);
      return;
    }
    send({ jsonrpc: '2.0', id, result: { tools } });
  } else if (method === 'tools/call') {
    if (process.env.FAKE_LOG) {
      fs.appendFileSync(process.env.FAKE_LOG, JSON.stringify(params) + '\n');
    }
    if (mode === 'crash-on-call') {
      process.stderr.write('fake-server: segfault in the middle of a call\n');
      process.exit(139);
    }
    const message = (params.arguments || {}).message || '';
    let result;
    if (params.name === 'echo') {
      result = { content: [{ type: 'text', text: 'echo: ' + message }] };
      if (mode === 'grows' && !tools.some((t) => t.name === 'grown')) {
        tools.push({ name: 'grown', description: 'Added after the start.', inputSchema: { type: 'object' } });
        prompts.push(hello);
        send({ jsonrpc: '2.0', id, result });
        send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
        send({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' });
        return;
      }
    } else if (params.name === 'grown' || params.name === 'early') {
      result = { content: [{ type: 'text', text: 'grown here' }] };
    } else if (params.name === 'shout') {
      result = { content: [{ type: 'text', text: message.toUpperCase() }], isError: true };
    } else if (params.name === 'connect') {
      const socket = require('net').connect(Number(process.env.FAKE_PORT), '127.0.0.1');
      socket.on('connect', () => {
        socket.destroy();
        send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'connected' }] } });
      });
      socket.on('error', (e) => {
        send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'refused: ' + e.code }], isError: true } });
      });
      return;
    } else if (params.name === 'write_file') {
      try {
        fs.writeFileSync(params.arguments.path, params.arguments.content);
        result = { content: [{ type: 'text', text: 'written' }] };
      } catch (e) {
        result = { content: [{ type: 'text', text: 'cannot write: ' + e.code }], isError: true };
      }
    } else if (params.name === 'sleep') {
      return;
    } else if (params.name === 'big') {
      result = { content: [{ type: 'text', text: 'x'.repeat(10 * 1024 * 1024) }] };
    } else {
      send({ jsonrpc: '2.0', id, error: { code: -32602, message: 'no tool ' + params.name } });
      return;
    }
    send({ jsonrpc: '2.0', id, result });
  } else if (method === 'ping') {
    send({ jsonrpc: '2.0', id, result: {} });
  } else {
    send({ jsonrpc: '2.0', id, error: { code: -32601, message: 'no method ' + method } });
  }
}

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let newline;
  while ((newline = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, newline).trim();
    buffer = buffer.slice(newline + 1);
    if (line) handle(JSON.parse(line));
  }
});
process.stdin.on('end', () => process.exit(0));
