//! The permission step for the `bash` tool: the workspace's and the global rules, the
//! classifier's verdict, the sandbox, the mode, and a confirmation that shows the
//! verdict with its reasons (weft-shell-guard's [`policy::decide`] in that order).

use std::path::{Path, PathBuf};

use serde_json::Value;
use weft_protocol::{
    permission, Choice, CommandRisk, CommandVerdict, InteractAction, Interaction, InteractionKind,
    Question, QuestionType,
};
use weft_shell_guard::policy::{self, Mode, Outcome};
use weft_shell_guard::rules::{self, Rules};
use weft_shell_guard::{classify, Context, Report, Verdict as Risk};

use crate::guard::{Call, GuardCx, Verdict};
use crate::pack::PermissionMode;

/// The answer that writes an allow rule for the command's prefix.
pub use weft_protocol::permission::ALLOW_PREFIX;

/// How shell commands are judged and run in a session.
#[derive(Debug, Clone)]
pub struct ShellFlags {
    /// ask / auto-safe / trusted / plan.
    pub mode: Mode,
    /// Run commands under the OS sandbox (default on).
    pub sandbox: bool,
    /// Let sandboxed commands reach the network.
    pub network: bool,
    /// Where the global rules live.
    pub weft_home: Option<PathBuf>,
}

impl Default for ShellFlags {
    fn default() -> Self {
        Self {
            mode: Mode::Ask,
            sandbox: true,
            network: false,
            weft_home: None,
        }
    }
}

impl ShellFlags {
    /// From `WEFT_NATIVE_PERMISSION` (ask, auto-safe, trusted, plan; the session's
    /// `auto` is trusted), `WEFT_NATIVE_SANDBOX=off`, `WEFT_NATIVE_NETWORK=allow`.
    pub fn from_vars(
        var: &dyn Fn(&str) -> Option<String>,
        weft_home: &Path,
        permission: PermissionMode,
    ) -> Self {
        let mode = var("WEFT_NATIVE_PERMISSION")
            .and_then(|m| Mode::parse(&m))
            .unwrap_or(match permission {
                PermissionMode::Auto => Mode::Trusted,
                PermissionMode::Ask => Mode::Ask,
            });
        let off =
            |v: Option<String>| v.is_some_and(|v| matches!(v.trim(), "off" | "0" | "false" | "no"));
        let on = |v: Option<String>| {
            v.is_some_and(|v| matches!(v.trim(), "allow" | "on" | "1" | "true" | "yes"))
        };
        Self {
            mode,
            sandbox: !off(var("WEFT_NATIVE_SANDBOX")),
            network: on(var("WEFT_NATIVE_NETWORK")),
            weft_home: Some(weft_home.to_path_buf()),
        }
    }

    /// Why this session's commands run without the OS sandbox, when they do: the
    /// session's lasting state (`degraded`), cleared when they run in it again.
    pub fn without_sandbox(&self) -> Option<String> {
        if !self.sandbox {
            return Some(
                "turned off (WEFT_NATIVE_SANDBOX=off): commands run as the user, unconfined".into(),
            );
        }
        let probe = weft_sandbox::probe();
        (probe.mechanism == weft_sandbox::Mechanism::Unavailable).then(|| probe.details.clone())
    }

    /// Whether commands run under the OS sandbox: it is on and a mechanism works here.
    pub fn sandboxed(&self) -> bool {
        self.sandbox && weft_sandbox::probe().mechanism != weft_sandbox::Mechanism::Unavailable
    }

    /// The sandbox a command in `root` runs under, `temp` its private scratch folder
    /// (Weft's home, hidden from it, is `weft_home`, else this process's);
    /// `None` when it is off or no mechanism works here.
    pub fn sandbox_policy(&self, root: &Path, temp: &Path) -> Option<weft_sandbox::Policy> {
        if !self.sandboxed() {
            return None;
        }
        let home = self
            .weft_home
            .clone()
            .unwrap_or_else(weft_kernel::state::global_state_dir);
        let mut p = weft_sandbox::Policy::new(root, temp, &home);
        p.allow_network = self.network;
        Some(p)
    }
}

