use std::path::Path;

use weft_agent_spec::spec::{OwnMcpFile, OwnMcpFormat};

use super::*;

fn spec(id: &str, mcp: Option<(&str, OwnMcpFormat)>, skills: &[SkillsDir]) -> AgentSpec {
    let mut s = AgentSpec::new(id, id);
    s.own_mcp = mcp
        .map(|(file, format)| OwnMcpFile {
            file: file.into(),
            format,
        })
        .into_iter()
        .collect();
    s.skills = skills.to_vec();
    s
}

fn specs() -> Vec<AgentSpec> {
    vec![
        spec(
            "claude",
            Some((".claude.json", OwnMcpFormat::JsonMcpServers)),
            &[SkillsDir::Both(".claude/skills".into())],
        ),
        spec(
            "codex",
            Some((".codex/config.toml", OwnMcpFormat::TomlMcpServers)),
            &[
                SkillsDir::Both(".agents/skills".into()),
                SkillsDir::Home(".codex/skills".into()),
            ],
        ),
        spec(
            "gemini",
            Some((".gemini/settings.json", OwnMcpFormat::JsonMcpServersSseUrl)),
            &[SkillsDir::Both(".gemini/skills".into())],
        ),
    ]
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const ALL: Options = Options {
    dry_run: false,
    servers: true,
    skills: true,
};

/// A secret keeper that keeps nothing: a dry run and a file with no secret never ask.
fn refuse(name: &str, _: &str) -> Result<(), String> {
    Err(format!("no secret store in this test ({name})"))
}

fn outcomes(report: &AgentSetupImport) -> Vec<(String, String, ImportOutcome)> {
    report
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.agent.clone(), s.outcome))
        .collect()
}

#[test]
fn a_secret_the_store_cannot_keep_is_named_with_how_to_set_it() {
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    write(
        &home.path().join(".claude.json"),
        r#"{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GH_TOKEN": "ghp_0123456789abcdef"}}}}"#,
    );
    let done = import(state.path(), Some(home.path()), &specs(), ALL, &refuse).unwrap();
    assert_eq!(done.servers[0].outcome, ImportOutcome::Added);
    assert!(
        done.problems.iter().any(
            |p| p.contains("gh-GH_TOKEN could not go into the secret store")
                && p.contains("weft mcp secret set gh-GH_TOKEN --stdin")
                && !p.contains("ghp_")
        ),
        "{:?}",
        done.problems
    );
}

