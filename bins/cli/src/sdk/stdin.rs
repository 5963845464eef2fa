//! stdin, as the SDK writes it: `user` messages queued as turns,
//! `control_request`s answered (`initialize`, `interrupt`,
//! `set_permission_mode`, `set_model`), and the `control_response`s to
//! cox's own requests matched to the asks they answer.

use super::*;

/// What the SDK's `initialize` and answers reach: cox's own requests, the
/// script's hooks, the agent tool's definitions.
pub(super) struct Registry<'a> {
    pub(super) requester: &'a mcp::Requester,
    pub(super) hooks: &'a hooks::SdkHooks,
    pub(super) agents: Option<&'a crate::ext::agent_tool::Definitions>,
    /// Told once the session's tools are settled (see `start`).
    pub(super) ready: &'a Mutex<Option<futures::channel::oneshot::Sender<Init>>>,
    /// The session's id, as the frames spell it.
    pub(super) session: &'a str,
    /// `--json-schema`, which `initialize` may repeat.
    pub(super) schema: Option<crate::structured::Schema>,
    /// The SDK may switch to bypassPermissions: the session started in it,
    /// or --allow-dangerously-skip-permissions.
    pub(super) bypass: bool,
}

/// Why a switch to bypassPermissions is refused.
pub(super) const BYPASS_REFUSED: &str = "bypassPermissions needs a session started in it or \
     --allow-dangerously-skip-permissions (the SDK's allowDangerouslySkipPermissions); the mode \
     is unchanged";

impl Registry<'_> {
    /// The session may start: with nothing `initialize` set.
    pub(super) fn settled(&self) {
        self.settle(Init::default());
    }

    /// `Err` when the session has started already and `init` would
    /// change it. (Only the reader thread settles, so this holds until
    /// its `settle`.)
    pub(super) fn can_settle(&self, init: &Init) -> Result<(), String> {
        let started = self
            .ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none();
        if started && !init.is_empty() {
            return Err(
                "initialize: the session has started; its system prompt, title and \
                        SDK MCP servers can no longer change"
                    .into(),
            );
        }
        Ok(())
    }

    /// The session may start, with what `initialize` set (nothing, once
    /// it has started: see `can_settle`).
    pub(super) fn settle(&self, init: Init) {
        let sender = self
            .ready
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(sender) = sender {
            let _ = sender.send(init);
        }
    }
}

/// What the SDK's `initialize` settles before the session's first request
/// (the npm SDK's way; the Python SDK passes flags).
#[derive(Default)]
pub(super) struct Init {
    /// `sdkMcpServers`: in-process servers, reached as `--mcp-config`'s.
    pub(super) servers: Vec<String>,
    /// `systemPrompt`: replaces cox's prompt (blank strings are the SDK's
    /// way of setting none, and leave it).
    pub(super) system_prompt: Option<String>,
    /// `appendSystemPrompt`: said after the prompt and `--append-system-prompt`.
    pub(super) append: Option<String>,
    pub(super) title: Option<String>,
}

impl Init {
    pub(super) fn is_empty(&self) -> bool {
        self.servers.is_empty()
            && self.system_prompt.is_none()
            && self.append.is_none()
            && self.title.is_none()
    }

    /// The settings `request` carries; `Err` names the first cox cannot
    /// take, so nothing the script set is silently dropped.
    pub(super) fn parse(
        request: &Value,
        schema: Option<&crate::structured::Schema>,
    ) -> Result<Self, String> {
        /// Handled elsewhere (`hooks`, `agents`) or informational.
        const TAKEN: &[&str] = &[
            "subtype",
            "hooks",
            "agents",
            "sdkMcpServers",
            "sdkMcpServerManifests",
            "sdkMcpServerConfigs",
            "jsonSchema",
            "systemPrompt",
            "appendSystemPrompt",
            "title",
        ];
        let unset = |v: &Value| match v {
            Value::Null | Value::Bool(false) => true,
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            Value::String(s) => s.is_empty(),
            _ => false,
        };
        if let Some(fields) = request.as_object()
            && let Some((key, _)) = fields
                .iter()
                .find(|(key, value)| !TAKEN.contains(&key.as_str()) && !unset(value))
        {
            return Err(format!("initialize: `{key}` is not something cox supports"));
        }
        let text = |key: &str| -> Result<Option<String>, String> {
            match &request[key] {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.clone())),
                Value::Array(parts) => parts
                    .iter()
                    .map(|p| p.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .map(|parts| Some(parts.join("\n\n")))
                    .ok_or_else(|| format!("initialize: `{key}` is not text")),
                _ => Err(format!("initialize: `{key}` is not text")),
            }
        };
        let schema_given = &request["jsonSchema"];
        if !schema_given.is_null() && !schema.is_some_and(|s| s.same_as(schema_given)) {
            return Err(
                "initialize: `jsonSchema` is not the one --json-schema gave; pass the \
                        schema as the flag"
                    .into(),
            );
        }
        let servers = match &request["sdkMcpServers"] {
            Value::Null => Vec::new(),
            Value::Array(names) => names
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or("initialize: `sdkMcpServers` is not a list of names")?,
            _ => return Err("initialize: `sdkMcpServers` is not a list of names".into()),
        };
        Ok(Self {
            servers,
            system_prompt: text("systemPrompt")?.filter(|p| !p.trim().is_empty()),
            append: text("appendSystemPrompt")?.filter(|p| !p.trim().is_empty()),
            title: text("title")?.filter(|t| !t.trim().is_empty()),
        })
    }
}

