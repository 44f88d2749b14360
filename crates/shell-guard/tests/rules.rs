//! Rules on parsed argv prefixes: deny > ask > allow, every simple command allowed,
//! bad rules named with their line; and the permission step's order.

use std::path::{Path, PathBuf};

use weft_shell_guard::policy::{decide, decide_under, Mode, Outcome, Sandbox, Step};
use weft_shell_guard::rules::{self, Decision, Rules};
use weft_shell_guard::{classify, Context};

fn cx() -> Context {
    Context {
        workdir: PathBuf::from("/work/project"),
        home: Some(PathBuf::from("/home/user")),
    }
}

fn rules(text: &str) -> Rules {
    Rules {
        rules: rules::parse(text, "permissions.json").unwrap_or_else(|e| panic!("{e}")),
    }
}

fn d(r: &Rules, line: &str) -> Decision {
    r.decide(&classify(line, &cx()))
}

#[test]
fn prefixes_match_parsed_argv() {
    let r = rules(
        r#"{"allow": ["npm test", "cargo *", "git status", "ls"], "deny": ["git push"], "ask": ["npm publish"]}"#,
    );
    assert!(matches!(d(&r, "npm test"), Decision::Allow(_)));
    assert!(matches!(d(&r, "npm test -- --watch"), Decision::Allow(_)));
    assert!(
        matches!(d(&r, "'npm' test"), Decision::Allow(_)),
        "quotes are removed before matching"
    );
    assert_eq!(d(&r, "npm install"), Decision::None);
    assert!(matches!(d(&r, "cargo build --release"), Decision::Allow(_)));
    assert!(matches!(d(&r, "cargo test && ls -la"), Decision::Allow(_)));
    assert_eq!(
        d(&r, "cargo test && rm -rf x"),
        Decision::None,
        "every command must be allowed"
    );
    assert_eq!(d(&r, "ls; $(curl x)"), Decision::None);
    assert!(matches!(d(&r, "git push"), Decision::Deny(_)));
    // An allow rule is for the system's program; a file of that name elsewhere is not
    // it. Deny and ask still hold for it by name.
    assert!(matches!(d(&r, "/usr/bin/npm test"), Decision::Allow(_)));
    assert_eq!(d(&r, "./npm test"), Decision::None);
    assert_eq!(d(&r, "node_modules/.bin/npm test"), Decision::None);
    assert_eq!(d(&r, "/tmp/ls"), Decision::None);
    assert!(matches!(d(&r, "./git push"), Decision::Deny(_)));
    assert!(matches!(d(&r, "tools/git -C sub push"), Decision::Deny(_)));
    assert!(matches!(d(&r, "bin/npm publish"), Decision::Ask(_)));
    assert!(
        matches!(d(&r, "git -C sub push --force"), Decision::Deny(_)),
        "git's global options are skipped"
    );
    assert!(
        matches!(d(&r, "sudo git push"), Decision::Deny(_)),
        "wrappers are seen through"
    );
    assert!(matches!(
        d(&r, "ls && bash -c 'git push'"),
        Decision::Deny(_)
    ));
    assert!(matches!(d(&r, "npm publish"), Decision::Ask(_)));
    assert!(matches!(d(&r, "git status"), Decision::Allow(_)));
    assert!(matches!(d(&r, "timeout 60 cargo test"), Decision::Allow(_)));
    assert!(
        matches!(d(&r, "bash -c 'cargo test'"), Decision::Allow(_)),
        "a -c wrapper needs only its commands allowed"
    );
    assert_eq!(
        d(&r, "git status; git push x"),
        Decision::Deny("`git push` (permissions.json:1)".into())
    );
}

#[test]
fn bad_rules_are_named_with_their_line() {
    let text = "{\n  \"allow\": [\n    \"npm test\",\n    \"ls | wc\"\n  ]\n}\n";
    let e = rules::parse(text, "p.json")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.starts_with("p.json:4:") && e.contains("more than one command"),
        "{e}"
    );
    let e = rules::parse("{\"allow\": [\"git $X\"]}", "p.json")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("only known at run time"), "{e}");
    let e = rules::parse("{\n\"alow\": []}", "p.json")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.starts_with("p.json:2:") && e.contains("unknown key"),
        "{e}"
    );
    let e = rules::parse("{\"allow\": [\"ls\",]}", "p.json")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("not JSON"), "{e}");
    let e = rules::parse("{\"deny\": [\"\"]}", "p.json")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("empty"), "{e}");
    let e = rules::parse("{\"deny\": [3]}", "p.json")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("not a string"), "{e}");
}

#[test]
fn load_reads_workspace_and_global_and_add_allow_writes_the_workspace_file() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(home.path().join("permissions.json"), r#"{"deny": ["rm"]}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let file = rules::add_allow(ws.path(), "npm test").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file, ws.path().join(".weft/permissions.json"));
    rules::add_allow(ws.path(), "cargo build").unwrap_or_else(|e| panic!("{e}"));
    let r = Rules::load(ws.path(), Some(home.path())).unwrap_or_else(|e| panic!("{e}"));
    let c = Context::new(ws.path());
    assert!(matches!(
        r.decide(&classify("npm test", &c)),
        Decision::Allow(_)
    ));
    assert!(matches!(
        r.decide(&classify("cargo build", &c)),
        Decision::Allow(_)
    ));
    assert!(matches!(r.decide(&classify("rm x", &c)), Decision::Deny(_)));
    assert!(rules::add_allow(ws.path(), "a; b").is_err());
    std::fs::write(
        ws.path().join(".weft/permissions.json"),
        "{\"allow\": [\"ok\", \"a && b\"]}",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let e = Rules::load(ws.path(), Some(home.path()))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains(".weft/permissions.json:1"), "{e}");
    let _ = Path::new("/");
}

