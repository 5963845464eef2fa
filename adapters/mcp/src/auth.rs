//! Logins to HTTP MCP servers that answer 401: the OAuth authorization
//! code flow with PKCE, metadata discovery and dynamic client registration
//! (rmcp's), the tokens it yields filed per server, and the client that
//! attaches them to every request and refreshes them.
//!
//! - [`login`] runs the flow: an unauthenticated probe reads the server's
//!   `WWW-Authenticate` challenge, discovery finds its authorization
//!   server, a client is registered, and a listener on 127.0.0.1 takes the
//!   browser's redirect. Nothing waits for a browser outside it: a session
//!   meeting a server that wants a login skips the server and says to run
//!   `cox mcp login <name>`.
//! - Tokens are kept per server with the server's URL and its
//!   authorization server's metadata: in the OS keyring where this build
//!   has one and a keyring service answers, else in
//!   `$COX_HOME/mcp-auth/<name>.json` ([`vault`] says which). A login whose
//!   URL is not the server's URL now is never used: a token is only ever
//!   sent to the server it was issued for.
//! - [`authorized`] gives the transport a client that sends the token,
//!   refreshes it shortly before it expires, and refreshes it again when
//!   the server answers 401 to it (a revoked token); a refresh the
//!   authorization server refuses leaves the server needing a login.
//!
//! Invariants: a token file is never readable by another user; no token
//! or code is written to a log or an error line.

mod vault;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, CredentialStore, StoredCredentials,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Where a server's tokens are, under `$COX_HOME`.
#[must_use]
pub fn folder(home: &Path) -> PathBuf {
    home.join("mcp-auth")
}

/// Where the tokens are kept, for `cox doctor`.
#[must_use]
pub fn backend(home: &Path) -> String {
    vault::describe(&folder(home))
}

/// Where a server's login stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// No token for this server at this URL.
    None,
    /// A token; how long it has left, where the server said.
    Ok { expires_in: Option<Duration> },
    /// The token has expired; `refreshable` when a refresh token is kept
    /// (the next connection refreshes it).
    Expired { refreshable: bool },
    /// Where it is kept could not be read: why.
    Unreadable(String),
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::None => f.write_str("none"),
            Status::Ok { expires_in: None } => f.write_str("ok"),
            Status::Ok {
                expires_in: Some(left),
            } => write!(f, "ok (expires in {})", span(*left)),
            Status::Expired { refreshable: true } => {
                f.write_str("expired (refreshed at the next connection)")
            }
            Status::Expired { refreshable: false } => f.write_str("expired"),
            Status::Unreadable(why) => write!(f, "unreadable: {why}"),
        }
    }
}

