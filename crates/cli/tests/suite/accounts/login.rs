//! `weft accounts login` and `weft agents install`.

use serde_json::Value;

use crate::suite::support::{ok_stdout, script, Env};

#[test]
fn accounts_login_runs_the_agents_own_login_in_the_accounts_home_with_a_cleared_environment() {
    let env = Env::new();
    let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let seen = bin.path().join("seen.txt");
    let script = script(
        bin.path(),
        "claude",
        &format!(
            "#!/bin/sh\nprintf 'args: %s\\n' \"$*\" > '{}'\nenv >> '{}'\n",
            seen.display(),
            seen.display()
        ),
    );
    let id = ok_stdout(
        &env.cmd(&[
            "accounts", "add", "--agent", "claude", "--kind", "login", "--label", "max",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}")),
    );
    ok_stdout(
        &env.cmd(&["accounts", "login", &id])
            .env("WEFT_CLAUDE_BIN", &script)
            .env("ANTHROPIC_API_KEY", "sk-ambient-must-not-reach-the-login")
            .output()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let seen = std::fs::read_to_string(&seen).unwrap_or_default();
    assert!(seen.starts_with("args: auth login\n"), "{seen}");
    let home = env.home.path().join("homes/claude").join(&id);
    assert!(
        seen.lines()
            .any(|l| l == format!("CLAUDE_CONFIG_DIR={}", home.display())),
        "{seen}"
    );
    assert!(!seen.contains("sk-ambient"), "{seen}");
    // Only login accounts log in.
    let out = env
        .cmd(&[
            "accounts",
            "add",
            "--agent",
            "gemini",
            "--kind",
            "api-key",
            "--label",
            "k",
            "--secret-env",
            "WEFT_TEST_KEY",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let key_id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = env
        .cmd(&["accounts", "login", &key_id])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only login accounts"));
}

/// `weft agents install` runs the system's npm into `$WEFT_HOME/agents` (here an npm
/// stand-in that records its arguments and lays out what npm would), and the drivers
/// then find the agent there before `PATH`.
#[test]
fn agents_install_puts_the_tested_version_in_weft_s_own_folder_where_the_drivers_find_it() {
    let env = Env::new();
    let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let args = bin.path().join("npm-args.txt");
    script(
        bin.path(),
        "npm",
        &format!(
            r#"#!/bin/sh
printf '%s\n' "$@" > '{args}'
prefix=""
while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix="$2"; shift; done
mkdir -p "$prefix/node_modules/.bin"
printf '#!/bin/sh\necho "9.9.9-weft-test (Claude Code)"\n' > "$prefix/node_modules/.bin/claude"
chmod +x "$prefix/node_modules/.bin/claude"
"#,
            args = args.display()
        ),
    );
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let out = env
        .cmd(&["agents", "install", "claude"])
        .env("PATH", &path)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let installed = env.home.path().join("agents/node_modules/.bin/claude");
    assert_eq!(ok_stdout(&out), installed.display().to_string());
    let recorded = std::fs::read_to_string(&args).unwrap_or_default();
    let prefix = env.home.path().join("agents").display().to_string();
    assert!(
        recorded
            .lines()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| w == ["--prefix", prefix.as_str()]),
        "{recorded}"
    );
    assert!(
        recorded
            .lines()
            .any(|l| l == "@anthropic-ai/claude-code@2.1.197"),
        "{recorded}"
    );
    let out = env
        .cmd(&["agents", "--json"])
        .env("PATH", &path)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let agents: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let claude = agents
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["id"] == "claude")
        .cloned()
        .unwrap_or_default();
    assert_eq!(claude["installed"], true, "{agents}");
    assert!(
        claude["version"]
            .as_str()
            .is_some_and(|v| v.contains("9.9.9-weft-test")),
        "{claude}"
    );
    // No npm: a clear error, nothing installed.
    let out = env
        .cmd(&["agents", "install", "codex"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("npm is not installed"));
    let out = env
        .cmd(&["agents", "install", "vim"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2));
}
