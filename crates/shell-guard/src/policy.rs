//! The permission step for a shell command, in its fixed order: deny rules →
//! classify → sandbox policy → allow rules → mode → confirm.

use crate::rules::{Decision, Rules};
use crate::{Report, Verdict};

/// How much the user lets run without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every command not allowed by a rule asks.
    #[default]
    Ask,
    /// Safe commands run; the rest ask.
    AutoSafe,
    /// Only dangerous commands ask.
    Trusted,
    /// Nothing that is not safe runs.
    Plan,
}

impl Mode {
    /// `ask`, `auto-safe`, `trusted`, `plan`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim() {
            "ask" => Self::Ask,
            "auto-safe" | "auto_safe" | "autosafe" => Self::AutoSafe,
            "trusted" | "auto" => Self::Trusted,
            "plan" => Self::Plan,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ask => "ask",
            Self::AutoSafe => "auto-safe",
            Self::Trusted => "trusted",
            Self::Plan => "plan",
        }
    }
}

/// The step that decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    DenyRule,
    AskRule,
    Sandbox,
    AllowRule,
    Mode,
}

/// What to do with the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Run it (why).
    Run(Step, String),
    /// Ask the user (why).
    Confirm(Step, String),
    /// Refuse it; the reason goes back to the agent.
    Refuse(Step, String),
}

/// What the sandbox a command runs under enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sandbox {
    /// The command runs under an OS sandbox (or the user turned it off on purpose).
    pub on: bool,
    /// The workspace's `.git` and `.weft` are read-only in it (bubblewrap; Landlock
    /// can only grant access, so under it they are writable).
    pub protects_git: bool,
}

/// Decides for `report` under `rules` and `mode`; `sandboxed` is whether the command
/// will run under the OS sandbox (with none, nothing but a safe command or an explicit
/// rule runs without asking: fail closed). The sandbox is taken to keep `.git` read-only.
pub fn decide(report: &Report, rules: &Rules, mode: Mode, sandboxed: bool) -> Outcome {
    decide_under(
        report,
        rules,
        mode,
        Sandbox {
            on: sandboxed,
            protects_git: true,
        },
    )
}

/// [`decide`] with what the sandbox enforces. Under one that leaves `.git` and `.weft`
/// writable (Landlock), any command that is not `safe` asks (after the deny and ask
/// rules, before the allow rules and the mode; refused in plan mode): such a command
/// could plant a hook or a `core.fsmonitor` there, which Weft or git would later run
/// outside the sandbox, without naming the path on its line.
pub fn decide_under(report: &Report, rules: &Rules, mode: Mode, sandbox: Sandbox) -> Outcome {
    let sandboxed = sandbox.on;
    let decision = rules.decide(report);
    if let Decision::Deny(rule) = &decision {
        return Outcome::Refuse(Step::DenyRule, format!("denied by the rule {rule}"));
    }
    if let Decision::Ask(rule) = &decision {
        return Outcome::Confirm(Step::AskRule, format!("the rule {rule} says to ask"));
    }
    if !sandbox.protects_git && report.verdict != Verdict::Safe {
        let why = if report.protected_writes.is_empty() {
            format!(
                "this sandbox (Landlock) cannot keep the workspace's .git and .weft read-only, so a command that is not provably read-only ({}) asks",
                report.verdict.as_str()
            )
        } else {
            let paths: Vec<String> = report
                .protected_writes
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            format!(
                "it writes inside the workspace's .git or .weft ({}), which this sandbox (Landlock) cannot keep read-only",
                paths.join(", ")
            )
        };
        return if mode == Mode::Plan {
            Outcome::Refuse(Step::Sandbox, format!("plan mode: {why}"))
        } else {
            Outcome::Confirm(Step::Sandbox, why)
        };
    }
    let verdict = report.verdict;
    if let Decision::Allow(used) = &decision {
        return Outcome::Run(Step::AllowRule, format!("allowed by {}", used.join(", ")));
    }
    if mode == Mode::Plan {
        return if verdict == Verdict::Safe {
            Outcome::Run(Step::Mode, "read-only, allowed in plan mode".into())
        } else {
            Outcome::Refuse(
                Step::Mode,
                format!(
                    "plan mode: this command is {} and does not run",
                    verdict.as_str()
                ),
            )
        };
    }
    if !sandboxed && verdict != Verdict::Safe && mode != Mode::Ask {
        return Outcome::Confirm(
            Step::Sandbox,
            "no OS sandbox is available, so a command that is not provably read-only asks".into(),
        );
    }
    match (mode, verdict) {
        (Mode::AutoSafe | Mode::Trusted, Verdict::Safe) => {
            Outcome::Run(Step::Mode, "read-only".into())
        }
        (Mode::Trusted, Verdict::Unknown) => Outcome::Run(Step::Mode, "trusted mode".into()),
        _ => Outcome::Confirm(Step::Mode, format!("{} command", verdict.as_str())),
    }
}