/// `3h`, `12m`, `40s`: the largest unit that fits.
fn span(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 86_400 {
        format!("{}d", s / 86_400)
    } else if s >= 3_600 {
        format!("{}h", s / 3_600)
    } else if s >= 60 {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// One server's login: its tokens, with the URL they were issued for
/// and the authorization server's metadata, kept in its [`vault::Vault`].
#[derive(Clone, Debug)]
pub struct TokenFile {
    vault: vault::Vault,
    url: String,
}

impl TokenFile {
    /// The login of server `name` at `url` under `home`.
    #[must_use]
    pub fn new(home: &Path, name: &str, url: &str) -> Self {
        Self {
            vault: vault::Vault::new(&folder(home), name),
            url: url.to_owned(),
        }
    }

    /// The whole login, when there is one for this URL.
    fn read(&self) -> Result<Option<Value>, String> {
        // The keyring's first, then a file's: the first for this URL.
        for (place, text) in self.vault.read()? {
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| format!("{place}: not a login cox wrote: {e}"))?;
            if value.get("url").and_then(Value::as_str) == Some(self.url.as_str()) {
                return Ok(Some(value));
            }
        }
        Ok(None)
    }

    fn write(&self, value: &Value) -> Result<(), String> {
        self.vault.write(&value.to_string())
    }

    /// Where this server's login stands.
    #[must_use]
    pub fn status(&self) -> Status {
        let file = match self.read() {
            Ok(Some(file)) => file,
            Ok(None) => return Status::None,
            Err(why) => return Status::Unreadable(why),
        };
        let Some(token) = file
            .pointer("/credentials/token_response")
            .filter(|t| !t.is_null())
        else {
            return Status::None;
        };
        let refreshable = token.get("refresh_token").is_some_and(|r| !r.is_null());
        let expires = token.get("expires_in").and_then(Value::as_u64);
        let received = file
            .pointer("/credentials/token_received_at")
            .and_then(Value::as_u64);
        match (expires, received) {
            (Some(expires), Some(received)) => {
                let left = (received + expires).saturating_sub(now());
                if left == 0 {
                    Status::Expired { refreshable }
                } else {
                    Status::Ok {
                        expires_in: Some(Duration::from_secs(left)),
                    }
                }
            }
            _ => Status::Ok { expires_in: None },
        }
    }

    /// The authorization server's metadata, as the login found it.
    fn metadata(&self) -> Option<AuthorizationMetadata> {
        let file = self.read().ok()??;
        serde_json::from_value(file.get("metadata")?.clone()).ok()
    }

    /// The scopes a refused call asked for since the last login, which
    /// the next login asks for too.
    fn wanted(&self) -> Vec<String> {
        self.read()
            .ok()
            .flatten()
            .and_then(|file| file.get("wanted_scope")?.as_str().map(str::to_owned))
            .map(|scope| scope.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// A call was refused for want of `scope` (space-separated): the next
    /// login asks for it, beside what it asked before.
    ///
    /// # Errors
    /// The login cannot be read or written.
    pub fn want(&self, scope: &str) -> Result<(), String> {
        let Some(mut file) = self.read()? else {
            return Ok(());
        };
        let mut scopes = self.wanted();
        for word in scope.split_whitespace() {
            if !scopes.iter().any(|s| s == word) {
                scopes.push(word.to_owned());
            }
        }
        file["wanted_scope"] = Value::from(scopes.join(" "));
        self.write(&file)
    }

    /// Forgets this server's tokens. Returns whether there were any.
    ///
    /// # Errors
    /// They exist and cannot be removed.
    pub fn forget(&self) -> Result<bool, String> {
        self.vault.forget()
    }
}

/// The rmcp credential store over one token file, keeping the metadata
/// beside the credentials.
struct Store {
    file: TokenFile,
    metadata: Option<AuthorizationMetadata>,
    /// One refresh at a time within this process.
    refresh: Arc<tokio::sync::Mutex<()>>,
}

fn store_error(e: String) -> AuthError {
    AuthError::InternalError(e)
}

/// `work` on a copy of `file`, on a blocking thread: a keyring call may
/// wait on the person (an unlock prompt), and the terminal UI's runtime
/// has one thread.
async fn off_thread<T: Send + 'static>(
    file: &TokenFile,
    work: impl FnOnce(&TokenFile) -> Result<T, String> + Send + 'static,
) -> Result<T, AuthError> {
    let file = file.clone();
    tokio::task::spawn_blocking(move || work(&file))
        .await
        .map_err(|e| store_error(format!("reading the login failed: {e}")))?
        .map_err(store_error)
}

#[async_trait::async_trait]
impl CredentialStore for Store {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(file) = off_thread(&self.file, |f| f.read()).await? else {
            return Ok(None);
        };
        match file.get("credentials") {
            None | Some(Value::Null) => Ok(None),
            Some(credentials) => serde_json::from_value(credentials.clone())
                .map(Some)
                .map_err(|e| store_error(format!("{}: {e}", self.file.vault.label()))),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let credentials =
            serde_json::to_value(credentials).map_err(|e| store_error(e.to_string()))?;
        let metadata = match &self.metadata {
            Some(m) => serde_json::to_value(m).map_err(|e| store_error(e.to_string()))?,
            None => off_thread(&self.file, |f| f.read())
                .await?
                .and_then(|f| f.get("metadata").cloned())
                .unwrap_or(Value::Null),
        };
        let login = json!({
            "url": self.file.url,
            "metadata": metadata,
            "credentials": credentials,
        });
        off_thread(&self.file, move |f| f.write(&login)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        off_thread(&self.file, |f| f.forget().map(|_| ())).await
    }

    async fn acquire_refresh_guard(
        &self,
    ) -> Result<Option<rmcp::transport::auth::CredentialRefreshGuard>, AuthError> {
        let guard = self.refresh.clone().lock_owned().await;
        Ok(Some(rmcp::transport::auth::CredentialRefreshGuard::new(
            guard,
        )))
    }
}

/// An HTTP client for the transport that carries the stored token of
/// server `name` at `url`, or `None` when there is none.
///
/// # Errors
/// The token file cannot be read, or its authorization server's metadata
/// is missing from it.
pub async fn authorized(
    home: &Path,
    name: &str,
    url: &str,
    client: Option<&cox_protocol::mcp::OAuthClient>,
) -> Result<Option<AuthClient<reqwest::Client>>, String> {
    let file = TokenFile::new(home, name, url);
    // A keyring may block (an unlock prompt): off the async threads.
    let looked = file.clone();
    let (status, metadata) =
        tokio::task::spawn_blocking(move || (looked.status(), looked.metadata()))
            .await
            .map_err(|e| format!("reading the login failed: {e}"))?;
    match status {
        Status::None => return Ok(None),
        Status::Unreadable(why) => return Err(format!("its login cannot be read: {why}")),
        Status::Ok { .. } | Status::Expired { .. } => {}
    }
    let metadata = metadata.ok_or_else(|| {
        format!(
            "{}: the login has no authorization server metadata; run cox mcp login {name}",
            file.vault.label()
        )
    })?;
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    manager.set_metadata(metadata.clone());
    manager.set_credential_store(Store {
        file,
        metadata: Some(metadata),
        refresh: Arc::default(),
    });
    match manager.initialize_from_store().await {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(e) => return Err(format!("the stored login cannot be used: {e}")),
    }
    // A confidential client authenticates its refreshes too: the store
    // keeps no secret, so the entry's (or the kept one) is set again.
    if let Some(client) = client {
        let client = with_kept_secret(home, name, url, client).await?;
        if let Some(secret) = client.client_secret {
            let config = rmcp::transport::auth::OAuthClientConfig::new(
                client.client_id.clone(),
                "http://127.0.0.1/callback",
            )
            .with_client_secret(secret);
            manager
                .configure_client(config)
                .map_err(|e| format!("the stored login cannot be used: {e}"))?;
        }
    }
    Ok(Some(AuthClient::new(reqwest::Client::new(), manager)))
}

/// The scope a call needs, when an rmcp error says the login does not
/// grant it (a 403 with `insufficient_scope`): the challenge's `scope`,
/// or nothing when it names none.
#[must_use]
pub fn insufficient_scope(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut at: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut said = false;
    while let Some(e) = at {
        if let Some(refused) =
            e.downcast_ref::<rmcp::transport::streamable_http_client::InsufficientScopeError>()
        {
            return Some(
                refused
                    .required_scope
                    .clone()
                    .or_else(|| challenge_scope(&refused.www_authenticate_header))
                    .unwrap_or_default(),
            );
        }
        said |= e.to_string().contains("Insufficient scope");
        at = e.source();
    }
    said.then(String::new)
}

/// The `scope` parameter of a `WWW-Authenticate` challenge.
fn challenge_scope(challenge: &str) -> Option<String> {
    let at = challenge.find("scope=")? + "scope=".len();
    let rest = &challenge[at..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    (!value.is_empty()).then(|| value.to_owned())
}

/// Where server `name`'s pre-registered client secret is kept (`cox mcp
/// add --client-secret`): beside its login, in the keyring or a 0600 file.
fn secret_vault(home: &Path, name: &str) -> vault::Vault {
    vault::Vault::new(&folder(home), &format!("{name}.client-secret"))
}

/// Why a client that needs a secret has none.
fn no_secret(name: &str) -> String {
    format!(
        "no client secret: set oauth.client_secret (\"${{VAR}}\"), or keep one with cox mcp add \
         {name} … --client-secret"
    )
}

/// Keeps server `name`'s client secret for the server at `url`; where it
/// went. Like a login, it is bound to that URL: a server of the same name
/// elsewhere (a project's) is never sent it.
///
/// # Errors
/// It cannot be written.
pub fn keep_client_secret(
    home: &Path,
    name: &str,
    url: &str,
    secret: &str,
) -> Result<String, String> {
    let vault = secret_vault(home, name);
    vault.write(&json!({"url": url, "secret": secret}).to_string())?;
    Ok(vault.label())
}

/// Forgets server `name`'s kept client secret; whether there was one.
///
/// # Errors
/// It exists and cannot be removed.
pub fn forget_client_secret(home: &Path, name: &str) -> Result<bool, String> {
    secret_vault(home, name).forget()
}

/// `client` with the secret kept for server `name` at `url` when its
/// entry names none (the keyring may wait on the person: off the async
/// threads). One kept for another URL is not taken.
async fn with_kept_secret(
    home: &Path,
    name: &str,
    url: &str,
    client: &cox_protocol::mcp::OAuthClient,
) -> Result<cox_protocol::mcp::OAuthClient, String> {
    let mut client = client.clone();
    if client.client_secret.is_none() {
        let vault = secret_vault(home, name);
        let kept = tokio::task::spawn_blocking(move || vault.read())
            .await
            .map_err(|e| format!("reading the client secret failed: {e}"))??;
        client.client_secret = kept.into_iter().find_map(|(_, text)| {
            let kept: Value = serde_json::from_str(&text).ok()?;
            (kept.get("url").and_then(Value::as_str) == Some(url))
                .then(|| kept.get("secret")?.as_str().map(str::to_owned))
                .flatten()
        });
    }
    Ok(client)
}

/// Whether an rmcp error says the server wants a (new) login.
#[must_use]
pub fn wants_login(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut at: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = at {
        if let Some(http) = e.downcast_ref::<
            rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>,
        >() && matches!(
            http,
            rmcp::transport::streamable_http_client::StreamableHttpError::AuthRequired(_)
                | rmcp::transport::streamable_http_client::StreamableHttpError::Auth(
                    AuthError::AuthorizationRequired
                )
        ) {
            return true;
        }
        if let Some(AuthError::AuthorizationRequired) = e.downcast_ref::<AuthError>() {
            return true;
        }
        // The transport's own error type is not always the one above
        // (the worker wraps it); its text is rmcp's fixed wording.
        if e.to_string().contains("error: Auth required")
            || e.to_string().starts_with("Auth required")
        {
            return true;
        }
        at = e.source();
    }
    false
}

/// What `login` needs besides the server.
pub struct Login<'a> {
    /// `$COX_HOME`.
    pub home: &'a Path,
    /// Shown the URL to open; it also tries to open a browser.
    pub show: &'a (dyn Fn(&str) + Sync),
    /// How long to wait for the browser's redirect.
    pub wait: Duration,
    /// The URL of a client metadata document (`MCP_OAUTH_CLIENT_METADATA_URL`):
    /// its URL is the client id where the authorization server takes such
    /// documents, in place of dynamic registration.
    pub client_metadata_url: Option<&'a str>,
}

/// Runs the authorization code flow for server `name` at `url` and files
/// its tokens, as `client` when the server's entry names a pre-registered
/// one (else with dynamic client registration). Returns the issuer the
/// login was made with.
///
/// # Errors
/// The server does not ask for a login, discovery or registration fails,
/// the browser's redirect does not come within `wait` or carries an
/// error, or the token exchange fails.
pub async fn login(
    name: &str,
    (url, headers): (&str, &[(String, String)]),
    client: Option<&cox_protocol::mcp::OAuthClient>,
    how: &Login<'_>,
) -> Result<String, String> {
    let kept = match client {
        Some(client) => Some(with_kept_secret(how.home, name, url, client).await?),
        None => None,
    };
    let client = kept.as_ref();
    if let Some(client) =
        client.filter(|c| c.grant != cox_protocol::mcp::OAuthGrant::AuthorizationCode)
    {
        return client_credentials_apart(
            how.home.to_path_buf(),
            name.to_owned(),
            (url.to_owned(), headers.to_vec()),
            client.clone(),
        )
        .await;
    }
    let (challenge, manager, metadata) = discovered(how.home, name, (url, headers)).await?;
    let port = client.and_then(|c| c.callback_port).unwrap_or(0);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    // Scopes calls were refused for since the last login are asked for
    // with the challenge's (a step-up).
    let wanted = off_thread(&TokenFile::new(how.home, name, url), |f| Ok(f.wanted()))
        .await
        .unwrap_or_default();
    let mut request = AuthorizationRequest::new(redirect.clone()).with_client_name("cox");
    if !wanted.is_empty() {
        let mut scopes: Vec<String> = challenge_scope(&challenge)
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        for scope in wanted {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        request = request.with_scopes(scopes);
    }
    let mut request = request.with_challenge(challenge);
    // A client registered out of band: no dynamic registration is tried.
    // Else a client metadata document, where there is one and the server
    // takes them.
    if client.is_none()
        && let Some(document) = how.client_metadata_url
    {
        request = request.with_client_metadata_url(document);
    }
    if let Some(client) = client {
        request = request.with_preregistered_client(client.client_id.clone());
        if let Some(secret) = &client.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| format!("starting the login failed: {e}"))?;
    (how.show)(session.get_authorization_url());
    let query = tokio::time::timeout(how.wait, redirected(&listener))
        .await
        .map_err(|_| {
            format!(
                "no browser came back to {redirect} within {} s",
                how.wait.as_secs()
            )
        })??;
    session
        .handle_callback_url(&format!("{redirect}?{query}"))
        .await
        .map_err(|e| format!("the token exchange failed: {e}"))?;
    Ok(metadata.issuer.unwrap_or_else(|| url.to_owned()))
}

/// The challenge of the server at `url`, and an authorization manager
/// set up with its authorization server's metadata and a store over the
/// login of server `name`.
async fn discovered(
    home: &Path,
    name: &str,
    (url, headers): (&str, &[(String, String)]),
) -> Result<(String, AuthorizationManager, AuthorizationMetadata), String> {
    let challenge = probe(url, headers).await?;
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let metadata =
        match manager
            .resolve_metadata_from_challenge(Some(&challenge))
            .await
        {
            Ok(resolution) => resolution.metadata,
            Err(e @ AuthError::AuthorizationServerMismatch { .. }) => same_origin_metadata(url)
                .await
                .ok_or_else(|| format!("discovering {url}'s authorization server failed: {e}"))?,
            Err(e) => {
                return Err(format!(
                    "discovering {url}'s authorization server failed: {e}"
                ));
            }
        };
    manager.set_metadata(metadata.clone());
    manager.set_credential_store(Store {
        file: TokenFile::new(home, name, url),
        metadata: Some(metadata.clone()),
        refresh: Arc::default(),
    });
    Ok((challenge, manager, metadata))
}

/// Exchanges `client`'s id and secret for a token of server `name` at
/// `url` (the client credentials grant: no person, no browser) and files
/// it. Returns the issuer.
///
/// # Errors
/// The server asks for no login, discovery fails, the authorization
/// server does not take this client's way of authenticating, or refuses.
async fn client_credentials(
    home: &Path,
    name: &str,
    (url, headers): (&str, &[(String, String)]),
    client: &cox_protocol::mcp::OAuthClient,
) -> Result<String, String> {
    use rmcp::transport::auth::{ClientCredentialsConfig, JwtSigningAlgorithm};
    let (challenge, mut manager, metadata) = discovered(home, name, (url, headers)).await?;
    let scopes: Vec<String> = challenge_scope(&challenge)
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let resource = Some(url.to_owned());
    let config = match (&client.private_key, &client.client_secret) {
        // A key signs the client's assertion (RFC 7523), no secret sent.
        (Some(key), _) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id: client.client_id.clone(),
            signing_key: key.clone().into_bytes(),
            signing_algorithm: match client.signing_algorithm.as_deref() {
                Some("RS256") => JwtSigningAlgorithm::RS256,
                Some("RS384") => JwtSigningAlgorithm::RS384,
                Some("RS512") => JwtSigningAlgorithm::RS512,
                Some("ES384") => JwtSigningAlgorithm::ES384,
                _ => JwtSigningAlgorithm::ES256,
            },
            token_endpoint_audience: None,
            scopes,
            resource,
        },
        (None, Some(secret)) => ClientCredentialsConfig::ClientSecret {
            client_id: client.client_id.clone(),
            client_secret: secret.clone(),
            scopes,
            resource,
        },
        (None, None) => return Err(no_secret(name)),
    };
    let refused = |e: AuthError| format!("the client credentials exchange failed: {e}");
    manager
        .validate_client_credentials_metadata(&config)
        .map_err(refused)?;
    manager
        .configure_client_credentials(&config)
        .map_err(refused)?;
    manager
        .exchange_client_credentials(&config)
        .await
        .map_err(refused)?;
    Ok(metadata.issuer.unwrap_or_else(|| url.to_owned()))
}

/// Cross-app access for server `name` at `url`: `client`'s identity
/// provider exchanges the person's ID token for an assertion (an ID-JAG)
/// meant for the server's authorization server, which exchanges it for a
/// token, filed as a login is. Returns the issuer.
///
/// # Errors
/// Discovery fails, or either exchange is refused.
async fn cross_app(
    home: &Path,
    name: &str,
    (url, headers): (&str, &[(String, String)]),
    client: &cox_protocol::mcp::OAuthClient,
) -> Result<String, String> {
    use rmcp::transport::auth::enterprise::{
        EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
    };
    let Some(idp) = &client.idp else {
        return Err("cross-app access needs the identity provider (oauth.idp_…)".into());
    };
    let Some(secret) = &client.client_secret else {
        return Err(no_secret(name));
    };
    let (challenge, _, metadata) = discovered(home, name, (url, headers)).await?;
    let issuer = metadata.issuer.clone().unwrap_or_else(|| url.to_owned());
    // The method the server's authorization server names; Basic by default.
    let post_only = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .is_some_and(|m| {
            m.iter().any(|v| v == "client_secret_post")
                && !m.iter().any(|v| v == "client_secret_basic")
        });
    let secret = oauth2::ClientSecret::new(secret.clone());
    let resource_as = EmaAuthorizationServer::new(
        issuer.clone(),
        metadata.token_endpoint.clone(),
        client.client_id.clone(),
    )
    .with_client_authentication(if post_only {
        EmaClientAuthentication::ClientSecretPost(secret)
    } else {
        EmaClientAuthentication::ClientSecretBasic(secret)
    });
    let provider = EmaAuthorizationServer::new(
        idp.issuer.clone(),
        idp.token_endpoint.clone(),
        idp.client_id.clone(),
    )
    .with_client_authentication(match &idp.client_secret {
        Some(secret) => {
            EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(secret.clone()))
        }
        None => EmaClientAuthentication::None,
    });
    let scopes: Vec<String> = challenge_scope(&challenge)
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let http = rmcp::transport::auth::default_oauth_http_client()
        .map_err(|e| format!("cannot reach the authorization servers: {e}"))?;
    let token = EmaExchangeRequest::new_with_id_token(provider, resource_as, url, &idp.id_token)
        .with_scopes(scopes)
        .exchange(&http, &http)
        .await
        .map_err(|e| format!("the cross-app exchange failed: {e}"))?;
    let mut response = json!({
        "access_token": token.access_token.secret(),
        "token_type": "Bearer",
    });
    if let Some(expires) = token.expires_in {
        response["expires_in"] = expires.as_secs().into();
    }
    // Built as JSON: the credentials' type is rmcp's to extend.
    let credentials: StoredCredentials = serde_json::from_value(json!({
        "client_id": client.client_id,
        "token_response": response,
        "granted_scopes": token.scopes.into_iter().collect::<Vec<_>>(),
        "token_received_at": now(),
        "issuer": issuer,
    }))
    .map_err(|e| format!("the cross-app token cannot be kept: {e}"))?;
    Store {
        file: TokenFile::new(home, name, url),
        metadata: Some(metadata),
        refresh: Arc::default(),
    }
    .save(credentials)
    .await
    .map_err(|e| format!("the cross-app token cannot be kept: {e}"))?;
    Ok(issuer)
}

/// [`client_credentials`] (or [`cross_app`], for that grant) on a thread
/// and runtime of its own: the signed assertion's exchange is not a future
/// that may move between threads, and a server connects on any.
///
/// # Errors
/// As [`client_credentials`].
pub async fn client_credentials_apart(
    home: PathBuf,
    name: String,
    (url, headers): (String, Vec<(String, String)>),
    client: cox_protocol::mcp::OAuthClient,
) -> Result<String, String> {
    let client = with_kept_secret(&home, &name, &url, &client).await?;
    tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the token exchange: {e}"))?;
        runtime.block_on(async {
            if client.grant == cox_protocol::mcp::OAuthGrant::CrossApp {
                cross_app(&home, &name, (&url, &headers), &client).await
            } else {
                client_credentials(&home, &name, (&url, &headers), &client).await
            }
        })
    })
    .await
    .map_err(|e| format!("the token exchange failed: {e}"))?
}

