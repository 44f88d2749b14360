//! No secret of an imported server is copied into Weft's files in plain text. A value
//! of its `env` or `headers` becomes a `${secret:NAME}` reference (the value kept in
//! the OS secret store, set with `weft mcp secret set NAME --stdin`) when:
//!
//! - it refers to a variable of the agent's environment (`${VAR}`, `$VAR`), which
//!   Weft does not expand: the reference takes its place, the rest of the value stays
//!   (`Bearer ${VAR}` → `Bearer ${secret:server-VAR}`);
//! - its name says it is one (`…TOKEN`, `…SECRET`, `…KEY`, `PASSWORD`, `Authorization`,
//!   `Cookie`, …), or its shape does (a vendor's key prefix, a JWT, a long run of
//!   letters and digits): the whole value is replaced, keeping an auth scheme
//!   (`Bearer …` → `Bearer ${secret:server-Authorization}`).
//!
//! Guessing wrong one way costs the user one `weft mcp secret set`; the other way
//! would leave a key in a file: the rules lean towards a reference.

use std::collections::BTreeMap;

use crate::mcp::McpServer;

/// The secret's name for `key` of `server`: `server-KEY`, with anything but letters,
/// digits, `-`, `_` and `.` made `_`.
pub fn secret_name(server: &str, key: &str) -> String {
    format!("{server}-{key}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Replaces every value of `server`'s `env` and `headers` that is or names a secret
/// with a reference (see the module's rules); gives the secrets' names, each once.
pub fn keep_out(server_name: &str, server: &mut McpServer) -> Vec<String> {
    keep_out_with_values(server_name, server)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// [`keep_out`], with the value each secret had where the agent's file held it (not a
/// `${VAR}` of the agent's environment, which has none here): what to move into the
/// secret store. The value is the secret alone, an auth scheme (`Bearer `) left out.
pub fn keep_out_with_values(
    server_name: &str,
    server: &mut McpServer,
) -> Vec<(String, Option<String>)> {
    let mut names = Vec::new();
    for map in [&mut server.env, &mut server.headers] {
        keep_out_of(server_name, map, &mut names);
    }
    names
}

fn keep_out_of(
    server: &str,
    map: &mut BTreeMap<String, String>,
    names: &mut Vec<(String, Option<String>)>,
) {
    for (key, value) in map.iter_mut() {
        if value.is_empty() || value.contains("${secret:") {
            continue;
        }
        let mut add = |name: String, literal: Option<String>| {
            if !names.iter().any(|(n, _)| *n == name) {
                names.push((name.clone(), literal));
            }
            format!("${{secret:{name}}}")
        };
        if let Some(replaced) =
            replace_env_refs(value, &mut |var| add(secret_name(server, var), None))
        {
            *value = replaced;
            continue;
        }
        if secret_key(key) || secret_value(value) {
            let scheme = ["Bearer ", "Basic ", "Token ", "token ", "bearer "]
                .into_iter()
                .find(|s| value.starts_with(s))
                .unwrap_or("");
            let literal = value[scheme.len()..].trim().to_string();
            *value = format!(
                "{scheme}{}",
                add(
                    secret_name(server, key),
                    Some(literal).filter(|v| !v.is_empty())
                )
            );
        }
    }
}

/// `value` with each `${VAR}` / `$VAR` replaced by `with(VAR)`; `None` when it names
/// no variable.
fn replace_env_refs(value: &str, with: &mut dyn FnMut(&str) -> String) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = String::new();
    let mut found = false;
    let mut i = 0;
    let mut last = 0;
    let var_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let (start, end, next) = if bytes.get(i + 1) == Some(&b'{') {
            match value[i + 2..].find('}') {
                Some(len) => (i + 2, i + 2 + len, i + 3 + len),
                None => break,
            }
        } else {
            let mut j = i + 1;
            while j < bytes.len() && var_char(bytes[j]) {
                j += 1;
            }
            (i + 1, j, j)
        };
        let var = &value[start..end];
        let is_var =
            !var.is_empty() && var.bytes().all(var_char) && !var.as_bytes()[0].is_ascii_digit();
        if !is_var {
            i += 1;
            continue;
        }
        out.push_str(&value[last..i]);
        out.push_str(&with(var));
        found = true;
        i = next;
        last = next;
    }
    found.then(|| {
        out.push_str(&value[last..]);
        out
    })
}

/// A variable or header whose name says it holds a secret.
fn secret_key(key: &str) -> bool {
    let k = key.to_ascii_uppercase().replace('-', "_");
    const WORDS: [&str; 12] = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTHORIZATION",
        "COOKIE",
        "API_KEY",
        "APIKEY",
        "PRIVATE",
        "_PAT",
        "AUTH",
    ];
    WORDS.iter().any(|w| k.contains(w)) || k.ends_with("KEY") || k == "PAT"
}