/// Where the session's private scratch folder is named for the bash tool (the driver
/// sets it to `<state dir>/sandbox-tmp/<session id>`).
pub const SESSION_TMP_VAR: &str = "WEFT_SANDBOX_TMP";

/// Where Weft's home (the session's state folder) is named for the bash tool: the
/// sandbox hides it from commands. Absent: this process's own home.
pub const SESSION_HOME_VAR: &str = "WEFT_SANDBOX_HOME";

/// The sandbox the bash tool runs a command under, from the environment it gives the
/// command (the same settings [`ShellFlags::from_vars`] reads for the guard); `None`
/// when it is off or none works here. Its scratch folder is the session's own
/// (`WEFT_SANDBOX_TMP`), made private here, else one made for this process: never the
/// system `/tmp`. An error when that folder cannot be made (the command must not run).
pub fn sandbox_for(
    env: &[(String, String)],
    root: &Path,
) -> Result<Option<weft_sandbox::Policy>, String> {
    let var = |n: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
    };
    let home = var(SESSION_HOME_VAR)
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .unwrap_or_else(weft_kernel::state::global_state_dir);
    let flags = ShellFlags::from_vars(&var, &home, PermissionMode::Ask);
    if !flags.sandboxed() {
        return Ok(None);
    }
    let temp = match var(SESSION_TMP_VAR).map(PathBuf::from) {
        Some(p) if p.is_absolute() => weft_sandbox::private_temp(&p),
        _ => process_scratch(),
    }
    .map_err(|e| format!("the sandbox's private temp folder cannot be made: {e}"))?;
    Ok(flags.sandbox_policy(root, &temp))
}

fn process_scratch() -> std::io::Result<PathBuf> {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(d) = DIR.get() {
        return Ok(d.clone());
    }
    let made = weft_sandbox::scratch()?.keep();
    Ok(DIR.get_or_init(|| made).clone())
}

fn session_key(line: &str) -> String {
    format!("bash:{line}")
}

/// Weft's verdict on `line`, as a permission request carries it (the desktop shows a
/// dangerous one in red with its reasons; a headless `--yes` refuses it).
pub fn verdict(line: &str, report: &Report) -> CommandVerdict {
    CommandVerdict {
        command: line.to_string(),
        verdict: match report.verdict {
            Risk::Safe => CommandRisk::Safe,
            Risk::Unknown => CommandRisk::Unknown,
            Risk::Dangerous => CommandRisk::Dangerous,
        },
        reasons: report.reasons.clone(),
    }
}

/// The detail a confirmation shows besides the verdict: why it asks, and whether the
/// command runs sandboxed.
pub fn detail(why: &str, sandboxed: bool) -> String {
    let mut s = why.to_string();
    s.push_str(if sandboxed {
        "\nIt runs in the OS sandbox (workspace writable, .git read-only, no network unless allowed)."
    } else {
        "\nIt runs WITHOUT a sandbox."
    });
    s
}

