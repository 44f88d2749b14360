//! A workspace the user has not trusted grants nothing through its `.weft/`: its hooks,
//! check, `permission = "auto"`, packs, skills and allow rules are ignored (the global
//! ones in Weft's home still apply), while its deny rules still hold. Each test runs
//! the same turn trusted too, so it shows what the file would have done.

use serde_json::json;
use weft_protocol::{permission, InteractionResponse};
use weft_testkit::sink::{self, TestSink};
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::{anthropic, driver, run_turn, write, Dirs};

async fn server(turn: Turn, permission: &str) -> (AnthropicServer, Vec<(String, String)>) {
    let script = Script::new()
        .turn(turn)
        .default_reply(Turn::text_reply("done"));
    let (s, mut env) = anthropic(script, permission).await;
    env.retain(|(k, v)| k != "WEFT_NATIVE_PERMISSION" || !v.is_empty());
    (s, env)
}

/// A sink that denies every question it is asked (and records it).
fn denying() -> std::sync::Arc<TestSink> {
    let sink = TestSink::new();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::DENY)));
    sink
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspace_runs_no_hook() {
    for trusted in [false, true] {
        let (_s, env) = server(
            Turn::new().tool_use("l", "ls", json!({"path": "."})),
            "auto",
        )
        .await;
        let dirs = Dirs::with_file(
            ".weft/hooks.json",
            r#"{"PreToolUse": [{"command": "touch pre-hook-ran"}],
                "PostToolUse": [{"command": "touch post-hook-ran"}]}"#,
        );
        let input = match trusted {
            true => dirs.trusted_input(&env, "look"),
            false => dirs.input(&env, "look", None),
        };
        let (r, snap, _) = run_turn(&driver(), input).await;
        assert!(r.ok, "{r:?}");
        for marker in ["pre-hook-ran", "post-hook-ran"] {
            assert_eq!(
                dirs.work().join(marker).exists(),
                trusted,
                "trusted: {trusted}, {marker}"
            );
        }
        let said = format!("{:?}", snap.notices);
        assert_eq!(
            said.contains("not trusted") && said.contains("hooks.json"),
            !trusted,
            "{said}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspace_runs_no_check() {
    for trusted in [false, true] {
        let (_s, env) = server(
            Turn::new().tool_use("w", "write", json!({"path": "a.txt", "content": "x"})),
            "auto",
        )
        .await;
        let dirs = Dirs::with_file(".weft/native.toml", "check = \"touch check-ran\"\n");
        let input = match trusted {
            true => dirs.trusted_input(&env, "change it"),
            false => dirs.input(&env, "change it", None),
        };
        let (r, snap, _) = run_turn(&driver(), input).await;
        assert!(r.ok, "{r:?}");
        assert!(dirs.work().join("a.txt").exists());
        assert_eq!(dirs.work().join("check-ran").exists(), trusted);
        assert_eq!(
            snap.tool_calls.iter().any(|c| c.name == "verify"),
            trusted,
            "{:#?}",
            snap.tool_calls
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspace_cannot_turn_permission_to_auto() {
    for trusted in [false, true] {
        // No WEFT_NATIVE_PERMISSION: the mode comes from the settings or the pack.
        let (_s, env) = server(
            Turn::new().tool_use("w", "write", json!({"path": "a.txt", "content": "x"})),
            "",
        )
        .await;
        let dirs = Dirs::with_file(".weft/native.toml", "permission = \"auto\"\n");
        let input = match trusted {
            true => dirs.trusted_input(&env, "change it"),
            false => dirs.input(&env, "change it", None),
        };
        let sink = denying();
        let (r, _) = sink::run(&driver(), input, &sink).await;
        assert!(r.ok, "{r:?}");
        let asked = sink.asked.lock().len();
        assert_eq!(asked > 0, !trusted, "trusted: {trusted}, asked {asked}");
        assert_eq!(dirs.work().join("a.txt").exists(), trusted);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspace_offers_no_pack_of_its_own() {
    const DOCS: &str = "prompt = \"weft-docs-pack-prompt\"\ntools = [\"read\"]\n";
    for trusted in [false, true] {
        let (s, env) = server(Turn::text_reply("hi"), "auto").await;
        let dirs = Dirs::with_file(".weft/packs/docs.toml", DOCS);
        let mut input = match trusted {
            true => dirs.trusted_input(&env, "hi"),
            false => dirs.input(&env, "hi", None),
        };
        input.pack = Some("docs".into());
        let (r, _, _) = run_turn(&driver(), input).await;
        assert_eq!(r.ok, trusted, "{r:?}");
        if !trusted {
            assert!(
                r.error
                    .as_deref()
                    .unwrap_or_default()
                    .contains("no pack named"),
                "{r:?}"
            );
            assert!(s.messages_requests().is_empty());
        }
    }
    // A global pack (the user's own) is used either way.
    let (s, env) = server(Turn::text_reply("hi"), "auto").await;
    let dirs = Dirs::new();
    write(dirs.state.path(), "packs/docs.toml", DOCS);
    let mut input = dirs.input(&env, "hi", None);
    input.pack = Some("docs".into());
    let (r, _, _) = run_turn(&driver(), input).await;
    assert!(r.ok, "{r:?}");
    let system = s.messages_requests()[0].body["system"].to_string();
    assert!(system.contains("weft-docs-pack-prompt"), "{system}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspace_offers_no_skill_of_its_own() {
    for trusted in [false, true] {
        let (s, env) = server(Turn::text_reply("hi"), "auto").await;
        let dirs = Dirs::with_file(
            ".weft/skills/deploy/SKILL.md",
            "---\nname: weft-workspace-skill\ndescription: ships it\n---\nrun the deploy\n",
        );
        write(
            dirs.state.path(),
            "skills/global/SKILL.md",
            "---\nname: weft-global-skill\ndescription: the user's own\n---\nbody\n",
        );
        let input = match trusted {
            true => dirs.trusted_input(&env, "hi"),
            false => dirs.input(&env, "hi", None),
        };
        let (r, _, _) = run_turn(&driver(), input).await;
        assert!(r.ok, "{r:?}");
        let system = s.messages_requests()[0].body["system"].to_string();
        assert_eq!(system.contains("weft-workspace-skill"), trusted, "{system}");
        assert!(system.contains("weft-global-skill"), "{system}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspace_keeps_its_deny_rules_and_loses_its_allow_rules() {
    for trusted in [false, true] {
        let (s, env) = server(
            Turn::new()
                .tool_use("d", "bash", json!({"command": "echo weft-denied-line"}))
                .tool_use("a", "bash", json!({"command": "touch allowed.txt"})),
            "ask",
        )
        .await;
        let dirs = Dirs::with_file(
            ".weft/permissions.json",
            r#"{"deny": ["echo"], "allow": ["touch"]}"#,
        );
        let input = match trusted {
            true => dirs.trusted_input(&env, "go"),
            false => dirs.input(&env, "go", None),
        };
        let sink = denying();
        let (r, _) = sink::run(&driver(), input, &sink).await;
        assert!(r.ok, "{r:?}");
        let denied = s.messages_requests()[1].last_tool_result("d").unwrap();
        assert!(
            denied.contains("rule `echo`"),
            "trusted: {trusted}: {denied}"
        );
        assert_eq!(
            dirs.work().join("allowed.txt").exists(),
            trusted,
            "trusted: {trusted}"
        );
        let asked: Vec<String> = sink.asked.lock().iter().map(|i| i.title.clone()).collect();
        assert_eq!(asked.len(), usize::from(!trusted), "{asked:?}");
    }
}
