//! Accounts: several identities per agent, one per session, injected per spawn.
//!
//! An account belongs to one agent and has a kind ([`kinds`]). Its public record
//! (label, agent, kind, home folder, endpoint, public variables, last seen limits)
//! lives in SQLite (`weft_store::accounts`); its secret lives in the OS secret store
//! ([`secret::SecretServiceStore`]), in a variable of the daemon's environment, or
//! behind a command — never in a file Weft writes, the database, a log, an event, a
//! snapshot or an argument list.
//!
//! [`Accounts`] is the kernel's `Accounts` port: for a turn on an account it
//! returns an isolated spawn (a cleared environment plus the kernel's allow-list) with
//! that account's variables and arguments. Every driver reads its spawn environment
//! through `AgentTurnInput::spawn_env`, and the PTY rail starts from the same
//! allow-listed base, so the structured rail, the agent's own terminal and any driver to
//! come get the account the same way. The daemon's own environment is never changed.
//!
//! Hazards: a login home belongs to one account; two sessions on it share it (the
//! CLI's own contract), and Weft never copies or symlinks a credentials file. A secret
//! service that is missing or locked fails the operation that needed it with a message
//! that says what to do; no record is lost or half-written.

pub mod agents;
mod handover;
pub mod kinds;
pub mod limits;
mod probe;
pub mod secret;
pub mod switch;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft_agent_spec::spec::AgentSpec;
use weft_kernel::ports::SpawnAccount;
use weft_kernel::AgentTurnInput;
use weft_protocol::{
    AccountInfo, AccountTest, AccountUsageDay, AddAccountRequest, DriverEvent, SecretInput,
    SecretSource, UniversalSnapshot,
};
use weft_store::accounts::AccountTable;

pub use secret::{MemoryStore, Secret, SecretError, SecretServiceStore, SecretStore};

/// Why an account operation failed: a sentence naming the account.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    /// No account has that id.
    #[error("{0}")]
    Unknown(String),
    /// The request is wrong (kind, URL, secret, …).
    #[error("{0}")]
    Bad(String),
    /// The secret store or the database failed.
    #[error("{0}")]
    Storage(String),
}

/// Every account, and what a spawn on one gets.
pub struct Accounts {
    table: AccountTable,
    /// Every agent's spec (the registry's), handed in by the daemon: what each agent's
    /// accounts are is read there, never matched on its id here.
    specs: Arc<[AgentSpec]>,
    secrets: Arc<dyn SecretStore>,
    state_dir: PathBuf,
}

impl std::fmt::Debug for Accounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accounts")
            .field("state_dir", &self.state_dir)
            .finish_non_exhaustive()
    }
}

fn now_ms() -> i64 {
    weft_kernel::now_ms()
}

fn storage(e: impl std::fmt::Display) -> AccountError {
    AccountError::Storage(e.to_string())
}

