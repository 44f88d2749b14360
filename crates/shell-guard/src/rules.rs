//! Permission rules: `.weft/permissions.json` in a workspace and `permissions.json`
//! in WEFT_HOME, each `{"deny": [...], "ask": [...], "allow": [...]}` of command
//! prefixes (`"npm test"`, `"git push"`, `"cargo *"`). A rule is parsed like a
//! command, so it matches the parsed argv of each simple command (after wrappers and
//! git's global options), never the text. deny > ask > allow; a line is allowed only
//! when every simple command in it is.
//!
//! What an allow rule cannot do:
//! - allow a line judged `dangerous`;
//! - allow a line something in it runs code its argv does not show
//!   ([`Report::pinned`]: `git -c core.fsmonitor=CMD status` is not `git status`);
//! - allow everything: `*`, or a rule for a program that runs whatever it is given
//!   (a shell, an interpreter, a wrapper such as `sudo` or `env`) with no arguments or
//!   a `*`, is refused and named (`file:line`) in [`Rules::problems`], while the
//!   file's other rules still apply;
//! - come from a workspace the user has not trusted: its deny and ask rules (which
//!   only restrict) apply, its allow rules are skipped and said so.

use std::path::{Path, PathBuf};

use serde::Serialize;
use weft_workspace::files::{self, CONFIG_CAP};

use crate::{Context, Report, Simple, Verdict};

/// The file name of a rule file.
pub const FILE: &str = "permissions.json";

/// What a rule says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Deny,
    Ask,
    Allow,
}

impl Effect {
    fn key(self) -> &'static str {
        match self {
            Self::Deny => "deny",
            Self::Ask => "ask",
            Self::Allow => "allow",
        }
    }
}

/// One rule.
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    pub effect: Effect,
    /// As written.
    pub text: String,
    /// Its words (`*` matches one word; a trailing `*` any rest).
    words: Vec<String>,
    /// Where it came from (`file:line`).
    pub origin: String,
}

/// A rule file or a rule that cannot be used, named with where.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RuleError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// The rules in force for a workspace.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub rules: Vec<Rule>,
    /// Rules that were not taken, each with where and why (show them to the user).
    pub problems: Vec<RuleError>,
}

/// What the rules say about a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A deny rule matched (its text and origin).
    Deny(String),
    /// An ask rule matched.
    Ask(String),
    /// Every simple command matched an allow rule.
    Allow(Vec<String>),
    /// No rule decides.
    None,
}

impl Rules {
    /// The workspace's rules and the global ones (both optional). The workspace's
    /// allow rules are taken only when the user trusted it (`workspace_trusted`);
    /// its deny and ask rules always. A file that cannot be read or is not a rule
    /// file at all is an error; a bad rule in it is a problem, the others apply.
    pub fn load(
        workspace: &Path,
        weft_home: Option<&Path>,
        workspace_trusted: bool,
    ) -> Result<Self, RuleError> {
        let mut all = Self::default();
        for (i, file) in Self::files(workspace, weft_home).into_iter().enumerate() {
            let name = file.to_string_lossy().into_owned();
            let text = match files::read_config(&file, CONFIG_CAP) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => {
                    return Err(RuleError {
                        file: name,
                        line: 0,
                        message: format!("cannot read: {e}"),
                    })
                }
            };
            let mut parsed = parse(&text, &name)?;
            if i == 0 && !workspace_trusted {
                let skipped: Vec<&Rule> = parsed
                    .rules
                    .iter()
                    .filter(|r| r.effect == Effect::Allow)
                    .collect();
                if let Some(first) = skipped.first() {
                    let line = first
                        .origin
                        .rsplit(':')
                        .next()
                        .and_then(|l| l.parse().ok())
                        .unwrap_or(1);
                    parsed.problems.push(RuleError {
                        file: name.clone(),
                        line,
                        message: format!(
                            "{} allow rule{} skipped: this folder is not trusted (`weft trust` trusts it); its deny and ask rules apply",
                            skipped.len(),
                            if skipped.len() == 1 { "" } else { "s" }
                        ),
                    });
                }
                parsed.rules.retain(|r| r.effect != Effect::Allow);
            }
            all.rules.extend(parsed.rules);
            all.problems.extend(parsed.problems);
        }
        Ok(all)
    }

    /// The files rules are read from, workspace first.
    pub fn files(workspace: &Path, weft_home: Option<&Path>) -> Vec<PathBuf> {
        let mut v = vec![workspace.join(".weft").join(FILE)];
        if let Some(h) = weft_home {
            v.push(h.join(FILE));
        }
        v
    }

    /// deny > ask > allow for `report`'s commands.
    pub fn decide(&self, report: &Report) -> Decision {
        let of = |effect: Effect| self.rules.iter().filter(move |r| r.effect == effect);
        // Deny and ask hold for a program however it is named (`./git push` too);
        // allow only for the system's program (`keys`).
        let named: Vec<Vec<String>> = report
            .simple
            .iter()
            .flat_map(|s| s.keys.iter())
            .map(|k| {
                let mut k = k.clone();
                if let Some(first) = k.first_mut() {
                    *first = crate::paths::base(first).to_string();
                }
                k
            })
            .collect();
        let hit = |r: &Rule| {
            report
                .simple
                .iter()
                .any(|s| s.keys.iter().any(|k| r.matches(k)))
                || named.iter().any(|k| r.matches(k))
        };
        for r in of(Effect::Deny) {
            if hit(r) {
                return Decision::Deny(format!("`{}` ({})", r.text, r.origin));
            }
        }
        for r in of(Effect::Ask) {
            if hit(r) {
                return Decision::Ask(format!("`{}` ({})", r.text, r.origin));
            }
        }
        // A dangerous line asks whatever the rules say; so does one that runs code
        // its argv does not show (a rule for `git status` is not one for
        // `git -c core.fsmonitor=CMD status`).
        if report.verdict == Verdict::Dangerous || !report.pinned.is_empty() {
            return Decision::None;
        }
        let needed: Vec<&Simple> = report.simple.iter().filter(|s| !s.wrapper).collect();
        if needed.is_empty() || report.reasons.iter().any(|r| r.contains("does not parse")) {
            return Decision::None;
        }
        let mut used = Vec::new();
        for s in needed {
            let Some(k) = s.keys.last() else {
                return Decision::None;
            };
            match of(Effect::Allow).find(|r| r.matches(k)) {
                Some(r) => {
                    if !used.contains(&r.text) {
                        used.push(r.text.clone());
                    }
                }
                None => return Decision::None,
            }
        }
        Decision::Allow(used)
    }
}

