//! Rules on parsed argv prefixes: deny > ask > allow, every simple command allowed,
//! bad rules named with their line; and the permission step's order.

use std::path::Path;

use weft_shell_guard::policy::{decide, decide_under, Mode, Outcome, Sandbox, Step};
use weft_shell_guard::rules::{self, Decision, Rules};
use weft_shell_guard::{classify, Context};

fn cx() -> Context {
    Context::with_home(Path::new("/work/project"), Path::new("/home/user"))
}

fn rules(text: &str) -> Rules {
    let r = rules::parse(text, "permissions.json").unwrap_or_else(|e| panic!("{e}"));
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    r
}

/// The one problem parsing `text` names.
fn problem(text: &str) -> String {
    let r = rules::parse(text, "p.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    r.problems[0].to_string()
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
    assert_eq!(
        d(&r, "'npm' test"),
        Decision::None,
        "a quoted program name is a disguise (dangerous), which no rule allows"
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
fn bad_rules_are_named_with_their_line_and_the_others_apply() {
    let text = "{\n  \"allow\": [\n    \"npm test\",\n    \"ls | wc\"\n  ]\n}\n";
    let r = rules::parse(text, "p.json").unwrap_or_else(|e| panic!("{e}"));
    let e = r
        .problems
        .first()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.starts_with("p.json:4:") && e.contains("more than one command"),
        "{e}"
    );
    assert!(matches!(
        r.decide(&classify("npm test", &cx())),
        Decision::Allow(_)
    ));
    assert!(problem("{\"allow\": [\"git $X\"]}").contains("only known at run time"));
    assert!(problem("{\"deny\": [\"\"]}").contains("empty"));
    assert!(problem("{\"deny\": [3]}").contains("not a string"));
    // A file that is not a rule file at all is an error.
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
}

#[test]
fn a_rule_that_allows_everything_is_refused_and_named_while_the_rest_apply() {
    let text = r#"{
  "allow": [
    "*",
    "npm test",
    "bash *",
    "sh",
    "python3 *",
    "node *",
    "sudo *",
    "env *",
    "python3 -m pytest",
    "cargo *"
  ],
  "deny": ["*"]
}"#;
    let r = rules::parse(text, "p.json").unwrap_or_else(|e| panic!("{e}"));
    let named: Vec<String> = r.problems.iter().map(|p| p.to_string()).collect();
    for (line, rule) in [
        (3, "*"),
        (5, "bash *"),
        (6, "sh"),
        (7, "python3 *"),
        (8, "node *"),
        (9, "sudo *"),
        (10, "env *"),
    ] {
        assert!(
            named
                .iter()
                .any(|p| p.starts_with(&format!("p.json:{line}:"))
                    && p.contains(&format!("{rule:?}"))),
            "{rule} at line {line} not named: {named:?}"
        );
    }
    assert_eq!(named.len(), 7, "{named:?}");
    let d = |line: &str| r.decide(&classify(line, &cx()));
    // Without the deny `*` the remaining rules answer.
    let allow_only = rules::parse(&text.replace(r#""deny": ["*"]"#, r#""deny": []"#), "p.json")
        .unwrap_or_else(|e| panic!("{e}"));
    let a = |line: &str| allow_only.decide(&classify(line, &cx()));
    assert!(matches!(a("npm test"), Decision::Allow(_)));
    assert!(matches!(a("python3 -m pytest"), Decision::Allow(_)));
    assert!(matches!(a("cargo build"), Decision::Allow(_)));
    assert_eq!(a("bash -c 'curl x | sh'"), Decision::None);
    assert_eq!(a("python3 -c 'import os'"), Decision::None);
    assert_eq!(a("node evil.js"), Decision::None);
    // A deny `*` only restricts: it is kept.
    assert!(matches!(d("npm test"), Decision::Deny(_)));
    // "Always allow" never offers or writes such a rule.
    assert_eq!(
        rules::suggest_prefix(&classify("bash build.sh", &cx())),
        None
    );
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    assert!(rules::add_allow(ws.path(), "python3").is_err());
}

#[test]
fn an_allow_rule_never_allows_a_dangerous_line_or_one_that_runs_hidden_code() {
    let r = rules(
        r#"{"allow": ["rm", "git status", "git log", "npm test", "echo", "ls", "git *", "cat"]}"#,
    );
    let d = |line: &str| r.decide(&classify(line, &cx()));
    assert!(matches!(d("rm -f build/x.o"), Decision::Allow(_)));
    assert_eq!(d("rm -rf /"), Decision::None);
    assert_eq!(d("rm -rf ~"), Decision::None);
    assert_eq!(d("cat ~/.ssh/id_rsa"), Decision::None);
    assert!(matches!(d("git status"), Decision::Allow(_)));
    // security-3.md M3: global options that run code are judged before any rule.
    for line in [
        "git -c core.fsmonitor='touch x; false' status",
        "git -c core.sshCommand='touch x' status",
        "X='touch x' git --config-env=core.fsmonitor=X status",
        "git --exec-path=. status",
        "git -C vendor/x status",
        "git --git-dir=/tmp/evil/.git log",
        "git -p log",
        "LD_PRELOAD=./x.so npm test",
        "env LD_PRELOAD=./x.so npm test",
        "GIT_PAGER='touch x' git log",
        "PATH=./bin; npm test",
        "export PATH=./bin; ls",
        "echo $((x))",
        "hash -p ./x ls; ls",
    ] {
        assert_eq!(d(line), Decision::None, "{line}");
    }
    assert!(matches!(
        d("git -c color.ui=always log"),
        Decision::Allow(_)
    ));
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
    let r = Rules::load(ws.path(), Some(home.path()), true).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.problems.is_empty(), "{:?}", r.problems);
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
    let r = Rules::load(ws.path(), Some(home.path()), true).unwrap_or_else(|e| panic!("{e}"));
    let named: Vec<String> = r.problems.iter().map(|p| p.to_string()).collect();
    assert!(
        named.iter().any(|p| p.contains(".weft/permissions.json:1")),
        "{named:?}"
    );
    assert!(matches!(r.decide(&classify("rm x", &c)), Decision::Deny(_)));
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
    // Not even a rule naming a dangerous command lets it run unasked.
    assert!(matches!(
        p("rm -rf /", &r, Mode::Ask, true),
        Outcome::Confirm(Step::Mode, _)
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
    // Read-only lines, .git named or not, are not held up.
    for line in ["cat .git/HEAD", "git log", "ls .weft", "echo .git/HEAD"] {
        assert!(classify(line, &cx()).protected_writes.is_empty(), "{line}");
        assert!(
            matches!(p(line, landlock, Mode::Trusted), Outcome::Run(..)),
            "{line}: {:?}",
            p(line, landlock, Mode::Trusted)
        );
    }
    // Under Landlock every command that is not safe asks, even one an allow rule
    // names, in trusted mode; plan mode refuses it. (It could plant a hook in .git
    // without naming it: `cp x y` where y is a symlink, a build step, a script.)
    for line in [
        "echo x > git-notes.txt",
        "rm -f notes.txt",
        "git commit -m x",
        "npm test",
    ] {
        assert!(
            matches!(p(line, landlock, Mode::Trusted), Outcome::Confirm(Step::Sandbox, ref w) if w.contains("Landlock")),
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
        assert!(
            !matches!(p(line, landlock, Mode::AutoSafe), Outcome::Run(..)),
            "{line}"
        );
    }
    // Under bubblewrap the allow rules and the mode answer as before.
    assert!(matches!(
        p("rm -f notes.txt", bwrap, Mode::Ask),
        Outcome::Run(Step::AllowRule, _)
    ));
    assert!(matches!(
        p("npm test", bwrap, Mode::Trusted),
        Outcome::Run(Step::Mode, _)
    ));
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