/// Reads stdin to its end, line by line.
pub(super) fn read_stdin(
    out: &Out,
    shared: &Mutex<Shared>,
    registry: &Registry<'_>,
    tx: &UnboundedSender<Submission>,
    replay: bool,
) {
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match stdin.read_until(b'\n', &mut bytes) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Bytes that are not UTF-8 make the line an error, not the end.
        let Ok(line) = std::str::from_utf8(&bytes) else {
            out.line(error_frame("stdin: a line that is not UTF-8"));
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(message) => take(out, shared, registry, tx, message, replay),
            Err(err) => out.line(error_frame(&format!(
                "stdin: a line that is not JSON: {err}"
            ))),
        }
    }
    // No more prompts: the asks still open are denied, then the session
    // ends once the queued turns are done.
    registry.requester.close();
    registry.settled();
    let mut state = lock(shared);
    state.closed = true;
    for (_, Asked { call_id, .. }) in state.asks.drain() {
        let _ = tx.unbounded_send(Submission::Approve {
            call_id,
            decision: Decision::Deny {
                reason: Some("the SDK closed its input before answering".into()),
            },
        });
    }
    if !state.running && state.queued.is_empty() {
        let _ = tx.unbounded_send(Submission::Shutdown);
    }
}

/// A user message that starts no turn: an error frame and its result.
pub(super) fn refuse(out: &Out, session: &str, why: &str) {
    out.line(error_frame(why));
    out.line(refused_result(session, why));
}

/// The `result` of a user message that started no turn.
pub(super) fn refused_result(session: &str, why: &str) -> Value {
    json!({
        "type": "result", "subtype": "error_during_execution", "is_error": true,
        "duration_ms": 0, "duration_api_ms": 0, "num_turns": 0, "result": "",
        "session_id": session, "total_cost_usd": 0.0,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0,
                  "cache_creation_input_tokens": 0},
        "permission_denials": [], "errors": [why], "uuid": frames::uuid(),
    })
}

pub(super) fn error_frame(text: &str) -> Value {
    json!({"type": "system", "subtype": "error", "uuid": frames::uuid(), "text": text})
}

/// One message from the SDK.
pub(super) fn take(
    out: &Out,
    shared: &Mutex<Shared>,
    registry: &Registry<'_>,
    tx: &UnboundedSender<Submission>,
    message: Value,
    replay: bool,
) {
    match message["type"].as_str() {
        Some("user") => match prompt_of(&message) {
            Ok((text, images)) => {
                if replay {
                    out.line(message.clone());
                }
                registry.settled();
                let turn = Submission::UserTurn { text, images };
                let mut state = lock(shared);
                if state.running {
                    state.queued.push_back(Ok(turn));
                } else {
                    state.running = true;
                    state.refused_last = false;
                    let _ = tx.unbounded_send(turn);
                }
            }
            // Refused: still one result, in its place among the others, or
            // a client waiting for it would wait forever (or pair it with
            // another prompt).
            Err(why) => {
                let why = format!("stdin: a user message {why}");
                let mut state = lock(shared);
                if state.running {
                    state.queued.push_back(Err(why));
                } else {
                    refuse(out, registry.session, &why);
                    state.refused_last = true;
                }
            }
        },
        Some("control_request") => {
            let id = message["request_id"].clone();
            if message["request"]["subtype"] == "interrupt" {
                // Asks of the interrupted turn are void: a late answer
                // must not reach a later call with the same id.
                lock(shared).forget_turn();
            }
            let answer = control(tx, registry, &message["request"]);
            // A refused `initialize` settles nothing: the script may send
            // a better one, or its first prompt starts the session.
            if message["request"]["subtype"] == "initialize" && answer.is_ok() {
                registry.settled();
            }
            out.line(match answer {
                Ok(response) => json!({
                    "type": "control_response",
                    "response": {"subtype": "success", "request_id": id, "response": response},
                }),
                Err(error) => json!({
                    "type": "control_response",
                    "response": {"subtype": "error", "request_id": id, "error": error},
                }),
            });
        }
        Some("control_response") => {
            if !registry.requester.answer(&message["response"]) {
                answered(out, shared, (tx, registry), &message["response"]);
            }
        }
        // The SDK abandons nothing of cox's; a cancel of one of its own
        // requests needs no answer.
        Some("control_cancel_request") => {}
        other => out.line(error_frame(&format!(
            "stdin: a message of type {} is not one cox reads (user, control_request, control_response)",
            other.map_or_else(|| "(none)".to_owned(), |t| format!("`{t}`"))
        ))),
    }
}