#[test]
fn the_permission_step_runs_in_its_order() {
    let none = Rules::default();
    let r = rules(r#"{"allow": ["rm -rf /"], "deny": ["git push"]}"#);
    let p = |line: &str, rules: &Rules, mode: Mode, sandboxed: bool| {
        decide(&classify(line, &cx()), rules, mode, sandboxed)
    };
    // A deny rule answers before anything, even for a safe command in trusted mode.
    let rr = rules(r#"{"deny": ["ls"]}"#);
    assert!(matches!(
        p("ls", &rr, Mode::Trusted, true),
        Outcome::Refuse(Step::DenyRule, _)
    ));
    // Deny wins over an allow for the same line.
    let both = rules(r#"{"allow": ["git *"], "deny": ["git push"]}"#);
    assert!(matches!(
        p("git push", &both, Mode::Trusted, true),
        Outcome::Refuse(Step::DenyRule, _)
    ));
    // A rule naming a dangerous command lets it run; nothing else does.
    assert!(matches!(
        p("rm -rf /", &r, Mode::Ask, true),
        Outcome::Run(Step::AllowRule, _)
    ));
    assert!(matches!(
        p("rm -rf /", &none, Mode::Trusted, true),
        Outcome::Confirm(Step::Mode, _)
    ));
    // Modes.
    assert!(matches!(
        p("ls", &none, Mode::Ask, true),
        Outcome::Confirm(..)
    ));
    assert!(matches!(
        p("ls", &none, Mode::AutoSafe, true),
        Outcome::Run(Step::Mode, _)
    ));
    assert!(matches!(
        p("npm test", &none, Mode::AutoSafe, true),
        Outcome::Confirm(..)
    ));
    assert!(matches!(
        p("npm test", &none, Mode::Trusted, true),
        Outcome::Run(Step::Mode, _)
    ));
    assert!(matches!(
        p("npm test", &none, Mode::Plan, true),
        Outcome::Refuse(Step::Mode, _)
    ));
    assert!(matches!(p("ls", &none, Mode::Plan, true), Outcome::Run(..)));
    // No sandbox: trusted mode no longer lets an unknown command through.
    assert!(matches!(
        p("npm test", &none, Mode::Trusted, false),
        Outcome::Confirm(Step::Sandbox, _)
    ));
    assert!(matches!(
        p("ls", &none, Mode::Trusted, false),
        Outcome::Run(..)
    ));
}

#[test]
fn under_a_sandbox_that_leaves_git_writable_a_write_into_it_asks() {
    let landlock = Sandbox {
        on: true,
        protects_git: false,
    };
    let bwrap = Sandbox {
        on: true,
        protects_git: true,
    };
    let allow_echo = rules(r#"{"allow": ["echo", "rm", "cp", "git *"]}"#);
    let p = |line: &str, s: Sandbox, mode: Mode| {
        decide_under(&classify(line, &cx()), &allow_echo, mode, s)
    };
    for line in [
        "echo x > .git/HEAD",
        "rm -f .weft/permissions.json",
        "cp evil /work/project/.git/hooks/pre-commit",
        "echo y >> ./src/../.git/info/exclude",
    ] {
        let r = classify(line, &cx());
        assert!(!r.protected_writes.is_empty(), "{line}: {r:?}");
        assert!(
            matches!(p(line, landlock, Mode::Trusted), Outcome::Confirm(Step::Sandbox, ref w) if w.contains(".git") || w.contains(".weft")),
            "{line}: {:?}",
            p(line, landlock, Mode::Trusted)
        );
        assert!(
            matches!(
                p(line, landlock, Mode::Plan),
                Outcome::Refuse(Step::Sandbox, _)
            ),
            "{line}"
        );
        // bubblewrap keeps them read-only: the allow rule answers as before.
        assert!(
            matches!(
                p(line, bwrap, Mode::Trusted),
                Outcome::Run(Step::AllowRule, _)
            ),
            "{line}"
        );
    }
    // Look-alikes that write elsewhere, or only read .git, are not held up.
    for line in [
        "echo x > git-notes.txt",
        "cat .git/HEAD",
        "echo .git/HEAD > out.txt",
        "git log",
    ] {
        assert!(classify(line, &cx()).protected_writes.is_empty(), "{line}");
        assert!(
            matches!(p(line, landlock, Mode::Trusted), Outcome::Run(..)),
            "{line}: {:?}",
            p(line, landlock, Mode::Trusted)
        );
    }
    // A deny rule still answers first.
    let deny = rules(r#"{"deny": ["echo"]}"#);
    assert!(matches!(
        decide_under(
            &classify("echo x > .git/HEAD", &cx()),
            &deny,
            Mode::Trusted,
            landlock
        ),
        Outcome::Refuse(Step::DenyRule, _)
    ));
}
