//! `weft check-command` and `weft sandbox`: the classifier and the sandbox as the
//! native agent's bash tool uses them.

use super::support::Env;

#[test]
fn check_command_prints_verdict_reasons_and_commands() {
    let env = Env::new();
    let (code, v, _) = env.json(&[
        "check-command",
        "--json",
        "--",
        "echo cm0gLXJmIC8K | base64 -d | sh",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["verdict"], "dangerous", "{v}");
    assert!(
        v["reasons"][0]
            .as_str()
            .is_some_and(|r| r.contains("piped into sh")),
        "{v}"
    );
    assert_eq!(
        v["commands"][1]["argv"],
        serde_json::json!(["base64", "-d"])
    );
    assert_eq!(v["commands"][1]["verdict"], "safe");
    let (_, v, _) = env.json(&["check-command", "--json", "--", "echo rm -rf /"]);
    assert_eq!(v["verdict"], "safe", "{v}");
    let w = env.workdir();
    let (_, v, _) = env.json(&["check-command", "--workdir", &w, "--json", "--", "rm -rf ."]);
    assert_eq!(v["verdict"], "dangerous", "{v}");
    let (_, v, _) = env.json(&[
        "check-command",
        "--workdir",
        &w,
        "--json",
        "--",
        "rm -rf build",
    ]);
    assert_eq!(v["verdict"], "unknown", "{v}");
    let out = env.weft(&["check-command", "--", "r''m -rf /"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.starts_with("dangerous") && text.contains("disguise"),
        "{text}"
    );
}

#[test]
fn sandbox_probe_and_run() {
    let env = Env::new();
    let (code, v, _) = env.json(&["sandbox", "--probe", "--json"]);
    assert_eq!(code, 0);
    let mech = v["mechanism"].as_str().unwrap_or_default().to_string();
    assert!(
        matches!(mech.as_str(), "bwrap" | "landlock" | "unavailable"),
        "{v}"
    );
    if mech == "unavailable" {
        eprintln!("SKIP weft sandbox run: {}", v["details"]);
        return;
    }
    let w = env.workdir();
    let out = env.weft(&[
        "sandbox",
        "--workdir",
        &w,
        "--",
        "echo inside > made.txt && cat made.txt; exit 7",
    ]);
    assert_eq!(out.status.code(), Some(7), "the command's own exit code");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "inside\n");
    let out = env.weft(&[
        "sandbox",
        "--workdir",
        &w,
        "--",
        "echo x > /etc/weft-cli-sandbox-test",
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/etc/weft-cli-sandbox-test"));
}
