//! Which kinds each agent takes, and what each kind puts into a spawn: each agent's
//! spec says it (`weft_agent_spec::spec::AccountKind`, declared in its driver's crate
//! and handed to [`crate::Accounts`] by the daemon); this module reads it.
//!
//! Every spawn on a chosen account is isolated (a cleared environment plus the
//! kernel's allow-list, see `weft_kernel::kept_on_account`) and then gets exactly the
//! variables below. Checked against the installed CLIs:
//!
//! | agent  | kind          | spawn gets |
//! |--------|---------------|------------|
//! | claude | `login`       | `CLAUDE_CONFIG_DIR=<WEFT_HOME>/homes/claude/<id>` |
//! | claude | `setup-token` | `CLAUDE_CODE_OAUTH_TOKEN` (+ `ANTHROPIC_BASE_URL`) |
//! | claude | `api-key`     | `ANTHROPIC_API_KEY` (+ `ANTHROPIC_BASE_URL`) |
//! | claude | `gateway`     | `ANTHROPIC_BASE_URL`, `ANTHROPIC_AUTH_TOKEN` (Bearer), `ANTHROPIC_MODEL` |
//! | claude | `bedrock`     | `CLAUDE_CODE_USE_BEDROCK=1` (+ `AWS_BEARER_TOKEN_BEDROCK`) |
//! | claude | `vertex`      | `CLAUDE_CODE_USE_VERTEX=1` |
//! | codex  | `login`       | `CODEX_HOME=<WEFT_HOME>/homes/codex/<id>` |
//! | codex  | `api-key`, `endpoint` | a `weft` model provider (`-c model_providers.weft.*`, through the driver's `WEFT_CODEX_BASE_URL` / `WEFT_CODEX_API_KEY_ENV`) whose key is `WEFT_ACCOUNT_KEY`, kept from the model's shell by `shell_environment_policy` |
//! | gemini | `login`       | `GEMINI_CLI_HOME=<WEFT_HOME>/homes/gemini/<id>` |
//! | gemini | `api-key`, `endpoint` | `GEMINI_API_KEY` (+ `GOOGLE_GEMINI_BASE_URL`) |
//! | gemini | `vertex`      | `GOOGLE_GENAI_USE_VERTEXAI=true` (+ `GOOGLE_API_KEY`) |
//! | native | `endpoint`    | `WEFT_NATIVE_PROTOCOL`, `WEFT_NATIVE_BASE_URL`, `WEFT_NATIVE_MODEL` (the first model), `WEFT_NATIVE_API_KEY`, `WEFT_NATIVE_ACCOUNT` |
//! | any ACP agent | `env`  | its public `env`, and the secret in the variable `secret_var` names |
//!
//! Claude always gets `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1`, so the Bash tool, hooks and
//! MCP servers it starts do not inherit the credential. Key kinds keep the config
//! folder the client uses (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME` when it
//! sets one, else the CLI's default under `HOME`), so a conversation started on one key
//! resumes on another; login kinds each have their own folder, made by Weft and never
//! shared, copied or symlinked. The account's public `env` comes last and wins.

use std::path::{Path, PathBuf};

use weft_agent_spec::spec::{AccountForm, AgentSpec, EnvValue};
use weft_protocol::AccountInfo;

pub use weft_agent_spec::spec::Need;

use crate::secret::Secret;

/// What a kind needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindRules<'a> {
    /// Has its own home folder the CLI logs in to.
    pub login: bool,
    /// Needs a secret.
    pub secret: Need,
    /// Takes a base URL.
    pub base_url: Need,
    /// The wire protocols it speaks, one of which it needs; empty: it takes none.
    pub protocols: &'a [String],
}

/// The kind every ACP agent (Hermes, Kimi, Qwen, one from `acp.json`, …) takes: named
/// variables, public ones in `env` and at most one secret in `secret_var`.
const ENV: KindRules<'static> = KindRules {
    login: false,
    secret: Need::Optional,
    base_url: Need::No,
    protocols: &[],
};

