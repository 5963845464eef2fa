"""An MCP server that wants a login, on the official MCP Python SDK, for
cox's OAuth tests.

`py-auth-server.py PORT LOG LIFETIME [CLIENT_ID[:SECRET]]` serves streamable HTTP at
http://127.0.0.1:PORT/mcp and is its own authorization server (metadata,
dynamic client registration, authorization code with PKCE, refresh,
revocation), all from the SDK; this file only keeps the codes and tokens.
With CLIENT_ID it has no dynamic registration and knows that one public
client, registered out of band (any loopback redirect URI), as
authorization servers of companies often do: a public one, or with
SECRET a confidential one, which authenticates with HTTP Basic at the
token endpoint (its code exchange and every refresh).
The authorize step approves at once (no person in a test) by redirecting
to the client's redirect URI. Access tokens live LIFETIME seconds.

Each step is appended to LOG as one JSON line: register, authorize, code
(a code exchanged), refresh, call (a tool call, with the token's client).
Two routes let a test act as the server's administrator:
POST /test/revoke-access forgets every access token (the next request
answers 401, a refresh gets a new one); POST /test/revoke-all forgets the
refresh tokens too (a new login is needed).
"""

import json
import secrets
import sys
import time

from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken, construct_redirect_uri
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.responses import PlainTextResponse

PORT, LOG, LIFETIME = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
PRE_CLIENT, _, PRE_SECRET = (sys.argv[4] if len(sys.argv) > 4 else "").partition(":")
PRE_CLIENT = PRE_CLIENT or None
BASE = f"http://127.0.0.1:{PORT}"


def log(event, **fields):
    with open(LOG, "a") as out:
        out.write(json.dumps({"event": event, **fields}) + "\n")


class LoopbackClient(OAuthClientInformationFull):
    """A client registered out of band: any 127.0.0.1 redirect URI (a
    native app's port changes with each login)."""

    def validate_redirect_uri(self, redirect_uri):
        if redirect_uri is not None and str(redirect_uri).startswith("http://127.0.0.1:"):
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


class Provider:
    def __init__(self):
        self.clients = {}
        if PRE_CLIENT:
            self.clients[PRE_CLIENT] = LoopbackClient(
                client_id=PRE_CLIENT, redirect_uris=["http://127.0.0.1:1/callback"],
                client_secret=PRE_SECRET or None,
                token_endpoint_auth_method="client_secret_basic" if PRE_SECRET else "none",
                grant_types=["authorization_code", "refresh_token"], response_types=["code"])
        self.codes = {}
        self.access = {}
        self.refresh = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info
        log("register", client=client_info.client_id, name=client_info.client_name,
            redirect=[str(u) for u in client_info.redirect_uris or []])

    async def authorize(self, client, params):
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        log("authorize", client=client.client_id, challenge=bool(params.code_challenge))
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def issue(self, client_id, scopes, resource):
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + LIFETIME, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes,
                                             resource=resource)
        return OAuthToken(access_token=access, expires_in=LIFETIME, scope=" ".join(scopes) or None,
                          refresh_token=refresh)

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        log("code", client=client.client_id)
        return self.issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)
        log("refresh", client=client.client_id)
        return self.issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found and found.expires_at and found.expires_at < time.time():
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


provider = Provider()
app = MCPServer(
    "py-auth",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=True,
        client_registration_options=ClientRegistrationOptions(enabled=PRE_CLIENT is None),
        revocation_options=RevocationOptions(enabled=True),
    ),
)


@app.tool()
def whoami() -> str:
    """Says which registered client the call's token belongs to."""
    token = get_access_token()
    client = token.client_id if token else None
    log("call", client=client)
    return f"client {client}"


@app.custom_route("/test/revoke-access", methods=["POST"])
async def revoke_access(request):
    provider.access.clear()
    return PlainTextResponse("ok")


@app.custom_route("/test/revoke-all", methods=["POST"])
async def revoke_all(request):
    provider.access.clear()
    provider.refresh.clear()
    return PlainTextResponse("ok")


def basic_names_the_client(inner):
    """The SDK's token endpoint wants `client_id` in the form even when
    HTTP Basic carries it (RFC 6749 2.3.1 does not ask for both): it is
    copied there from the header, as a standard authorization server reads
    it."""
    import base64
    from urllib.parse import quote, unquote

    async def asgi(scope, receive, send):
        headers = dict(scope.get("headers") or [])
        basic = headers.get(b"authorization", b"")
        if scope["type"] != "http" or scope["path"] != "/token" or not basic.startswith(b"Basic "):
            return await inner(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if b"client_id=" not in body:
            client = unquote(base64.b64decode(basic[6:]).decode().split(":", 1)[0])
            body += b"&client_id=" + quote(client).encode()
        scope = dict(scope, headers=[(k, v) for k, v in scope["headers"] if k != b"content-length"]
                     + [(b"content-length", str(len(body)).encode())])
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
    import uvicorn

    uvicorn.run(basic_names_the_client(app.streamable_http_app()), host="127.0.0.1", port=PORT,
                log_level="warning")