impl Rule {
    fn matches(&self, key: &[String]) -> bool {
        for (i, w) in self.words.iter().enumerate() {
            let last = i + 1 == self.words.len();
            if w == "*" && last {
                return true;
            }
            let Some(k) = key.get(i) else {
                return false;
            };
            if w == "*" {
                continue;
            }
            if k.starts_with('\0') || !glob(w, k) {
                return false;
            }
        }
        true
    }
}

/// `*` inside a word matches any run of characters.
fn glob(pat: &str, s: &str) -> bool {
    if !pat.contains('*') {
        return pat == s;
    }
    let parts: Vec<&str> = pat.split('*').collect();
    let mut rest = s;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(p) else {
                return false;
            };
            rest = r;
        } else if i + 1 == parts.len() {
            return rest.ends_with(p);
        } else {
            match rest.find(p) {
                Some(at) => rest = &rest[at + p.len()..],
                None => return false,
            }
        }
    }
    true
}

/// Parses one rule file's text; `file` names it in errors. A file that is not a rule
/// file is an error; a rule that cannot be used is a problem and the rest are taken.
pub fn parse(text: &str, file: &str) -> Result<Rules, RuleError> {
    let err = |line: usize, message: String| RuleError {
        file: file.to_string(),
        line,
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| err(e.line(), format!("not JSON: {e}")))?;
    let serde_json::Value::Object(map) = value else {
        return Err(err(
            1,
            "expected an object {\"deny\": [...], \"ask\": [...], \"allow\": [...]}".into(),
        ));
    };
    let mut out = Rules::default();
    for (k, v) in &map {
        let effect = match k.as_str() {
            "deny" => Effect::Deny,
            "ask" => Effect::Ask,
            "allow" => Effect::Allow,
            _ => {
                return Err(err(
                    line_of(text, &format!("\"{k}\""), 0),
                    format!("unknown key {k:?}: expected deny, ask or allow"),
                ))
            }
        };
        let serde_json::Value::Array(items) = v else {
            return Err(err(
                line_of(text, &format!("\"{k}\""), 0),
                format!("{k} must be a list of command prefixes"),
            ));
        };
        let key_at = text.find(&format!("\"{}\"", effect.key())).unwrap_or(0);
        let mut from = key_at;
        for item in items {
            let serde_json::Value::String(s) = item else {
                out.problems.push(err(
                    line_of(text, &item.to_string(), key_at),
                    format!("{item} is not a string"),
                ));
                continue;
            };
            let literal = serde_json::to_string(s).unwrap_or_default();
            let at = text[from..].find(&literal).map_or(from, |i| i + from);
            from = at + literal.len().min(text.len() - at);
            let line = text[..at].matches('\n').count() + 1;
            let words = match rule_words(s) {
                Ok(w) => w,
                Err(m) => {
                    out.problems.push(err(line, format!("rule {s:?}: {m}")));
                    continue;
                }
            };
            if effect == Effect::Allow {
                if let Some(why) = allows_everything(&words) {
                    out.problems
                        .push(err(line, format!("allow rule {s:?} refused: {why}")));
                    continue;
                }
            }
            out.rules.push(Rule {
                effect,
                text: s.clone(),
                words,
                origin: format!("{file}:{line}"),
            });
        }
    }
    Ok(out)
}

