#!/usr/bin/env bash
# cox as the client under test of the MCP conformance suite's client mode
# (bins/cox/tests/mcp_conformance.rs). The suite runs this with the test
# server's URL as the last argument, the scenario's name in
# MCP_CONFORMANCE_SCENARIO and, for some auth scenarios, a JSON context in
# MCP_CONFORMANCE_CONTEXT (a pre-registered client's id and secret).
#
# What a person would do, scripted: name the server in config.toml, log in
# where the scenario wants a login (the "browser" follows the authorization
# server's redirect back to cox), then run one headless session whose
# scripted model calls the scenario's tool. COX is the binary to run.
set -u
url=${!#}
scenario=${MCP_CONFORMANCE_SCENARIO:-initialize}
cox=${COX:?COX names the cox binary}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/home" "$scratch/work"
export COX_HOME=$scratch/home HOME=$scratch/home MCP_TIMEOUT=20000
# The suite's own client metadata document, which its mock authorization
# server knows.
export MCP_OAUTH_CLIENT_METADATA_URL=https://conformance-test.local/client-metadata.json
unset DBUS_SESSION_BUS_ADDRESS
cd "$scratch/work" || exit 1

# A client registered out of band, added as a person does: its secret is
# asked for (here from MCP_CLIENT_SECRET) and kept beside the login, not in
# the config.
if [ "$scenario" = auth/pre-registration ]; then
  read -r id secret < <(python3 -c '
import json, os
c = json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])
print(c["client_id"], c["client_secret"])')
  MCP_CLIENT_SECRET=$secret "$cox" mcp add --transport http --client-id "$id" \
    --client-secret conf "$url" >&2 || exit 1
else
python3 - "$url" > "$COX_HOME/config.toml" <<'PY'
import json, os, sys
print('[mcp_servers.conf]\ntype = "http"\nurl = %s' % json.dumps(sys.argv[1]))
context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
if "client_id" in context:
    print("[mcp_servers.conf.oauth]")
    print("client_id = %s" % json.dumps(context["client_id"]))
    if "client_secret" in context:
        print("client_secret = %s" % json.dumps(context["client_secret"]))
    if "private_key_pem" in context:
        print("private_key = %s" % json.dumps(context["private_key_pem"]))
        print("signing_algorithm = %s" % json.dumps(context.get("signing_algorithm", "ES256")))
    # A machine's account: its own id and secret get the token.
    if os.environ.get("MCP_CONFORMANCE_SCENARIO", "").startswith("auth/client-credentials"):
        print('grant = "client_credentials"')
    # Cross-app access: the person's ID token from the identity provider.
    if "idp_id_token" in context:
        print('grant = "cross_app"')
        for key, name in [("idp_issuer", "idp_issuer"), ("idp_token_endpoint", "idp_token_endpoint"),
                          ("idp_client_id", "idp_client_id"), ("idp_id_token", "id_token")]:
            print("%s = %s" % (name, json.dumps(context[key])))
PY
fi

case $scenario in
  tools_call) call='name = "mcp__conf__add_numbers"
input = { a = 5, b = 3 }' ;;
  sse-retry) call='name = "mcp__conf__test_reconnection"
input = {}' ;;
  elicitation-*) call='name = "mcp__conf__test_client_elicitation_defaults"
input = {}' ;;
  auth/*) call='name = "mcp__conf__test-tool"
input = {}' ;;
  *) call='' ;;
esac
{
  if [ -n "$call" ]; then printf '[[turn]]\n[[turn.tool_call]]\n%s\n\n' "$call"; fi
  printf '[[turn]]\ntext = "done"\n'
} > "$scratch/scenario.toml"

case $scenario in
  # No one logs in for a machine's account: the session gets its token.
  auth/client-credentials-* | auth/cross-app-*) ;;
  auth/*) BROWSER="curl -s -L -o /dev/null" "$cox" mcp login conf >&2 ;;
esac

# A form is for a person: the scenario's is answered by a small SDK host
# (stream-json on cox's stdin and stdout, as the Agent SDK drives it) that
# accepts the form as shown, its defaults filled in.
case $scenario in
  elicitation-*)
    COX_PROVIDER=scripted COX_SCENARIO=$scratch/scenario.toml exec python3 - "$cox" <<'PY'
import json, subprocess, sys
cox = subprocess.Popen(
    [sys.argv[1], "--input-format", "stream-json", "--output-format", "stream-json",
     "--verbose", "--permission-mode", "bypassPermissions"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(message):
    cox.stdin.write(json.dumps(message) + "\n")
    cox.stdin.flush()
send({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize"}})
send({"type": "user", "message": {"role": "user", "content": "use the tools"}})
failed = True
for line in cox.stdout:
    message = json.loads(line)
    request = message.get("request") or {}
    if message.get("type") == "control_request" and request.get("subtype") == "elicitation":
        send({"type": "control_response", "response": {
            "subtype": "success", "request_id": message["request_id"],
            "response": {"action": "accept", "content": {}}}})
    elif message.get("type") == "result":
        failed = message.get("is_error", True)
        cox.stdin.close()
        break
sys.exit(cox.wait() or int(failed))
PY
    ;;
esac

session() {
  COX_PROVIDER=scripted COX_SCENARIO=$scratch/scenario.toml \
    "$cox" run -p "use the tools" --permission-mode bypassPermissions \
    --output-format stream-json </dev/null | tee "$scratch/out.jsonl"
  return "${PIPESTATUS[0]}"
}
session
status=$?
# A call refused for want of scope says to log in again (which asks for
# it); the person does, and asks again.
if grep -q 'the login does not grant it' "$scratch/out.jsonl"; then
  BROWSER="curl -s -L -o /dev/null" "$cox" mcp login conf >&2
  session
  status=$?
fi
exit "$status"