/// A value shaped like a key: a vendor's prefix, a JWT, or a long unbroken run of
/// letters and digits that is not a path, a URL or a number.
fn secret_value(value: &str) -> bool {
    const PREFIXES: [&str; 14] = [
        "sk-",
        "sk_",
        "ghp_",
        "gho_",
        "ghs_",
        "ghu_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "AKIA",
        "AIza",
        "eyJ",
        "rk_",
    ];
    let v = value.trim();
    if PREFIXES.iter().any(|p| v.starts_with(p)) && v.len() >= 12 {
        return true;
    }
    let long = v.len() >= 24;
    let unbroken = v
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '=' | '.'));
    let letters = v.chars().any(|c| c.is_ascii_alphabetic());
    let digits = v.chars().any(|c| c.is_ascii_digit());
    long && unbroken && letters && digits && !v.contains("://")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn server(env: &[(&str, &str)], headers: &[(&str, &str)]) -> McpServer {
        let map = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        McpServer {
            command: Some("x".into()),
            env: map(env),
            headers: map(headers),
            ..McpServer::default()
        }
    }

    #[test]
    fn secrets_become_references_and_the_rest_stays() {
        let mut s = server(
            &[
                ("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_abc123def456"),
                ("LOG_LEVEL", "debug"),
                ("ROOT", "/srv/data"),
                ("PROXY", "${HTTPS_PROXY}"),
                ("OPAQUE", "Zx81kQ02mPa9LrT5vWc3Yb7N"),
                ("BASE", "https://api.example.com/v1/abcdefghijklmnop1234"),
            ],
            &[
                ("Authorization", "Bearer live-1234"),
                ("X-Api-Key", "k"),
                ("X-Team", "a"),
                ("X-Both", "id=$TEAM_ID and ${TEAM_ID}"),
            ],
        );
        let names = keep_out("gh", &mut s);
        assert_eq!(
            s.env["GITHUB_PERSONAL_ACCESS_TOKEN"],
            "${secret:gh-GITHUB_PERSONAL_ACCESS_TOKEN}"
        );
        assert_eq!(s.env["LOG_LEVEL"], "debug");
        assert_eq!(s.env["ROOT"], "/srv/data");
        assert_eq!(s.env["PROXY"], "${secret:gh-HTTPS_PROXY}");
        assert_eq!(s.env["OPAQUE"], "${secret:gh-OPAQUE}");
        assert_eq!(
            s.env["BASE"],
            "https://api.example.com/v1/abcdefghijklmnop1234"
        );
        assert_eq!(
            s.headers["Authorization"],
            "Bearer ${secret:gh-Authorization}"
        );
        assert_eq!(s.headers["X-Api-Key"], "${secret:gh-X-Api-Key}");
        assert_eq!(s.headers["X-Team"], "a");
        assert_eq!(
            s.headers["X-Both"],
            "id=${secret:gh-TEAM_ID} and ${secret:gh-TEAM_ID}"
        );
        assert_eq!(
            names,
            [
                "gh-GITHUB_PERSONAL_ACCESS_TOKEN",
                "gh-OPAQUE",
                "gh-HTTPS_PROXY",
                "gh-Authorization",
                "gh-X-Api-Key",
                "gh-TEAM_ID"
            ]
        );
        // What Weft reads back names exactly these secrets.
        let mut read = s.secret_names();
        read.sort();
        let mut want = names.clone();
        want.sort();
        assert_eq!(read, want);
        assert!(!format!("{s:?}").contains("ghp_"));
    }

    #[test]
    fn a_dollar_that_is_no_variable_is_left() {
        let mut s = server(&[("PRICE", "$5 or ${"), ("ODD", "a $ b")], &[]);
        assert!(keep_out("p", &mut s).is_empty());
        assert_eq!(s.env["PRICE"], "$5 or ${");
        assert_eq!(secret_name("my.srv", "X Y/Z"), "my.srv-X_Y_Z");
    }
}