/// Programs that run whatever they are given: a rule naming one with any arguments
/// allows every command there is (`bash *` allows `bash -c 'rm -rf ~'`, `sudo *`
/// anything as root). `npm`, `cargo` and `make` run the project's own scripts and are
/// left to the user: those scripts are in the workspace the rule is about.
fn runs_anything(program: &str) -> bool {
    crate::wrap::is_shell(program)
        || crate::wrap::is_interpreter(program)
        || matches!(
            program,
            "eval"
                | "exec"
                | "source"
                | "."
                | "env"
                | "sudo"
                | "doas"
                | "su"
                | "run0"
                | "pkexec"
                | "xargs"
                | "nohup"
                | "timeout"
                | "nice"
                | "ionice"
                | "time"
                | "stdbuf"
                | "setsid"
                | "chrt"
                | "taskset"
                | "command"
                | "builtin"
                | "busybox"
                | "unbuffer"
                | "watch"
                | "strace"
                | "ltrace"
                | "ssh"
                | "npx"
                | "bunx"
                | "pnpx"
                | "uvx"
        )
}

/// Why an allow rule with these words would allow everything, if it would.
fn allows_everything(words: &[String]) -> Option<String> {
    let program = words.first()?;
    if program.contains('*') {
        return Some("a rule whose program is `*` allows every command".into());
    }
    let b = crate::paths::base(program);
    if runs_anything(b) && (words.len() == 1 || words[1..].iter().any(|w| w.contains('*'))) {
        return Some(format!(
            "{b} runs whatever it is given, so this allows every command; name what it runs (`{b} scripts/check.sh`)"
        ));
    }
    None
}

fn line_of(text: &str, needle: &str, from: usize) -> usize {
    let at = text
        .get(from..)
        .and_then(|t| t.find(needle))
        .map_or(0, |i| i + from);
    text[..at].matches('\n').count() + 1
}

/// A rule's words, read by the same parser as commands.
fn rule_words(s: &str) -> Result<Vec<String>, String> {
    if s.trim().is_empty() {
        return Err("is empty".into());
    }
    let cx = Context {
        workdir: PathBuf::from("/"),
        home: None,
        weft_home: None,
    };
    let r = crate::classify(s, &cx);
    if r.reasons.iter().any(|x| x.contains("does not parse")) {
        return Err("does not parse as a command".into());
    }
    if r.simple.len() != 1 {
        return Err("names more than one command; write one rule per command".into());
    }
    let Some(key) = r.simple[0].keys.first() else {
        return Err("its program is not a plain word".into());
    };
    if key.iter().any(|w| w.starts_with('\0')) {
        return Err("has a word that is only known at run time ($…)".into());
    }
    Ok(key.clone())
}

/// Adds `prefix` as an allow rule to the workspace's rule file (created if missing);
/// the rest of the file is kept. The file is read and replaced under a lock, so two
/// writers at once both land; a reader sees the old file or the new one.
pub fn add_allow(workspace: &Path, prefix: &str) -> Result<PathBuf, String> {
    let words = rule_words(prefix)?;
    if let Some(why) = allows_everything(&words) {
        return Err(why);
    }
    let dir = workspace.join(".weft");
    let file = dir.join(FILE);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let _lock = files::lock(&dir.join(format!(".{FILE}.lock")))
        .map_err(|e| format!("cannot lock {}: {e}", file.display()))?;
    let mut value = match files::read_config(&file, CONFIG_CAP) {
        Ok(Some(t)) => {
            parse(&t, &file.to_string_lossy()).map_err(|e| e.to_string())?;
            serde_json::from_str::<serde_json::Value>(&t).map_err(|e| e.to_string())?
        }
        Ok(None) => serde_json::json!({}),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let Some(map) = value.as_object_mut() else {
        return Err(format!("{} is not an object", file.display()));
    };
    let list = map
        .entry("allow")
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    if let Some(items) = list.as_array_mut() {
        if !items.iter().any(|i| i.as_str() == Some(prefix)) {
            items.push(serde_json::Value::String(prefix.to_string()));
        }
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
    files::replace(&file, (text + "\n").as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(file)
}

/// The prefix "always allow" offers for a line: the first simple command's program
/// and subcommand-like first word (`npm test`, `git push`, `cargo build`).
pub fn suggest_prefix(report: &Report) -> Option<String> {
    let s = report.simple.iter().find(|s| !s.wrapper)?;
    let k = s.keys.last()?;
    let prog = k.first()?;
    let mut words = vec![prog.clone()];
    let subcommands = matches!(
        prog.as_str(),
        "git"
            | "npm"
            | "pnpm"
            | "yarn"
            | "bun"
            | "deno"
            | "cargo"
            | "go"
            | "docker"
            | "podman"
            | "kubectl"
            | "make"
            | "just"
            | "pip"
            | "pip3"
            | "uv"
            | "poetry"
            | "gh"
            | "systemctl"
            | "apt"
            | "apt-get"
            | "brew"
            | "dotnet"
            | "mvn"
            | "gradle"
            | "rustup"
            | "terraform"
    );
    if let Some(sub) = k.get(1).filter(|_| subcommands) {
        if !sub.starts_with('-')
            && !sub.starts_with('\0')
            && !sub.contains('/')
            && sub
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        {
            words.push(sub.clone());
        }
    }
    // Never offer a rule that would be refused (`bash`, `python3`).
    allows_everything(&words).is_none().then(|| words.join(" "))
}
