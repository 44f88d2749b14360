//! Slash commands through the real `claude`: the list it reports, a bare `/command`
//! sent verbatim, and the CLI's own answer to one it does not know.

use weft_claude::ClaudeDriver;
use weft_kernel::driver::AgentDriver;
use weft_protocol::CommandSource;
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::support::*;

#[tokio::test]
async fn commands_are_reported_compact_runs_and_an_unknown_one_gets_the_clis_answer() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn_when(
            when::user_text_contains("hello"),
            Turn::text_reply("Hi there."),
        )
        .rule(
            when::any_text_contains("summary"),
            Turn::text_reply("<summary>We said hello.</summary>"),
        )
        .default_reply(Turn::text_reply("default reply"));
    let env = ClaudeEnv::start(script).await;
    let cmds = env.home.path().join(".claude/commands");
    std::fs::create_dir_all(&cmds).unwrap();
    std::fs::write(
        cmds.join("ship.md"),
        "---\ndescription: Ship the branch\n---\nShip $ARGUMENTS\n",
    )
    .unwrap();
    let project = env.workdir().join(".claude/commands");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("tidy.md"),
        "# Tidy the workspace\n\nRemove stray files.\n",
    )
    .unwrap();

    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    // The project's own commands come from a folder the user trusted.
    let mut input = env.input("c1", "hello");
    input.workspace_trusted = true;
    // Its tools are known once a turn's start listed them; until then it says so.
    let why = driver.tools(&input).await.unwrap_err();
    assert!(why.contains("when a turn starts"), "{why}");
    let (result, snap) = run_turn(&driver, input.clone(), &sink).await;
    assert!(result.ok, "{result:?}");
    let tools = driver.tools(&input).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for name in ["Bash", "Read", "Edit", "Write"] {
        assert!(names.contains(&name), "{names:?}");
    }
    assert_eq!(
        env.server.messages_requests()[0].tool_names().len(),
        names.len(),
        "{names:?}"
    );
    let find = |name: &str| snap.commands.iter().find(|c| c.name == name).cloned();
    let compact = find("compact").unwrap_or_else(|| panic!("no /compact in {:?}", snap.commands));
    assert_eq!(compact.source, CommandSource::Builtin);
    assert!(!compact.description.is_empty(), "{compact:?}");
    let ship = find("ship").unwrap_or_else(|| panic!("no /ship in {:?}", snap.commands));
    assert_eq!(
        (ship.source, ship.description.as_str()),
        (CommandSource::User, "Ship the branch")
    );
    let tidy = find("tidy").unwrap();
    assert_eq!(tidy.source, CommandSource::Project);
    // The CLI's own list decides: the TUI-only /model is not offered in -p mode.
    assert!(find("model").is_none(), "{:?}", snap.commands);

    // `/compact` goes to the CLI verbatim and the CLI runs it: after one exchange it
    // answers by itself (a model given the text would not), or it asks the model for a
    // summary.
    let before = env.server.messages_requests().len();
    let sink = new_sink();
    let mut input = env.input("c1", "/compact");
    input.session_id = result.session_id.clone();
    let (compacted, snap) = run_turn(&driver, input, &sink).await;
    assert!(compacted.ok, "{compacted:?}");
    let reqs = env.server.messages_requests();
    let summarized = reqs[before..]
        .iter()
        .any(|r| r.all_text().contains("summary"));
    assert!(
        snap.text == "Not enough messages to compact." || summarized,
        "{:?} {:?}",
        snap.text,
        snap.notices
    );
    assert!(
        reqs[before..]
            .iter()
            .all(|r| !r.last_user_text().trim().starts_with("/compact")),
        "the command reached the model as text"
    );

    // An unknown command gets the CLI's own answer, shown as the agent's reply, and
    // never reaches the model.
    let before = env.server.messages_requests().len();
    let sink = new_sink();
    let mut input = env.input("c1", "/no-such-command now");
    input.session_id = result.session_id.clone();
    let (unknown, snap) = run_turn(&driver, input, &sink).await;
    assert!(unknown.ok, "{unknown:?}");
    assert_eq!(snap.text, "Unknown command: /no-such-command");
    assert_eq!(env.server.messages_requests().len(), before);
    driver.shutdown().await;
}