/// A name an ACP agent goes by (its id in Weft).
fn agent_id(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The rules of `agent`'s `kind`, or why there are none. An agent with no spec is an
/// ACP agent of the user's (`agents.json`, read by the registry whenever it is asked).
pub fn rules<'a>(specs: &'a [AgentSpec], agent: &str, kind: &str) -> Result<KindRules<'a>, String> {
    let spec = specs.iter().find(|s| s.id == agent);
    let form = match spec {
        Some(s) => &s.accounts,
        None if agent_id(agent) => &AccountForm::Env,
        None => &AccountForm::None,
    };
    let kinds = match form {
        AccountForm::Env => {
            return match kind {
                "env" => Ok(ENV),
                _ => Err(format!(
                    "`{kind}` is not a kind of `{agent}` account; an ACP agent's account is `env` \
                     (named variables: --env NAME=VALUE, and --secret-var NAME for its secret)"
                )),
            }
        }
        AccountForm::None => {
            let known: Vec<&str> = specs
                .iter()
                .filter(|s| matches!(s.accounts, AccountForm::Kinds(_)))
                .map(|s| s.id.as_str())
                .collect();
            return Err(format!(
                "accounts are for the agents {}; `{agent}` is not one",
                known.join(", ")
            ));
        }
        AccountForm::Kinds(kinds) => kinds,
    };
    let Some(k) = kinds.iter().find(|k| k.id == kind) else {
        let names: Vec<&str> = kinds.iter().map(|k| k.id.as_str()).collect();
        return Err(format!(
            "`{kind}` is not a kind of {agent} account; it takes {}",
            names.join(", ")
        ));
    };
    Ok(KindRules {
        login: k.login,
        secret: k.secret,
        base_url: k.base_url,
        protocols: &k.protocols,
    })
}

/// The variable naming `spec`'s config folder (a login account's home), when it has one.
pub fn home_var(spec: Option<&AgentSpec>) -> Option<&str> {
    spec.and_then(|s| s.config_home.as_ref())
        .map(|h| h.var.as_str())
}

/// Where a login account's home lives.
pub fn home_for(state_dir: &Path, agent: &str, id: &str) -> PathBuf {
    state_dir.join("homes").join(agent).join(id)
}

/// A base URL as accepted: http(s), with a host, no credentials in it.
pub fn check_base_url(url: &str) -> Result<String, String> {
    let trimmed = url.trim();
    let parsed = url::Url::parse(trimmed).map_err(|e| format!("`{trimmed}` is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("`{trimmed}` is not an http(s) URL"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{trimmed}` has no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!(
            "the URL must not carry credentials; give the secret with --secret-stdin, \
             --secret-env or --secret-command (`{}` was refused)",
            parsed.host_str().unwrap_or_default()
        ));
    }
    Ok(trimmed.trim_end_matches('/').to_string())
}

