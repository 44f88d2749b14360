//! Each family of lines that read as harmless and run code, write a file or read the
//! user's credentials (security-3.md H4, M1, M10), and their harmless look-alikes:
//! every entry of tests/fixtures/corpus.txt gets its verdict.

use std::path::Path;

use weft_shell_guard::{classify, Context, Verdict};

use super::{corpus, cx, expected_ok};

#[test]
fn every_corpus_line_gets_its_verdict() {
    let cx = cx();
    let entries = corpus();
    assert!(entries.len() > 200, "{} entries", entries.len());
    let mut wrong = Vec::new();
    for (want, line) in &entries {
        let r = classify(line, &cx);
        if !expected_ok(*want, r.verdict) {
            wrong.push(format!(
                "{line:?}: want {want}, got {} {:?}",
                r.verdict.as_str(),
                r.reasons
            ));
        }
        if r.verdict != Verdict::Safe {
            assert!(
                !r.reasons.is_empty(),
                "{line:?} is {:?} with no reason",
                r.verdict
            );
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} lines wrong:\n{}",
        wrong.len(),
        entries.len(),
        wrong.join("\n")
    );
}

#[test]
fn a_tilde_with_a_name_is_that_users_home() {
    let cx = cx();
    let r = classify("rm -rf ~root", &cx);
    assert_eq!(r.verdict, Verdict::Dangerous, "{r:?}");
    assert!(r.reasons.iter().any(|x| x.contains("/root")), "{r:?}");
    // bash leaves `~name` alone when there is no such user: a folder in the workspace.
    let r = classify("rm -rf ~nobody-by-this-name", &cx);
    assert!(
        r.reasons
            .iter()
            .any(|x| x.contains("/work/project/~nobody-by-this-name")),
        "{r:?}"
    );
    // `~+` and `~-` are folders only known at run time.
    assert_eq!(classify("rm -rf ~-", &cx).verdict, Verdict::Dangerous);
    // After `=` in an assignment-like word too (`f=~/.ssh/id_rsa`).
    let r = classify("printf '%s' f=~/.ssh/x", &cx);
    assert_eq!(r.commands[0].argv[2], "f=/home/user/.ssh/x");
}

#[test]
fn weft_home_is_read_from_the_context() {
    let cx = Context {
        workdir: "/work/project".into(),
        home: Some("/home/user".into()),
        weft_home: Some("/srv/weft-state".into()),
    };
    let r = classify("cat /srv/weft-state/tokens", &cx);
    assert_eq!(r.verdict, Verdict::Dangerous, "{r:?}");
    assert_eq!(classify("cat /srv/other", &cx).verdict, Verdict::Safe);
}

#[test]
fn a_relative_read_resolves_from_the_folder_cd_went_to() {
    let cx = Context::with_home(Path::new("/work/project"), Path::new("/home/user"));
    assert_eq!(
        classify("cd /home/user && cat .aws/credentials", &cx).verdict,
        Verdict::Dangerous
    );
    assert_eq!(
        classify("cd $X && cat notes.txt", &cx).verdict,
        Verdict::Unknown
    );
}