/// The authorization server metadata at the origin of `url`
/// (`/.well-known/oauth-authorization-server`), as servers of the
/// 2025-03-26 revision serve it, when its issuer is on that same origin
/// though at another path (`https://host/oauth`): a strict reading of RFC
/// 8414 wants the issuer at the root there, and such servers exist. An
/// issuer on another origin is never taken (that is the mix-up the check
/// guards against).
async fn same_origin_metadata(url: &str) -> Option<AuthorizationMetadata> {
    let base = reqwest::Url::parse(url).ok()?;
    let origin = base.origin();
    let well_known = base.join("/.well-known/oauth-authorization-server").ok()?;
    let metadata: AuthorizationMetadata = reqwest::Client::new()
        .get(well_known)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .ok()?
        .error_for_status()
        .ok()?
        .json()
        .await
        .ok()?;
    let issuer = reqwest::Url::parse(metadata.issuer.as_deref()?).ok()?;
    let same = |endpoint: &str| reqwest::Url::parse(endpoint).is_ok_and(|e| e.origin() == origin);
    (issuer.origin() == origin
        && same(&metadata.authorization_endpoint)
        && same(&metadata.token_endpoint))
    .then(|| {
        tracing::info!(%issuer, "authorization server metadata at the origin, issuer at a path");
        metadata
    })
}

