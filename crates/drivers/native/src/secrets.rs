//! What the processes the native agent starts inherit: the turn's environment without
//! its credentials.
//!
//! The agent runs in Weft's own process, so the turn's environment (the client's,
//! plus the account's variables) holds the model's key it was configured with. The
//! commands it runs (bash, the check, hooks, git, MCP servers started as programs)
//! need none of that, and any of them can print it back to the model (`printenv` is
//! one line), which would put the key in the conversation, the store and the model's
//! own logs. So the rule, applied to every environment Weft hands such a process:
//!
//! 1. the value that is this turn's key goes, under whatever name holds it (an
//!    account's `WEFT_NATIVE_API_KEY`, a `providers.json` provider's `apiKeyEnv`, an
//!    ambient `ANTHROPIC_API_KEY`), and so does any variable whose value contains it;
//! 2. a variable whose *name* says it is a credential goes: split on `_`, a word
//!    `KEY`/`KEYS`, `AUTH`, `COOKIE`, or one ending in `TOKEN(S)`, `SECRET(S)`,
//!    `PASSWORD`, `PASSWD`, `PASSPHRASE`, `CREDENTIAL(S)` or `APIKEY`
//!    (`OPENAI_API_KEY`, `GH_TOKEN`, `AWS_SECRET_ACCESS_KEY`, `AWS_ACCESS_KEY_ID`,
//!    `ANTHROPIC_AUTH_TOKEN`, `NPM_TOKEN`, `PGPASSWORD`; not `KEYBOARD`);
//! 3. Weft's own secret carriers go: `WEFT_ACCOUNT_KEY`, and `WEFT_MCP_*` (the MCP
//!    values Weft hands another agent's spawn).
//!
//! A name rule is a heuristic: a secret under an innocent name (`DATABASE_URL` with a
//! password in it) stays, and a harmless `GPG_KEY_ID` goes. A command that needs a
//! credential gets it from the user's own files (`~/.netrc`, a credential helper)
//! or from an MCP server's configured `env`, which is the user's explicit grant and is
//! added after this rule. A name ending in `_SOCK` (`SSH_AUTH_SOCK`) is a socket's path,
//! not a secret: it stays.

/// Words that make a variable's name a credential's.
const WORDS: &[&str] = &["KEY", "KEYS", "AUTH", "COOKIE"];

/// Endings that make a word of a variable's name a credential's (`PGPASSWORD`).
const ENDINGS: &[&str] = &[
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "APIKEY",
];

/// Keys shorter than this are not matched by value (a one-letter "key" in a test
/// would take every variable holding that letter with it).
const MIN_VALUE_MATCH: usize = 8;

/// True when `name` names a credential by rules 2 and 3 above.
pub fn is_credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if upper.ends_with("_SOCK") {
        // A socket's path (SSH_AUTH_SOCK), not a secret.
        return false;
    }
    upper == "WEFT_ACCOUNT_KEY"
        || upper.starts_with("WEFT_MCP_")
        || upper
            .split('_')
            .any(|w| WORDS.contains(&w) || ENDINGS.iter().any(|e| w.ends_with(e)))
}

/// `env` without its credentials: every variable [`is_credential_name`] names, and
/// every one whose value holds one of `keys` (the turn's model key).
pub fn scrub(env: Vec<(String, String)>, keys: &[&str]) -> Vec<(String, String)> {
    let keys: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| k.len() >= MIN_VALUE_MATCH)
        .collect();
    env.into_iter()
        .filter(|(k, v)| !is_credential_name(k) && !keys.iter().any(|key| v.contains(key)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_by_name_and_by_value_and_the_rest_stays() {
        let env: Vec<(String, String)> = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/me"),
            ("SSH_AUTH_SOCK", "/run/user/1/ssh"),
            ("WEFT_NATIVE_API_KEY", "sk-native-1234567"),
            ("MY_PROVIDER", "sk-native-1234567"),
            ("HEADER", "Bearer sk-native-1234567"),
            ("OPENAI_API_KEY", "sk-other"),
            ("GH_TOKEN", "ghp"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("AWS_ACCESS_KEY_ID", "id"),
            ("ANTHROPIC_AUTH_TOKEN", "t"),
            ("WEFT_ACCOUNT_KEY", "k"),
            ("WEFT_MCP_GITHUB_ENV_0", "v"),
            ("db_password", "p"),
            ("PGPASSWORD", "p"),
            ("WEFT_NATIVE_SANDBOX", "on"),
            ("KEYBOARD", "us"),
            ("MONKEY_BUSINESS", "x"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let kept: Vec<String> = scrub(env, &["sk-native-1234567", "x"])
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            kept,
            [
                "PATH",
                "HOME",
                "SSH_AUTH_SOCK",
                "WEFT_NATIVE_SANDBOX",
                "KEYBOARD",
                "MONKEY_BUSINESS"
            ]
        );
    }
}