/// The agents `initialize` defines: see [`crate::ext::agents::from_json`].
pub(super) fn sdk_agents(agents: &Value) -> Result<Vec<crate::ext::agents::Agent>, String> {
    crate::ext::agents::from_json(agents)
}

/// The prompt of a `user` message: its text, and its images.
pub(super) fn prompt_of(
    message: &Value,
) -> Result<(String, Vec<cox_protocol::types::Image>), String> {
    let content = &message["message"]["content"];
    if let Some(text) = content.as_str() {
        return Ok((text.to_owned(), Vec::new()));
    }
    let Some(blocks) = content.as_array() else {
        return Err("has no message.content".into());
    };
    let mut text = String::new();
    let mut images = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(block["text"].as_str().unwrap_or_default());
            }
            Some("image") => {
                let data = block["source"]["data"].as_str().unwrap_or_default();
                images.push(
                    crate::attach::image_from_base64(data, "the image")
                        .map_err(|why| format!("holds an image cox cannot take: {why}"))?,
                );
            }
            other => {
                return Err(format!(
                    "holds a block cox does not take ({})",
                    other.unwrap_or("no type")
                ));
            }
        }
    }
    Ok((text, images))
}

/// Answers one control request; `Err` is the error to send back.
pub(super) fn control(
    tx: &UnboundedSender<Submission>,
    registry: &Registry<'_>,
    request: &Value,
) -> Result<Value, String> {
    let send = |sub| {
        tx.unbounded_send(sub)
            .map_err(|_| "the session has ended".to_owned())
    };
    match request["subtype"].as_str() {
        Some("initialize") => {
            let init = Init::parse(request, registry.schema.as_ref())?;
            let callbacks = hooks::registered(&request["hooks"])?;
            let agents = sdk_agents(&request["agents"])?;
            if registry.agents.is_none() && !agents.is_empty() {
                return Err(
                    "agents: this session has no agent tool ([agents] max_depth is 0, \
                            or --tools leaves it out)"
                        .into(),
                );
            }
            // Everything checked first: a refused `initialize` changes
            // nothing. The agents and hooks are in before the session may
            // start, so its first request offers them.
            registry.can_settle(&init)?;
            if let Some(definitions) = registry.agents
                && !agents.is_empty()
            {
                definitions.add(agents);
            }
            registry.hooks.set(callbacks);
            registry.settle(init);
            Ok(json!({"commands": [], "output_style": "default", "models": []}))
        }
        Some("interrupt") => {
            send(Submission::Interrupt)?;
            Ok(json!({}))
        }
        Some("set_permission_mode") => {
            let mode: PermissionMode = request["mode"]
                .as_str()
                .unwrap_or_default()
                .parse()
                .map_err(|e| format!("{e}"))?;
            if mode == PermissionMode::BypassPermissions && !registry.bypass {
                return Err(BYPASS_REFUSED.into());
            }
            send(Submission::SetMode {
                permission_mode: Some(mode),
                tier: None,
                model: None,
            })?;
            Ok(json!({}))
        }
        Some("set_model") => match request["model"].as_str().filter(|m| !m.trim().is_empty()) {
            Some(model) => {
                send(Submission::SetMode {
                    permission_mode: None,
                    tier: None,
                    model: Some(model.to_owned()),
                })?;
                Ok(json!({}))
            }
            None => Err("set_model needs a model name (cox has no default to go back to)".into()),
        },
        Some(other) => Err(format!(
            "the control request `{other}` is not supported by cox"
        )),
        None => Err("a control request without a subtype".into()),
    }
}

