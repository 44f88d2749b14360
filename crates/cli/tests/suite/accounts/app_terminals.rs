//! The app's Log in and Install, through the daemon's own verbs: `loginAccount` runs
//! the agent's own login and `installAgent` runs npm, each straight from the agent's
//! spec, in a terminal of no session; bad input is a clear error naming what was wrong.

use std::time::Duration;

use weft_client::{Client, Event, Home};
use weft_protocol::{verb, Verb, WireError};
use weft_protocol::{AgentInstall, TerminalAttached};

use crate::suite::support::{ok_stdout, script, wait_for, Env};

fn add(env: &Env, args: &[&str]) -> String {
    let out = env
        .cmd(args)
        .env("WEFT_TEST_KEY", "sk-unused")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    ok_stdout(&out)
}

/// A client of `env`'s daemon whose environment sets `var` to the stand-in `bin`.
async fn client_with(
    env: &Env,
    var: &str,
    bin: &std::path::Path,
) -> (Client, tokio::sync::mpsc::Receiver<Event>) {
    let mut hello = weft_client::hello_with_env("test");
    if let Some(vars) = hello.env.as_mut() {
        vars.0.insert(var.into(), bin.display().to_string());
    }
    Client::connect(&Home::at(env.home.path()), hello)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The daemon's refusal of `verb`.
async fn refused<V: Verb>(client: &Client, verb: V) -> WireError {
    client
        .send(verb)
        .await
        .err()
        .unwrap_or_else(|| panic!("it was accepted"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_and_install_run_weft_s_own_commands_in_a_daemon_terminal_and_refuse_bad_input() {
    let env = Env::new();
    let login = add(
        &env,
        &[
            "accounts", "add", "--agent", "claude", "--kind", "login", "--label", "max",
        ],
    );
    let key_account = add(
        &env,
        &[
            "accounts",
            "add",
            "--agent",
            "claude",
            "--kind",
            "api-key",
            "--label",
            "k",
            "--secret-env",
            "WEFT_TEST_KEY",
        ],
    );
    // The agent's login, as a stand-in that says what it was given and exits.
    let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let seen = bin.path().join("seen.txt");
    let script = script(
        bin.path(),
        "claude",
        &format!(
            "#!/bin/sh\nprintf 'args: %s\\nhome: %s\\n' \"$*\" \"$CLAUDE_CONFIG_DIR\" > '{}'\necho logged-in-stand-in\n",
            seen.display()
        ),
    );
    let (client, _events) = client_with(&env, "WEFT_CLAUDE_BIN", &script).await;

    let attached: TerminalAttached = client
        .send(verb::LoginAccount {
            account: login.clone(),
            cols: Some(100),
            rows: Some(20),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(attached.session_key, format!("login:{login}"));
    let text = wait_for("the login stand-in to run", 30, || {
        std::fs::read_to_string(&seen)
            .ok()
            .filter(|t| t.contains("home:"))
    });
    let home = env.home.path().join("homes/claude").join(&login);
    assert!(text.contains("args: auth login"), "{text}");
    assert!(
        text.contains(&format!("home: {}", home.display())),
        "{text}"
    );
    // Ended, it stays to be attached (its last screen) until closed.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again: TerminalAttached = client
        .send(verb::AttachTerminal {
            session_key: attached.session_key.clone(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.session_key, attached.session_key);
    client
        .send(verb::CloseTerminal {
            session_key: attached.session_key.clone(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let gone = refused(
        &client,
        verb::AttachTerminal {
            session_key: attached.session_key.clone(),
        },
    )
    .await;
    assert!(gone.message.contains("no terminal is open"), "{gone:?}");

    let unknown = refused(
        &client,
        verb::LoginAccount {
            account: "acct-nope".into(),
            cols: None,
            rows: None,
        },
    )
    .await;
    assert!(
        unknown.message.contains("unknown account `acct-nope`"),
        "{unknown:?}"
    );
    let keyed = refused(
        &client,
        verb::LoginAccount {
            account: key_account.clone(),
            cols: None,
            rows: None,
        },
    )
    .await;
    assert!(
        keyed.message.contains("only login accounts log in"),
        "{keyed:?}"
    );
    let vim = refused(
        &client,
        verb::InstallAgent {
            name: "vim".into(),
            version: None,
            cols: None,
            rows: None,
        },
    )
    .await;
    assert!(
        vim.message.contains("not an agent Weft installs"),
        "{vim:?}"
    );
    let option = refused(
        &client,
        verb::InstallAgent {
            name: "codex".into(),
            version: Some("--registry=http://x".into()),
            cols: None,
            rows: None,
        },
    )
    .await;
    assert!(option.message.contains("is not a version"), "{option:?}");

    let installs: Vec<AgentInstall> = client
        .send(verb::ListAgentInstalls {})
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = installs.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["claude", "codex", "gemini", "claude-agent-acp"]);
    assert!(installs.iter().all(|i| !i.tested_version.is_empty()
        && i.install_dir.as_deref()
            == Some(
                env.home
                    .path()
                    .join("agents")
                    .display()
                    .to_string()
                    .as_str()
            )));
}

/// `installAgent` runs npm itself (here a stand-in at `WEFT_NPM_BIN` that lays out what
/// npm would) in a daemon terminal: the pane says what is installed where, shows npm's
/// output, then the installed binary; the Agents view then finds it in Weft's folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_runs_npm_from_the_agents_spec_in_a_daemon_terminal_and_shows_what_it_left() {
    let env = Env::new();
    let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let npm = script(
        bin.path(),
        "npm",
        r#"#!/bin/sh
prefix=""; last=""
for a in "$@"; do [ "$last" = --prefix ] && prefix="$a"; last="$a"; done
echo "npm stand-in: $last"
mkdir -p "$prefix/node_modules/.bin"
printf '#!/bin/sh\necho 0.171.0\n' > "$prefix/node_modules/.bin/codex"
chmod +x "$prefix/node_modules/.bin/codex"
"#,
    );
    // Any command starts the daemon.
    let listed = env.weft(&["accounts", "list"]);
    assert!(listed.status.success(), "{listed:?}");
    let (client, mut events) = client_with(&env, "WEFT_NPM_BIN", &npm).await;
    let attached: TerminalAttached = client
        .send(verb::InstallAgent {
            name: "codex".into(),
            version: None,
            cols: Some(200),
            rows: Some(20),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(attached.session_key, "install:codex");
    let exit = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(event) = events.recv().await {
            if let weft_client::Event::Terminal(t) = event {
                if t.kind == weft_protocol::frame_kind::EXIT {
                    return serde_json::from_slice::<serde_json::Value>(&t.payload).ok();
                }
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .unwrap_or_else(|| panic!("no exit frame"));
    assert_eq!(exit["code"], 0, "{exit}");
    let screen = exit["screen"].as_str().unwrap_or_default();
    let dir = env.home.path().join("agents");
    let installed = dir.join("node_modules/.bin/codex");
    let at = |needle: &str| {
        screen
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} not in the pane:\n{screen}"))
    };
    assert!(
        at(&format!(
            "weft: installing @openai/codex@0.171.0 into {}",
            dir.display()
        )) < at("npm stand-in: @openai/codex@0.171.0")
    );
    assert!(at("npm stand-in:") < at(&installed.display().to_string()));
    let installs: Vec<AgentInstall> = client
        .send(verb::ListAgentInstalls {})
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let codex = installs.iter().find(|i| i.name == "codex");
    assert_eq!(
        codex.and_then(|c| c.path.clone()),
        Some(installed.display().to_string()),
        "{installs:?}"
    );
    assert!(codex.is_some_and(|c| c.managed));
}
