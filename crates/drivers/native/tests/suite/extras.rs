//! Subagents, skills, memory and hooks through the loop.

use serde_json::json;
use weft_protocol::ToolStatus;
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::support::{anthropic, delegating, driver, run_turn, write, Dirs};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_runs_a_read_only_subagent_shown_as_one() {
    let script = delegating(
        "look around",
        "weft-subtask: list the files",
        Turn::new().tool_use("c1", "ls", json!({"path": "."})),
    )
    .rule(
        when::tool_result_for("c1"),
        Turn::text_reply("child found a.txt"),
    )
    .rule(when::tool_result_for("t1"), Turn::text_reply("Main done."));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::with_file("a.txt", "x");
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "Investigate the folder", None)).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(snap.sub_agents.len(), 1, "{snap:#?}");
    let sub = &snap.sub_agents[0];
    assert_eq!((sub.id.as_str(), sub.status), ("t1", ToolStatus::Done));
    assert!(sub.result.as_deref().unwrap().contains("child found a.txt"));
    let ls = snap.tool_calls.iter().find(|c| c.id == "c1").unwrap();
    assert_eq!(ls.parent_id.as_deref(), Some("t1"));
    assert!(
        snap.text.contains("Main done.") && !snap.text.contains("child found"),
        "{}",
        snap.text
    );
    let reqs = s.messages_requests();
    let child = reqs
        .iter()
        .find(|r| r.last_user_text().contains("weft-subtask"))
        .unwrap();
    let tools = child.tool_names();
    assert!(
        tools.contains(&"ls".to_string())
            && !tools
                .iter()
                .any(|t| ["write", "bash", "task", "edit"].contains(&t.as_str())),
        "{tools:?}"
    );
    let last = reqs.last().unwrap();
    assert!(last
        .last_tool_result("t1")
        .unwrap()
        .contains("child found a.txt"));
    assert!(
        !last.body.to_string().contains("\"c1\""),
        "the child's calls leaked into the session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_offer_descriptions_and_load_on_demand() {
    let script = Script::new()
        .turn(Turn::new().tool_use("k", "skill", json!({"name": "deploy"})))
        .default_reply(Turn::text_reply("deployed"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::with_file(".weft/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: How to ship weft-skill-desc\n---\nRun weft-skill-body-marker then wait.\n");
    let (r, _, _) = run_turn(&driver(), dirs.trusted_input(&env, "ship it")).await;
    assert!(r.ok);
    let reqs = s.messages_requests();
    let system = reqs[0].body["system"].to_string();
    assert!(
        system.contains("weft-skill-desc") && !system.contains("weft-skill-body-marker"),
        "{system}"
    );
    assert!(reqs[0].tool_names().contains(&"skill".to_string()));
    assert!(reqs[1]
        .last_tool_result("k")
        .unwrap()
        .contains("weft-skill-body-marker"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_saved_in_one_session_is_in_the_next_ones_prompt() {
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "m",
            "memory_save",
            json!({"text": "tests run with weft-memory-fact"}),
        ))
        .default_reply(Turn::text_reply("ok"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let (r, _, _) = run_turn(&driver(), dirs.input(&env, "remember", None)).await;
    assert!(r.ok);
    assert_eq!(
        std::fs::read_to_string(dirs.work().join(".weft/memory.md")).unwrap(),
        "- tests run with weft-memory-fact\n"
    );
    let (r2, _, _) = run_turn(&driver(), dirs.input(&env, "a new session", None)).await;
    assert!(r2.ok);
    let last = s.messages_requests().last().unwrap().body["system"].to_string();
    assert!(last.contains("weft-memory-fact"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_pre_tool_use_hook_blocks_the_call_with_its_stderr() {
    let script = Script::new()
        .turn(
            Turn::new()
                .tool_use("bad", "bash", json!({"command": "rm -f keep.txt"}))
                .tool_use("fine", "bash", json!({"command": "echo hooked-ok"})),
        )
        .default_reply(Turn::text_reply("done"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::with_file("keep.txt", "precious");
    write(
        &dirs.work(),
        ".weft/hooks.json",
        r#"{"PreToolUse": [{"matcher": "bash", "command": "cat >> hook-input.jsonl; echo >> hook-input.jsonl; if grep -q 'rm -f' hook-input.jsonl && ! grep -q hooked-ok hook-input.jsonl; then echo 'no deleting today' >&2; exit 2; fi"}],
            "PostToolUse": [{"command": "cat >> post.jsonl; echo >> post.jsonl"}]}"#,
    );
    let (r, snap, _) = run_turn(&driver(), dirs.trusted_input(&env, "clean up")).await;
    assert!(r.ok);
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("keep.txt")).unwrap(),
        "precious"
    );
    let req = &s.messages_requests()[1];
    assert_eq!(
        req.last_tool_result("bad").unwrap(),
        "refused by PreToolUse hooks: no deleting today"
    );
    assert!(req.last_tool_result("fine").unwrap().contains("hooked-ok"));
    let got = std::fs::read_to_string(dirs.work().join("hook-input.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(got.lines().next().unwrap()).unwrap();
    assert_eq!(first["tool_name"], "bash");
    assert_eq!(first["tool_input"]["command"], "rm -f keep.txt");
    let post = std::fs::read_to_string(dirs.work().join("post.jsonl")).unwrap();
    assert!(
        post.contains("\"tool_output\"") && post.contains("hooked-ok"),
        "{post}"
    );
    assert_eq!(
        snap.tool_calls
            .iter()
            .find(|c| c.id == "bad")
            .unwrap()
            .status,
        ToolStatus::Failed
    );
}