/// Everything one spawn on `account` gets: variables (the secret among them) and
/// arguments, as `spec` (its agent's) says. `ambient_home` is the config folder the
/// client's environment names for this agent, kept for key kinds.
pub fn inject(
    spec: Option<&AgentSpec>,
    account: &AccountInfo,
    secret: Option<&Secret>,
    ambient_home: Option<String>,
) -> (Vec<(String, String)>, Vec<String>) {
    let mut env: Vec<(String, String)> = Vec::new();
    let mut args = Vec::new();
    let key = secret.map(Secret::expose);
    match spec.and_then(|s| s.kind(&account.kind)) {
        Some(kind) => {
            for (var, from) in &kind.env {
                let models = (!account.models.is_empty()).then(|| account.models.join(","));
                let value = match from {
                    EnvValue::Home => account.home_dir.clone(),
                    EnvValue::AmbientHome => ambient_home.clone(),
                    EnvValue::BaseUrl => account.base_url.clone(),
                    EnvValue::BaseUrlOr(default) => {
                        Some(account.base_url.clone().unwrap_or_else(|| default.clone()))
                    }
                    EnvValue::Secret => key.map(str::to_string),
                    EnvValue::Literal(v) => Some(v.clone()),
                    EnvValue::FirstModel => account.models.first().cloned(),
                    EnvValue::Models => models,
                    EnvValue::AccountId => Some(account.id.clone()),
                    EnvValue::Protocol => account.protocol.clone(),
                };
                if let Some(v) = value {
                    env.push((var.clone(), v));
                }
            }
            args.extend(kind.args.iter().cloned());
        }
        None if account.kind == "env" => {
            if let (Some(var), Some(k)) = (&account.secret_var, key) {
                env.push((var.clone(), k.to_string()));
            }
        }
        None => {}
    }
    if let Some(spec) = spec {
        env.extend(spec.account_env.iter().cloned());
    }
    for (k, v) in &account.env {
        env.push((k.clone(), v.clone()));
    }
    (env, args)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn specs() -> Vec<AgentSpec> {
        weft_drivers::specs_in(Path::new("/nonexistent"))
    }

    fn spec(agent: &str) -> Option<AgentSpec> {
        specs().into_iter().find(|s| s.id == agent)
    }

    fn inject(
        account: &AccountInfo,
        secret: Option<&Secret>,
        ambient_home: Option<String>,
    ) -> (Vec<(String, String)>, Vec<String>) {
        super::inject(spec(&account.agent).as_ref(), account, secret, ambient_home)
    }

    fn rules(agent: &str, kind: &str) -> Result<KindRules<'static>, String> {
        let specs: &'static [AgentSpec] = Box::leak(specs().into_boxed_slice());
        super::rules(specs, agent, kind)
    }

    const CODEX_KEY_VAR: &str = "WEFT_ACCOUNT_KEY";

    fn account(agent: &str, kind: &str, base: Option<&str>) -> AccountInfo {
        AccountInfo {
            id: "acct-1".into(),
            agent: agent.into(),
            kind: kind.into(),
            base_url: base.map(str::to_string),
            home_dir: (kind == "login").then(|| "/w/homes/x".to_string()),
            ..Default::default()
        }
    }

    fn vars(env: &[(String, String)]) -> std::collections::BTreeMap<&str, &str> {
        env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    #[test]
    fn each_kind_gets_its_variables() {
        let k = Secret::new("sek");
        let (env, _) = inject(&account("claude", "api-key", None), Some(&k), None);
        let v = vars(&env);
        assert_eq!(v["ANTHROPIC_API_KEY"], "sek");
        assert_eq!(v["CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"], "1");
        assert!(!v.contains_key("ANTHROPIC_BASE_URL"));

        let mut gw = account("claude", "gateway", Some("http://gw"));
        gw.models = vec!["big-model".into()];
        let (env, _) = inject(&gw, Some(&k), Some("/u/.claude".into()));
        let v = vars(&env);
        assert_eq!(v["ANTHROPIC_AUTH_TOKEN"], "sek");
        assert_eq!(v["ANTHROPIC_BASE_URL"], "http://gw");
        assert_eq!(v["ANTHROPIC_MODEL"], "big-model");
        assert_eq!(v["CLAUDE_CONFIG_DIR"], "/u/.claude");
        assert!(!v.contains_key("ANTHROPIC_API_KEY"));

        let (env, _) = inject(&account("claude", "login", None), None, Some("/u".into()));
        assert_eq!(vars(&env)["CLAUDE_CONFIG_DIR"], "/w/homes/x");

        let (env, args) = inject(
            &account("codex", "endpoint", Some("http://e/v1")),
            Some(&k),
            None,
        );
        let v = vars(&env);
        assert_eq!(v["WEFT_CODEX_BASE_URL"], "http://e/v1");
        assert_eq!(v["WEFT_CODEX_API_KEY_ENV"], CODEX_KEY_VAR);
        assert_eq!(v[CODEX_KEY_VAR], "sek");
        assert!(args.iter().any(|a| a.contains("shell_environment_policy")));
        assert!(!args.iter().any(|a| a.contains("sek")), "no secret in argv");

        let (env, _) = inject(
            &account("gemini", "api-key", Some("http://g")),
            Some(&k),
            None,
        );
        let v = vars(&env);
        assert_eq!(v["GEMINI_API_KEY"], "sek");
        assert_eq!(v["GOOGLE_GEMINI_BASE_URL"], "http://g");

        let mut native = account("native", "endpoint", Some("http://n/v1"));
        native.protocol = Some("openai-chat".into());
        native.models = vec!["m1".into(), "m2".into()];
        let (env, _) = inject(&native, Some(&k), None);
        let v = vars(&env);
        assert_eq!(v["WEFT_NATIVE_PROTOCOL"], "openai-chat");
        assert_eq!(v["WEFT_NATIVE_BASE_URL"], "http://n/v1");
        assert_eq!(v["WEFT_NATIVE_API_KEY"], "sek");
        assert_eq!(v["WEFT_NATIVE_MODEL"], "m1");
        assert_eq!(v["WEFT_NATIVE_ACCOUNT"], "acct-1");

        let mut acp = account("kimi", "env", None);
        acp.secret_var = Some("KIMI_API_KEY".into());
        acp.env.insert("KIMI_BASE_URL".into(), "http://k".into());
        let (env, _) = inject(&acp, Some(&k), None);
        let v = vars(&env);
        assert_eq!(v["KIMI_API_KEY"], "sek");
        assert_eq!(v["KIMI_BASE_URL"], "http://k");
    }

    #[test]
    fn kinds_and_urls_are_checked() {
        assert!(rules("claude", "api-key").is_ok());
        assert!(rules("codex", "gateway")
            .unwrap_err()
            .contains("login, api-key, endpoint"));
        assert!(rules("vim", "login").unwrap_err().contains("`vim`"));
        assert_eq!(rules("kimi", "env").unwrap().secret, Need::Optional);
        assert!(rules("kimi", "api-key").unwrap_err().contains("`env`"));
        assert_eq!(
            rules("native", "endpoint").unwrap().base_url,
            Need::Required
        );
        assert!(rules("echo", "env").is_err());
        assert_eq!(rules("codex", "endpoint").unwrap().base_url, Need::Required);
        assert_eq!(
            check_base_url("http://127.0.0.1:9/v1/").unwrap(),
            "http://127.0.0.1:9/v1"
        );
        assert!(check_base_url("not a url").is_err());
        assert!(check_base_url("ftp://x").is_err());
        assert!(check_base_url("http://u:p@h")
            .unwrap_err()
            .contains("credentials"));
    }
}