/// A variable name as a shell would take it.
fn valid_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Accounts {
    /// Accounts of the database at `db`, with secrets in `secrets`, for the agents
    /// `specs` describe; login homes go under `state_dir/homes`.
    pub fn open(
        state_dir: &Path,
        db: &Path,
        secrets: Arc<dyn SecretStore>,
        specs: impl Into<Arc<[AgentSpec]>>,
    ) -> Result<Self, AccountError> {
        Ok(Self {
            table: AccountTable::open(db).map_err(storage)?,
            specs: specs.into(),
            secrets,
            state_dir: state_dir.to_path_buf(),
        })
    }

    /// Every agent's spec, as the daemon handed them over.
    pub fn specs(&self) -> &[AgentSpec] {
        &self.specs
    }

    /// The spec of `agent`, when it has one (a user's ACP agent may not).
    pub fn spec(&self, agent: &str) -> Option<&AgentSpec> {
        self.specs.iter().find(|s| s.id == agent)
    }

    /// Every account, oldest first.
    pub fn list(&self) -> Result<Vec<AccountInfo>, AccountError> {
        self.table.list().map_err(storage)
    }

    /// One account, or an error naming the id.
    pub fn get(&self, id: &str) -> Result<AccountInfo, AccountError> {
        self.table.get(id).map_err(storage)?.ok_or_else(|| {
            AccountError::Unknown(format!(
                "unknown account `{id}` (`weft accounts list` shows them)"
            ))
        })
    }

    /// Adds an account. A secret value goes to the secret store first: if that fails,
    /// nothing is recorded.
    pub fn add(&self, request: AddAccountRequest) -> Result<AccountInfo, AccountError> {
        let bad = AccountError::Bad;
        let agent = request.agent.trim().to_string();
        let kind = request.kind.trim().to_string();
        let rules = kinds::rules(&self.specs, &agent, &kind).map_err(bad)?;
        let label = request.label.trim().to_string();
        if label.is_empty() {
            return Err(bad("an account needs a label (--label)".into()));
        }
        let base_url = match (rules.base_url, request.base_url.as_deref()) {
            (kinds::Need::No, Some(_)) => {
                return Err(bad(format!("a {agent} `{kind}` account takes no base URL")))
            }
            (kinds::Need::Required, None) => {
                return Err(bad(format!(
                    "a {agent} `{kind}` account needs a base URL (--base-url)"
                )))
            }
            (_, Some(u)) => Some(kinds::check_base_url(u).map_err(bad)?),
            (_, None) => None,
        };
        // A protocol is one some agent speaks; the kind that needs one, one of its own.
        let mut protocols: Vec<&str> = Vec::new();
        for p in self.specs.iter().flat_map(|s| s.accounts.kinds()) {
            for p in &p.protocols {
                if !protocols.contains(&p.as_str()) {
                    protocols.push(p);
                }
            }
        }
        if !rules.protocols.is_empty() {
            protocols = rules.protocols.iter().map(String::as_str).collect();
        }
        if let Some(p) = &request.protocol {
            if !protocols.contains(&p.as_str()) {
                return Err(bad(format!(
                    "`{p}` is not a protocol; use one of {}",
                    protocols.join(", ")
                )));
            }
        }
        for name in request.env.keys() {
            if !valid_var_name(name) {
                return Err(bad(format!("`{name}` is not a variable name")));
            }
        }
        if let ([first @ .., last], None) = (rules.protocols, &request.protocol) {
            let first: Vec<&str> = first.iter().map(String::as_str).collect();
            return Err(bad(format!(
                "a {agent} `{kind}` account needs its protocol (--protocol {} or {last})",
                first.join(", ")
            )));
        }
        let secret_var = request.secret_var.as_deref().map(str::trim);
        match (kind.as_str(), secret_var, &request.secret) {
            ("env", Some(name), _) if !valid_var_name(name) => {
                return Err(bad(format!("`{name}` is not a variable name")))
            }
            ("env", None, Some(_)) => {
                return Err(bad(format!(
                    "a {agent} `env` account gives its secret in a variable: name it with \
                     --secret-var NAME"
                )))
            }
            ("env", Some(_), None) => {
                return Err(bad(
                    "--secret-var names the variable of a secret; give the secret with \
                     --secret-stdin, --secret-env NAME or --secret-command CMD"
                        .into(),
                ))
            }
            ("env", _, _) | (_, None, _) => {}
            (_, Some(_), _) => {
                return Err(bad(format!(
                    "a {agent} `{kind}` account takes no --secret-var (its kind says where \
                     the secret goes)"
                )))
            }
        }
        let id = format!("acct-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let secret_source = match (&request.secret, rules.secret) {
            (Some(_), kinds::Need::No) => {
                return Err(bad(format!(
                    "a {agent} `{kind}` account takes no secret (it logs in with `weft accounts login`)"
                )))
            }
            (None, kinds::Need::Required) => {
                return Err(bad(format!(
                    "a {agent} `{kind}` account needs a secret: --secret-stdin, --secret-env NAME \
                     or --secret-command CMD"
                )))
            }
            (None, _) => SecretSource::None,
            (Some(SecretInput::Env { name }), _) => {
                if !valid_var_name(name) {
                    return Err(bad(format!("`{name}` is not a variable name")));
                }
                SecretSource::Env { name: name.clone() }
            }
            (Some(SecretInput::Command { command }), _) => {
                if command.trim().is_empty() {
                    return Err(bad("the secret command is empty".into()));
                }
                SecretSource::Command {
                    command: command.clone(),
                }
            }
            (Some(SecretInput::Value { value }), _) => {
                let secret = Secret::new(value.0.trim().to_string());
                if secret.is_blank() {
                    return Err(bad("the secret is empty".into()));
                }
                self.secrets.set(&id, &secret).map_err(storage)?;
                SecretSource::Store
            }
        };
        let home_dir = rules.login.then(|| {
            kinds::home_for(&self.state_dir, &agent, &id)
                .to_string_lossy()
                .into_owned()
        });
        if let Some(home) = &home_dir {
            make_private_dir(Path::new(home)).map_err(storage)?;
        }
        let now = now_ms();
        let account = AccountInfo {
            id: id.clone(),
            agent,
            kind,
            label,
            home_dir,
            base_url,
            protocol: request.protocol,
            models: request.models,
            env: request.env,
            secret: secret_source,
            secret_var: secret_var.map(str::to_string),
            limits: Vec::new(),
            created_at: now,
            updated_at: now,
        };
        if let Err(e) = self.table.put(&account) {
            if account.secret == SecretSource::Store {
                let _ = self.secrets.delete(&id);
            }
            return Err(storage(e));
        }
        Ok(account)
    }

    /// Renames an account.
    pub fn rename(&self, id: &str, label: &str) -> Result<AccountInfo, AccountError> {
        let label = label.trim();
        if label.is_empty() {
            return Err(AccountError::Bad("the new label is empty".into()));
        }
        let mut account = self.get(id)?;
        account.label = label.to_string();
        account.updated_at = now_ms();
        self.table.put(&account).map_err(storage)?;
        Ok(account)
    }

    /// Removes an account: its secret first (a secret store that cannot be reached
    /// keeps the record, so the secret is never orphaned unseen), then its record, then
    /// its home folder when asked.
    pub fn remove(&self, id: &str, delete_home: bool) -> Result<(), AccountError> {
        let account = self.get(id)?;
        if account.secret == SecretSource::Store {
            self.secrets.delete(id).map_err(|e| {
                AccountError::Storage(format!("account `{id}` ({}) was kept: {e}", account.label))
            })?;
        }
        self.table.delete(id).map_err(storage)?;
        if delete_home {
            if let Some(home) = &account.home_dir {
                let home = Path::new(home);
                // Only ever a folder Weft made for this account.
                if home.starts_with(self.state_dir.join("homes")) && home.ends_with(id) {
                    let _ = std::fs::remove_dir_all(home);
                }
            }
        }
        Ok(())
    }

    /// Usage per day, newest first.
    pub fn usage(&self, id: Option<&str>) -> Result<Vec<AccountUsageDay>, AccountError> {
        self.table.usage(id).map_err(storage)
    }

    /// The account's secret, from wherever it is kept. Errors name the account. The
    /// OS secret store and a secret command block (a D-Bus call, a process of up to
    /// [`secret::COMMAND_TIMEOUT`]): on an async runtime's worker they run with
    /// [`secret::off_the_runtime`].
    pub fn secret_of(&self, account: &AccountInfo) -> Result<Option<Secret>, String> {
        let who = format!("account `{}` ({})", account.id, account.label);
        match &account.secret {
            SecretSource::None => Ok(None),
            SecretSource::Store => {
                match secret::off_the_runtime(|| self.secrets.get(&account.id)) {
                    Ok(Some(s)) => Ok(Some(s)),
                    Ok(None) => Err(format!(
                        "{who}: its secret is gone from the OS secret store; remove the account \
                     and add it again"
                    )),
                    Err(e) => Err(format!("{who}: {e}")),
                }
            }
            SecretSource::Env { name } => match std::env::var(name) {
                Ok(v) if !v.trim().is_empty() => Ok(Some(Secret::new(v.trim().to_string()))),
                _ => Err(format!(
                    "{who}: its secret comes from ${name}, which the Weft daemon's environment \
                     does not set (stop the daemon and start it where ${name} is set)"
                )),
            },
            SecretSource::Command { .. } => {
                let SecretSource::Command { command } = &account.secret else {
                    return Ok(None);
                };
                secret::off_the_runtime(|| secret::from_command(command))
                    .map(Some)
                    .map_err(|e| format!("{who}: {e}"))
            }
        }
    }

    /// Whether a login account's home holds a login, in the CLI's own files (never
    /// read beyond "is it there, has it expired").
    fn login_state(&self, account: &AccountInfo) -> Result<(), String> {
        let who = format!("account `{}` ({})", account.id, account.label);
        let Some(home) = account.home_dir.as_deref().map(Path::new) else {
            return Err(format!("{who} has no home folder"));
        };
        let login = format!("log in with `weft accounts login {}`", account.id);
        let Some(logged_in) = self
            .spec(&account.agent)
            .and_then(|s| s.config_home.as_ref())
            .and_then(|h| h.logged_in.as_ref())
        else {
            return Ok(());
        };
        let file = home.join(&logged_in.file);
        let Some(key) = &logged_in.oauth else {
            return match file.is_file() {
                true => Ok(()),
                false => Err(format!("{who} is not logged in: {login}")),
            };
        };
        let Ok(text) = std::fs::read_to_string(&file) else {
            return Err(format!("{who} is not logged in: {login}"));
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let oauth = &v[key.as_str()];
        if oauth.is_null() {
            return Err(format!("{who} is not logged in: {login}"));
        }
        let expired = oauth["expiresAt"].as_i64().is_some_and(|t| t < now_ms());
        let refresh = oauth["refreshToken"]
            .as_str()
            .is_some_and(|t| !t.is_empty());
        if expired && !refresh {
            return Err(format!("{who}: its login has expired: {login}"));
        }
        Ok(())
    }

    /// Checks that `id` can run a turn of `agent` now (a secret command is not run:
    /// only at spawn).
    pub fn usable(&self, agent: &str, id: &str) -> Result<AccountInfo, String> {
        let account = self.get(id).map_err(|e| e.to_string())?;
        if account.agent != agent {
            return Err(format!(
                "account `{id}` ({}) is a {} account; this session runs {agent}",
                account.label, account.agent
            ));
        }
        match &account.secret {
            _ if account.kind == "login" => self.login_state(&account)?,
            // Run at spawn only (where a failure fails the turn, naming the account):
            // run here too, a slow command held up the prompt that named the account,
            // and then ran a second time.
            SecretSource::Command { command } if !command.trim().is_empty() => {}
            _ => {
                self.secret_of(&account)?;
            }
        }
        Ok(account)
    }

    /// Tests an account: its secret is there and its endpoint takes it, or its login
    /// is there (see `probe`).
    pub async fn test(&self, id: &str) -> Result<AccountTest, AccountError> {
        let account = self.get(id)?;
        Ok(probe::test(self, &account).await)
    }

    /// Folds limit windows into the account's record.
    pub fn record_limits(&self, id: &str, windows: Vec<weft_protocol::LimitWindow>) {
        let Ok(Some(mut account)) = self.table.get(id) else {
            return;
        };
        for w in windows {
            match account.limits.iter_mut().find(|l| l.window == w.window) {
                Some(l) => *l = w,
                None => account.limits.push(w),
            }
        }
        if let Err(e) = self.table.put(&account) {
            tracing::warn!(account = %id, "cannot record its limits: {e}");
        }
    }
}

impl Accounts {
    /// A session resuming under a config folder that lacks its transcript gets a copy
    /// from the folder that has it (the ambient one, or another account's): see
    /// `handover`. `env` is what the turn's account sets.
    fn carry_transcript(&self, input: &AgentTurnInput, agent: &str, env: &[(String, String)]) {
        // A fork that has not run yet resumes its parent's transcript (`--resume PARENT
        // --fork-session`, `thread/fork`), so that is the one the account's home needs.
        let Some(session_id) = input
            .session_id
            .as_ref()
            .or(input.fork.as_ref().map(|f| &f.parent_id))
        else {
            return;
        };
        let Some(spec) = self.spec(agent) else {
            return;
        };
        let (Some(layout), Some(config)) = (&spec.transcript, &spec.config_home) else {
            return;
        };
        let var = config.var.as_str();
        let home = input.base_env().get("HOME").cloned();
        let default = home
            .zip(config.default_dir.as_ref())
            .map(|(h, d)| Path::new(&h).join(d));
        let set = env
            .iter()
            .rev()
            .find(|(k, _)| k == var)
            .map(|(_, v)| PathBuf::from(v));
        let Some(target) = set
            .or_else(|| ambient_home(input, Some(spec)).map(PathBuf::from))
            .or(default.clone())
        else {
            return;
        };
        let mut known: Vec<PathBuf> = ambient_home(input, Some(spec))
            .map(PathBuf::from)
            .into_iter()
            .chain(default)
            .collect();
        if let Ok(all) = self.list() {
            known.extend(
                all.iter()
                    .filter(|a| a.agent == agent)
                    .filter_map(|a| a.home_dir.as_deref().map(PathBuf::from)),
            );
        }
        match handover::carry(layout, session_id, &target, &known) {
            Ok(Some(to)) => {
                tracing::info!(session = %input.session_key, to = %to.display(), "carried the transcript into the account's home")
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(session = %input.session_key, "cannot carry the transcript into the account's home: {e}")
            }
        }
    }
}

impl Accounts {
    /// A Gemini key account's spawn must use its key even where the user's own
    /// settings select a Google login: Gemini reads `security.auth.selectedType` from
    /// its settings before its environment, and system settings
    /// (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`, checked with gemini 0.61.0) override the
    /// user's. The file Weft writes for the account carries over what the system's own
    /// settings file says and sets only the auth type (no secret is in it). Weft's MCP
    /// servers travel in the system-defaults file, which this leaves alone.
    fn gemini_auth_settings(
        &self,
        input: &AgentTurnInput,
        account: &AccountInfo,
    ) -> Result<Option<String>, String> {
        let Some(auth) = self
            .spec(&account.agent)
            .and_then(|s| s.kind(&account.kind))
            .and_then(|k| k.settings_auth.as_deref())
        else {
            return Ok(None);
        };
        let system = match &input.client_env {
            Some(env) => env.0.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH").cloned(),
            None => std::env::var("GEMINI_CLI_SYSTEM_SETTINGS_PATH").ok(),
        }
        .unwrap_or_else(|| "/etc/gemini-cli/settings.json".into());
        let mut settings = std::fs::read_to_string(&system)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| serde_json::json!({}));
        settings["security"] = match settings["security"].take() {
            serde_json::Value::Object(m) => serde_json::Value::Object(m),
            _ => serde_json::json!({}),
        };
        settings["security"]["auth"] = serde_json::json!({"selectedType": auth});
        let dir = self.state_dir.join("accounts").join(&account.agent);
        let path = dir.join(format!("{}-settings.json", account.id));
        let who = format!("account `{}` ({})", account.id, account.label);
        make_private_dir(&dir).map_err(|e| format!("{who}: {}: {e}", dir.display()))?;
        write_private(&path, settings.to_string().as_bytes())
            .map_err(|e| format!("{who}: {}: {e}", path.display()))?;
        Ok(Some(path.to_string_lossy().into_owned()))
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    // Two spawns of one account may write it at once: each through its own file.
    let tmp = path.with_extension(format!("{}.tmp", uuid::Uuid::new_v4().simple()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    std::fs::rename(tmp, path)
}

fn make_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
}

/// The config folder the client's environment names for the agent of `spec`.
fn ambient_home(input: &AgentTurnInput, spec: Option<&AgentSpec>) -> Option<String> {
    let name = kinds::home_var(spec)?;
    let value = match &input.client_env {
        Some(env) => env.0.get(name).cloned(),
        None => std::env::var(name).ok(),
    };
    value.filter(|v| !v.trim().is_empty())
}

impl weft_kernel::ports::Accounts for Accounts {
    fn check(&self, agent: &str, account: &str) -> Result<(), String> {
        self.usable(agent, account).map(|_| ())
    }

    fn resolve(&self, input: &AgentTurnInput) -> Result<SpawnAccount, String> {
        let agent = weft_protocol::split_session_key(&input.session_key)
            .map(|(a, _)| a.to_string())
            .unwrap_or_default();
        let Some(id) = &input.account else {
            self.carry_transcript(input, &agent, &[]);
            return Ok(SpawnAccount::default());
        };
        let account = self.usable(&agent, id)?;
        let secret = self.secret_of(&account)?;
        let spec = self.spec(&agent);
        let (mut env, extra_args) =
            kinds::inject(spec, &account, secret.as_ref(), ambient_home(input, spec));
        if let Some(path) = self.gemini_auth_settings(input, &account)? {
            env.push(("GEMINI_CLI_SYSTEM_SETTINGS_PATH".into(), path));
        }
        self.carry_transcript(input, &agent, &env);
        Ok(SpawnAccount {
            env,
            extra_args,
            isolated: true,
        })
    }

    fn observe(&self, account: &str, event: &DriverEvent) {
        if let Some(windows) = limits::from_event(event, now_ms()) {
            self.record_limits(account, windows);
        }
    }

    fn switch_warning(
        &self,
        agent: &str,
        from: Option<&str>,
        to: Option<&str>,
        client_env: Option<&weft_protocol::ClientEnv>,
    ) -> Option<String> {
        Accounts::switch_warning(self, agent, from, to, client_env)
    }

    fn auto_switch_to(&self, session_key: &str, agent: &str, from: &str) -> Option<String> {
        Accounts::auto_switch_to(self, session_key, agent, from)
    }

    fn describe(&self, account: Option<&str>) -> String {
        Accounts::describe(self, account)
    }

    fn turn_finished(&self, account: &str, snapshot: &UniversalSnapshot) {
        if let Some((day, delta)) = limits::usage_of(snapshot) {
            if let Err(e) = self.table.add_usage(account, &day, &delta) {
                tracing::warn!(account = %account, "cannot record its usage: {e}");
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