/// Unauthenticated requests to `url` until one is refused: the
/// `WWW-Authenticate` of that 401 (or 403). `initialize` first; a server
/// that lets anyone start a session and guards its tools is asked
/// `tools/list` in that session.
async fn probe(url: &str, headers: &[(String, String)]) -> Result<String, String> {
    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .timeout(Duration::from_secs(30));
        for (key, value) in headers {
            request = request.header(key, value);
        }
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        request.body(body.to_string()).send()
    };
    let sent = |e: reqwest::Error| format!("{url}: {}", e.without_url());
    let response = post(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "cox", "version": env!("CARGO_PKG_VERSION")}}}),
        None,
    )
    .await
    .map_err(sent)?;
    let response = if response.status().is_success() {
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let _ = response.bytes().await;
        post(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            session.as_deref(),
        )
        .await
        .map_err(sent)?;
        post(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
            session.as_deref(),
        )
        .await
        .map_err(sent)?
    } else {
        response
    };
    let refused = matches!(
        response.status(),
        reqwest::StatusCode::UNAUTHORIZED | reqwest::StatusCode::FORBIDDEN
    );
    if !refused {
        return Err(format!(
            "{url} answered {} without asking for a login; it needs none",
            response.status()
        ));
    }
    response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "{url} answered {} with no WWW-Authenticate challenge",
                response.status()
            )
        })
}