/// The permission step for one `bash` call.
pub async fn permission(call: &Call<'_>, cx: &GuardCx<'_>) -> Verdict {
    let line = call
        .input
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let root = cx.workspace.root();
    let shell = &cx.flags.shell;
    // A workspace not trusted only restricts: its deny and ask rules hold, its allow
    // rules do not.
    let trusted = cx.flags.workspace_trusted;
    let rules = match Rules::load(root, shell.weft_home.as_deref(), trusted) {
        Ok(r) => r,
        Err(e) => {
            return Verdict::Deny(format!(
                "the permission rules cannot be used, so no command runs until they are fixed: {e}"
            ))
        }
    };
    // A rule the file could not give (a bare `*`, a line of several commands) is
    // named with its line wherever the decision is shown; the file's others hold.
    let skipped = (!rules.problems.is_empty()).then(|| {
        let lines: Vec<String> = rules.problems.iter().map(ToString::to_string).collect();
        format!(" (rules not taken: {})", lines.join("; "))
    });
    let skipped = skipped.unwrap_or_default();
    let report = classify(&line, &Context::new(root));
    // Turned off by the user is a choice they made; only a sandbox that is wanted but
    // missing makes every unproven command ask (fail closed).
    let sandboxed = shell.sandboxed() || !shell.sandbox;
    let mode = if cx
        .flags
        .plan_mode
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        Mode::Plan
    } else {
        shell.mode
    };
    // Only bubblewrap keeps .git and .weft read-only; under Landlock a command that
    // names a path in them as a write target asks (a sandbox turned off on purpose is
    // the user's choice).
    let protects_git =
        !shell.sandbox || weft_sandbox::probe().mechanism != weft_sandbox::Mechanism::Landlock;
    let sandbox = policy::Sandbox {
        on: sandboxed,
        protects_git,
    };
    let why = match policy::decide_under(&report, &rules, mode, sandbox) {
        Outcome::Run(..) => return Verdict::Allow,
        Outcome::Refuse(_, why) => return Verdict::Deny(format!("{why}{skipped}")),
        Outcome::Confirm(step, why) => {
            if step != policy::Step::AskRule
                && cx.flags.allowed.lock().contains(&session_key(&line))
            {
                return Verdict::Allow;
            }
            format!("{why}{skipped}")
        }
    };
    // Never "always allow" a dangerous line, nor write a rule a folder not trusted
    // would not take.
    let prefix =
        rules::suggest_prefix(&report).filter(|_| trusted && report.verdict != Risk::Dangerous);
    let mut choices = vec![
        Choice {
            label: "Allow once".into(),
            value: permission::ALLOW.into(),
        },
        Choice {
            label: "Allow this command for the session".into(),
            value: permission::ALLOW_SESSION.into(),
        },
    ];
    // A rule written into a workspace not trusted would not count.
    if let Some(p) = prefix.as_ref() {
        choices.push(Choice {
            label: format!("Always allow `{p}` in this workspace"),
            value: ALLOW_PREFIX.into(),
        });
    }
    choices.push(Choice {
        label: "Deny".into(),
        value: permission::DENY.into(),
    });
    let answer = cx
        .ctx
        .ask_user(Interaction {
            verdict: Some(verdict(&line, &report)),
            prompt_id: String::new(),
            kind: InteractionKind::Permission,
            title: format!("Run `{}`?", first_line(&line)),
            detail: Some(detail(&why, sandboxed)),
            tool_name: Some(call.name.into()),
            tool_input: Some(call.input.clone()),
            questions: vec![Question {
                id: "decision".into(),
                text: format!("{} command: allow it?", report.verdict.as_str()),
                kind: QuestionType::Select,
                choices,
                multiple: false,
                free_text: false,
            }],
        })
        .await;
    let value = answer.picked();
    match (answer.action, value) {
        (InteractAction::Select, Some(permission::ALLOW)) => Verdict::Allow,
        (InteractAction::Select, Some(permission::ALLOW_SESSION)) => {
            cx.flags.allowed.lock().insert(session_key(&line));
            Verdict::Allow
        }
        (InteractAction::Select, Some(ALLOW_PREFIX)) => match prefix {
            Some(p) => match add_allow(root, shell.weft_home.as_deref(), &p) {
                Ok(()) => Verdict::Allow,
                Err(e) => Verdict::Deny(format!(
                    "the rule `{p}` could not be saved ({e}); the command did not run"
                )),
            },
            None => Verdict::Deny("no prefix to allow; the command did not run".into()),
        },
        (InteractAction::Cancel, _) => {
            Verdict::Deny("the permission request was cancelled; the command did not run".into())
        }
        _ => Verdict::Deny("the user denied this command; it did not run".into()),
    }
}

/// Writes the workspace rule the user chose; the folder, trusted before, stays trusted
/// (Weft's own write moves the trusted hash along).
fn add_allow(root: &Path, weft_home: Option<&Path>, prefix: &str) -> Result<(), String> {
    let before = weft_home.map(|h| weft_workspace::trust::status(h, root));
    rules::add_allow(root, prefix).map_err(|e| e.to_string())?;
    if let (Some(home), Some(before)) = (weft_home, before) {
        weft_workspace::trust::after_own_write(home, root, &before).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    if l.chars().count() > 100 || s.lines().nth(1).is_some() {
        format!("{}…", l.chars().take(100).collect::<String>())
    } else {
        l.to_string()
    }
}