/// An allow's `updatedPermissions`: rules allowed for the session make it
/// an allow for the session (the call's own grant, as a person's `s`), a
/// `setMode` changes the mode; what cox cannot take (a settings file as
/// destination, deny rules, folders) is said in an error frame, never
/// taken silently.
pub(super) fn permissions(
    out: &Out,
    (tx, bypass): (&UnboundedSender<Submission>, bool),
    tool: &str,
    updates: &Value,
) -> Decision {
    let mut decision = Decision::Allow;
    // A rule counts only for the tool asked about, by either name.
    let names = cox_hooks::claude::names_for(tool);
    let for_this_tool = |update: &Value| {
        update["rules"].as_array().is_some_and(|rules| {
            !rules.is_empty()
                && rules.iter().all(|r| {
                    r["toolName"]
                        .as_str()
                        .is_some_and(|n| names.iter().any(|m| m.eq_ignore_ascii_case(n)))
                })
        })
    };
    for update in updates.as_array().into_iter().flatten() {
        let kind = update["type"].as_str().unwrap_or_default();
        let session = update["destination"] == "session";
        match kind {
            "addRules" | "replaceRules"
                if session && update["behavior"] == "allow" && for_this_tool(update) =>
            {
                decision = Decision::AllowForSession;
            }
            "setMode" => match update["mode"].as_str().map(str::parse::<PermissionMode>) {
                Some(Ok(PermissionMode::BypassPermissions)) if !bypass => {
                    out.line(error_frame(BYPASS_REFUSED));
                }
                Some(Ok(mode)) => {
                    let _ = tx.unbounded_send(Submission::SetMode {
                        permission_mode: Some(mode),
                        tier: None,
                        model: None,
                    });
                }
                _ => out.line(error_frame(&format!(
                    "updatedPermissions: setMode {} is not a permission mode cox has",
                    update["mode"]
                ))),
            },
            _ => out.line(error_frame(&format!(
                "updatedPermissions: `{kind}` to {} was not applied: cox takes rules allowed for \
                 the session and setMode; put lasting rules in your config",
                update["destination"]
            ))),
        }
    }
    decision
}

/// The SDK's answer to one of cox's requests.
pub(super) fn answered(
    out: &Out,
    shared: &Mutex<Shared>,
    (tx, registry): (&UnboundedSender<Submission>, &Registry<'_>),
    response: &Value,
) {
    let bypass = registry.bypass;
    let id = response["request_id"].as_str().unwrap_or_default();
    let Some(Asked {
        call_id,
        input,
        tool,
        cut,
        shown,
    }) = lock(shared).asks.remove(id)
    else {
        out.line(error_frame(&format!(
            "stdin: a control response for request `{id}`, which cox did not send or was answered"
        )));
        return;
    };
    let decision = match response["subtype"].as_str() {
        Some("success") => {
            let answer = &response["response"];
            match answer["behavior"].as_str() {
                Some("allow") => match answer
                    .get("updatedInput")
                    .filter(|u| u.is_object())
                    // An echo of a cut input is no rewrite.
                    .filter(|u| cut.as_ref() != Some(*u))
                    .map(|updated| cox_hooks::claude::input_from_shown(&tool, &shown, updated))
                {
                    Some(_) if cut.is_some() => Decision::Deny {
                        reason: Some(
                            "the SDK's permission callback rewrote an input it was shown cut \
                             (too long for its line); the rewrite cannot be taken"
                                .into(),
                        ),
                    },
                    Some(updated) if updated != input => {
                        let mut state = lock(shared);
                        let edits = state.edits.entry(call_id.as_str().to_owned()).or_default();
                        *edits += 1;
                        if *edits > MAX_EDITS {
                            Decision::Deny {
                                reason: Some(format!(
                                    "the SDK's permission callback rewrote this call's input \
                                     {MAX_EDITS} times and kept rewriting it"
                                )),
                            }
                        } else {
                            let granted = permissions(
                                out,
                                (tx, bypass),
                                &tool,
                                &answer["updatedPermissions"],
                            );
                            // A rewrite that newly leaves the sandbox is put
                            // to the callback again, shown as such.
                            let unsandboxed = |v: &Value| v["unsandboxed"] == true;
                            if !unsandboxed(&updated) || unsandboxed(&input) {
                                state.allowed_inputs.insert(
                                    call_id.as_str().to_owned(),
                                    (updated.clone(), granted),
                                );
                            }
                            Decision::Edit {
                                input: updated.clone(),
                            }
                        }
                    }
                    _ => permissions(out, (tx, bypass), &tool, &answer["updatedPermissions"]),
                },
                Some("deny") if answer["interrupt"].as_bool() == Some(true) => {
                    Decision::Deny { reason: None }
                }
                Some("deny") => Decision::Deny {
                    reason: Some(
                        answer["message"]
                            .as_str()
                            .unwrap_or("the SDK's permission callback denied it")
                            .to_owned(),
                    ),
                },
                _ => Decision::Deny {
                    reason: Some("the SDK answered the ask with no behavior".into()),
                },
            }
        }
        _ => Decision::Deny {
            reason: Some(format!(
                "the SDK could not answer the ask: {}",
                response["error"].as_str().unwrap_or("no reason given")
            )),
        },
    };
    let _ = tx.unbounded_send(Submission::Approve { call_id, decision });
}