/// The query of the first request to `/callback` on `listener`, answered
/// with a page saying the login is done (or what went wrong). Other
/// requests (a browser's favicon) get 404.
async fn redirected(listener: &tokio::net::TcpListener) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|e| format!("the redirect listener failed: {e}"))?;
        let mut buf = vec![0u8; 16 * 1024];
        let mut len = 0;
        while len < buf.len() {
            match stream.read(&mut buf[len..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => len += n,
            }
            if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let head = String::from_utf8_lossy(&buf[..len]);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.split(' ').nth(1))
            .unwrap_or("");
        let Some(query) = target.strip_prefix("/callback?") else {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        };
        let error = query
            .split('&')
            .find_map(|pair| pair.strip_prefix("error="))
            .map(str::to_owned);
        let body = match &error {
            None => "cox: logged in. You can close this tab.".to_owned(),
            Some(e) => format!("cox: the login failed ({e})."),
        };
        let _ = stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .await;
        return match error {
            None => Ok(query.to_owned()),
            Some(e) => Err(format!("the authorization server refused the login: {e}")),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenges_scope_is_read_quoted_or_bare() {
        assert_eq!(
            challenge_scope(r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write""#),
            Some("mcp:basic mcp:write".to_owned())
        );
        assert_eq!(
            challenge_scope("Bearer scope=files, realm=x"),
            Some("files".to_owned())
        );
        assert_eq!(challenge_scope(r#"Bearer realm="x""#), None);
        assert_eq!(challenge_scope(r#"Bearer scope="""#), None);
    }

    #[tokio::test]
    async fn a_kept_client_secret_goes_only_to_its_servers_url() {
        let home = tempfile::tempdir().unwrap();
        keep_client_secret(home.path(), "corp", "https://corp.example/mcp", "s3cret").unwrap();
        let client = cox_protocol::mcp::OAuthClient {
            client_id: "c".into(),
            client_secret: None,
            grant: cox_protocol::mcp::OAuthGrant::AuthorizationCode,
            private_key: None,
            signing_algorithm: None,
            idp: None,
            callback_port: None,
        };
        let at = |url: &'static str| {
            let (home, client) = (home.path().to_path_buf(), client.clone());
            async move {
                with_kept_secret(&home, "corp", url, &client)
                    .await
                    .unwrap()
                    .client_secret
            }
        };
        assert_eq!(
            at("https://corp.example/mcp").await.as_deref(),
            Some("s3cret")
        );
        // A server of the same name elsewhere (a project's) never gets it.
        assert_eq!(at("https://evil.example/mcp").await, None);
        assert!(forget_client_secret(home.path(), "corp").unwrap());
        assert_eq!(at("https://corp.example/mcp").await, None);
    }

    #[test]
    fn a_refused_scope_is_asked_for_at_the_next_login() {
        let home = tempfile::tempdir().unwrap();
        let file = TokenFile::new(home.path(), "docs", "http://127.0.0.1:1/mcp");
        // No login yet: nothing to remember it with.
        file.want("mcp:write").unwrap();
        assert!(file.wanted().is_empty());
        file.vault
            .write_file(&json!({"url": "http://127.0.0.1:1/mcp"}).to_string())
            .unwrap();
        file.want("mcp:basic mcp:write").unwrap();
        file.want("mcp:write admin").unwrap();
        assert_eq!(file.wanted(), ["mcp:basic", "mcp:write", "admin"]);
    }

    #[test]
    fn a_token_file_is_private_and_bound_to_its_url() {
        use std::os::unix::fs::PermissionsExt as _;
        let home = tempfile::tempdir().unwrap();
        let file = TokenFile::new(home.path(), "docs", "http://127.0.0.1:1/mcp");
        assert_eq!(file.status(), Status::None);
        file.vault
            .write_file(
                &json!({
                    "url": "http://127.0.0.1:1/mcp",
                    "credentials": {"client_id": "c", "token_response": {
                        "access_token": "a", "token_type": "bearer", "expires_in": 7200,
                        "refresh_token": "r"}, "token_received_at": now()}
                })
                .to_string(),
            )
            .unwrap();
        let mode = std::fs::metadata(file.vault.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir = std::fs::metadata(folder(home.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir & 0o777, 0o700);
        assert!(
            file.status().to_string().starts_with("ok (expires in "),
            "{}",
            file.status()
        );
        let moved = TokenFile::new(home.path(), "docs", "http://127.0.0.1:2/mcp");
        assert_eq!(
            moved.status(),
            Status::None,
            "a token never follows a name to another URL"
        );
        assert!(file.forget().unwrap());
        assert_eq!(file.status(), Status::None);
    }

    #[test]
    fn an_expired_token_says_whether_it_refreshes() {
        let home = tempfile::tempdir().unwrap();
        let file = TokenFile::new(home.path(), "docs", "http://x/mcp");
        file.vault
            .write_file(
                &json!({
                    "url": "http://x/mcp",
                    "credentials": {"client_id": "c", "token_response": {
                        "access_token": "a", "token_type": "bearer", "expires_in": 60},
                        "token_received_at": now() - 120}
                })
                .to_string(),
            )
            .unwrap();
        assert_eq!(file.status(), Status::Expired { refreshable: false });
        assert_eq!(file.status().to_string(), "expired");
    }
}