#[test]
fn servers_are_added_beside_weft_s_own_and_a_second_import_adds_none() {
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let weft_file = state.path().join("mcp.json");
    write(
        &weft_file,
        r#"{"mcpServers": {"time": {"command": "weft-time"}}, "note": "mine"}"#,
    );
    write(
        &home.path().join(".claude.json"),
        r#"{"numStartups": 3, "mcpServers": {
            "time": {"command": "uvx", "args": ["mcp-server-time"]},
            "github": {"type": "stdio", "command": "npx", "args": ["-y", "gh-mcp"],
                       "env": {"GITHUB_TOKEN": "ghp_0123456789abcdef", "LOG": "1"}},
            "events": {"type": "sse", "url": "https://e.example/sse"}}}"#,
    );
    write(
        &home.path().join(".codex/config.toml"),
        "[mcp_servers.github]\ncommand = \"other\"\n\n[mcp_servers.figma]\nurl = \"https://mcp.figma.com/mcp\"\nbearer_token_env_var = \"FIGMA_TOKEN\"\n",
    );
    write(&home.path().join(".gemini/settings.json"), "{ broken");

    let dry = import(
        state.path(),
        Some(home.path()),
        &specs(),
        Options {
            dry_run: true,
            ..ALL
        },
        &refuse,
    )
    .unwrap();
    let want = vec![
        (
            "events".to_string(),
            "claude".to_string(),
            ImportOutcome::Unsupported,
        ),
        ("github".into(), "claude".into(), ImportOutcome::Added),
        ("time".into(), "claude".into(), ImportOutcome::Exists),
        ("figma".into(), "codex".into(), ImportOutcome::Added),
        ("github".into(), "codex".into(), ImportOutcome::Duplicate),
    ];
    assert_eq!(outcomes(&dry), want);
    assert!(dry.dry_run);
    let gh = &dry.servers[1];
    assert_eq!(gh.env_names, ["GITHUB_TOKEN", "LOG"]);
    assert_eq!(gh.secrets, ["github-GITHUB_TOKEN"]);
    assert!(
        gh.note
            .as_deref()
            .unwrap_or("")
            .contains("would move secrets into the secret store as github-GITHUB_TOKEN"),
        "{gh:?}"
    );
    assert!(
        dry.problems.len() == 1 && dry.problems[0].contains(".gemini/settings.json"),
        "{:?}",
        dry.problems
    );
    let untouched = std::fs::read_to_string(&weft_file).unwrap();
    assert!(
        !untouched.contains("github"),
        "a dry run wrote: {untouched}"
    );

    let kept = parking_lot::Mutex::new(Vec::new());
    let keep = |name: &str, value: &str| {
        kept.lock().push((name.to_string(), value.to_string()));
        Ok(())
    };
    let done = import(state.path(), Some(home.path()), &specs(), ALL, &keep).unwrap();
    assert_eq!(outcomes(&done), want);
    // The value the agent's file held went to the secret store; the one the agent read
    // from its own environment (figma's bearer_token_env_var) has none to move.
    assert_eq!(
        *kept.lock(),
        [(
            "github-GITHUB_TOKEN".to_string(),
            "ghp_0123456789abcdef".to_string()
        )]
    );
    assert!(done.servers[1]
        .note
        .as_deref()
        .unwrap_or("")
        .contains("secrets go into the secret store as github-GITHUB_TOKEN"));
    assert!(done.servers[3]
        .note
        .as_deref()
        .unwrap_or("")
        .contains("weft mcp secret set figma-FIGMA_TOKEN"));
    let text = std::fs::read_to_string(&weft_file).unwrap();
    assert!(!text.contains("ghp_0123"), "a secret was copied: {text}");
    assert!(text.contains(r#""note": "mine""#), "{text}");
    let cfg = crate::mcp::load(state.path(), None, false);
    assert_eq!(
        cfg.servers.keys().collect::<Vec<_>>(),
        ["figma", "github", "time"]
    );
    assert!(cfg.problems.is_empty(), "{:?}", cfg.problems);
    assert_eq!(cfg.servers["time"].command.as_deref(), Some("weft-time"));
    assert_eq!(cfg.servers["github"].env["LOG"], "1");
    assert_eq!(
        cfg.servers["github"].secret_names(),
        ["github-GITHUB_TOKEN"]
    );
    assert_eq!(
        cfg.servers["figma"].headers["Authorization"],
        "Bearer ${secret:figma-FIGMA_TOKEN}"
    );

    let again = import(state.path(), Some(home.path()), &specs(), ALL, &refuse).unwrap();
    assert!(
        again
            .servers
            .iter()
            .all(|s| s.outcome != ImportOutcome::Added),
        "{:?}",
        outcomes(&again)
    );
    assert_eq!(std::fs::read_to_string(&weft_file).unwrap(), text);
}

#[test]
fn a_broken_weft_file_is_never_overwritten() {
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    write(&state.path().join("mcp.json"), "{ mine, half-typed");
    write(
        &home.path().join(".claude.json"),
        r#"{"mcpServers": {"a": {"command": "a"}}}"#,
    );
    let err = import(state.path(), Some(home.path()), &specs(), ALL, &refuse).unwrap_err();
    assert!(err.to_string().contains("not a valid mcp.json"), "{err}");
    assert_eq!(
        std::fs::read_to_string(state.path().join("mcp.json")).unwrap(),
        "{ mine, half-typed"
    );
}

fn skill(dir: &Path, name: &str) {
    write(
        &dir.join("SKILL.md"),
        &format!("---\nname: {name}\ndescription: Does {name}.\n---\nBody.\n"),
    );
}

#[test]
fn skills_are_copied_once_and_weft_s_own_links_are_not_the_user_s() {
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    skill(&h.join(".claude/skills/review"), "review");
    std::fs::create_dir_all(h.join(".claude/skills/notes")).unwrap();
    skill(&h.join(".claude/skills/Bad"), "Bad Name");
    skill(&h.join(".codex/skills/review"), "review");
    skill(&h.join(".gemini/skills/deploy"), "deploy");
    // A skill placed in Weft and linked into the shared folder for Codex and Gemini.
    skill(&state.path().join("skills/placed"), "placed");
    std::fs::create_dir_all(h.join(".agents/skills")).unwrap();
    std::os::unix::fs::symlink(
        state.path().join("skills/placed"),
        h.join(".agents/skills/placed"),
    )
    .unwrap();
    let skills_only = Options {
        servers: false,
        ..ALL
    };
    let list = |r: &AgentSetupImport| -> Vec<(String, String, ImportOutcome)> {
        r.skills
            .iter()
            .map(|s| (s.name.clone(), s.agent.clone(), s.outcome))
            .collect()
    };
    let dry = import(
        state.path(),
        Some(h),
        &specs(),
        Options {
            dry_run: true,
            ..skills_only
        },
        &refuse,
    )
    .unwrap();
    let want = vec![
        (
            "Bad Name".to_string(),
            "claude".to_string(),
            ImportOutcome::Unsupported,
        ),
        ("notes".into(), "claude".into(), ImportOutcome::Unsupported),
        ("review".into(), "claude".into(), ImportOutcome::Added),
        ("review".into(), "codex".into(), ImportOutcome::Duplicate),
        ("deploy".into(), "gemini".into(), ImportOutcome::Added),
    ];
    assert_eq!(list(&dry), want);
    assert!(dry.servers.is_empty());
    assert!(!state.path().join("skills/review").exists());

    let done = import(state.path(), Some(h), &specs(), skills_only, &refuse).unwrap();
    assert_eq!(list(&done), want);
    let placed: Vec<String> = crate::skills::find(state.path(), None)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(placed, ["deploy", "placed", "review"]);
    let again = import(state.path(), Some(h), &specs(), skills_only, &refuse).unwrap();
    assert!(again
        .skills
        .iter()
        .all(|s| s.outcome != ImportOutcome::Added));
}

#[test]
fn no_home_is_a_problem_not_a_failure() {
    let state = tempfile::tempdir().unwrap();
    let r = import(state.path(), None, &specs(), ALL, &refuse).unwrap();
    assert!(r.problems[0].contains("HOME"));
}
