"""A server on the official MCP Python SDK (PyPI `mcp`), for cox's tests.

`py-server.py http PORT LOG` serves streamable HTTP on 127.0.0.1:PORT and
appends each JSON-RPC method it receives, with the protocol version the
request names and the client's name, to LOG (so a test can see whether cox
spoke the stateless 2026-07-28 revision: no `initialize`);
`py-server.py http-old PORT LOG` is the same server answering
`server/discover` with an empty result, as servers of older revisions do
(the MCP conformance suite's `initialize` scenario); `py-server.py stdio`
serves stdio.
"""

import json
import sys

from mcp.server import MCPServer

app = MCPServer("py-reference")


@app.tool()
def add(a: int, b: int) -> int:
    """Adds two whole numbers."""
    return a + b


def logged(inner, log_path, old=False):
    async def asgi(scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "POST":
            return await inner(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        method = request.get("method") if isinstance(request, dict) else None
        params = (request.get("params") or {}) if isinstance(request, dict) else {}
        client = (params.get("clientInfo") or {}).get("name")
        headers = {k.decode(): v.decode() for k, v in scope.get("headers", [])}
        with open(log_path, "a") as log:
            log.write(json.dumps({"method": method,
                                  "version": headers.get("mcp-protocol-version"),
                                  "session": headers.get("mcp-session-id"),
                                  "client": client,
                                  "asked": params.get("protocolVersion")}) + "\n")
        if old and method == "server/discover":
            answer = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": {}})
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            return await send({"type": "http.response.body", "body": answer.encode()})
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await inner(scope, replay, send)

    return asgi


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        app.run(transport="stdio")
    else:
        import uvicorn

        port, log_path = int(sys.argv[2]), sys.argv[3]
        inner = app.streamable_http_app()
        old = sys.argv[1] == "http-old"
        uvicorn.run(logged(inner, log_path, old), host="127.0.0.1", port=port,
                    log_level="warning")
