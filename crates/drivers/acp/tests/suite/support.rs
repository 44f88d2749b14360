//! Shared test plumbing: a TurnSink that records and answers, isolated homes for the
//! real agents pointed at the scripted model servers, and finding the binaries (or
//! saying loudly why a test skipped).

use std::path::PathBuf;
use std::time::Duration;

use weft_acp::{AcpDriver, AcpSpec};

use weft_kernel::driver::AgentTurnInput;
use weft_testkit::sink::ci;
pub use weft_testkit::sink::{run, run_with, TestSink};

/// A preset's real binary, or None after printing why the test is skipped. Under
/// CI=true a missing binary fails the test instead.
pub fn preset_binary(id: &str) -> Option<(AcpSpec, PathBuf)> {
    let spec = weft_acp::config::presets()
        .into_iter()
        .find(|s| s.id == id)
        .expect("preset");
    match spec.find_binary(&|n| std::env::var(n).ok()) {
        Ok(p) => Some((spec, p)),
        Err(why) => {
            if ci() {
                panic!("CI=true and the real `{id}` binary is missing: {why}");
            }
            eprintln!("SKIPPED (no {id} binary): {why}");
            None
        }
    }
}

/// The pinned Claude Code that claude-agent-acp should run (the one the claude
/// driver's tests use), when installed.
pub fn claude_code_executable() -> Option<PathBuf> {
    weft_acp::config::find_program("claude", std::env::var_os("PATH").as_deref())
        .and_then(|p| p.canonicalize().ok())
}

/// A driver for `spec` whose stop grace is short.
pub fn driver(mut spec: AcpSpec) -> AcpDriver {
    spec.stop_grace = Duration::from_secs(5);
    AcpDriver::new(spec)
}

/// An isolated home and working folder.
pub struct Home {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    pub fn workdir(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    pub fn input(&self, key: &str, prompt: &str, env: Vec<(String, String)>) -> AgentTurnInput {
        AgentTurnInput {
            session_key: key.into(),
            task_id: format!("task-{prompt}"),
            prompt: prompt.into(),
            workdir: self.workdir(),
            env,
            state_dir: self.home.path().join(".weft"),
            ..Default::default()
        }
    }
}

/// Settings for the Gemini CLI in `home`: API-key auth (needed when the base URL is
/// overridden), no usage statistics.
pub fn gemini_home(home: &std::path::Path, extra: serde_json::Value) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let mut settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false}
    });
    if let (Some(s), Some(e)) = (settings.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// The Gemini CLI's environment: isolated HOME, the scripted server.
pub fn gemini_env(home: &std::path::Path, base_url: &str) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        ("GEMINI_API_KEY".into(), "test-key".into()),
        ("GOOGLE_GEMINI_BASE_URL".into(), base_url.into()),
        ("GEMINI_CLI_NO_RELAUNCH".into(), "true".into()),
    ]
}

/// claude-agent-acp's environment: isolated HOME, the scripted server, the pinned
/// Claude Code.
pub fn claude_env(home: &std::path::Path, base_url: &str) -> Vec<(String, String)> {
    weft_testkit::claude_code::onboarded(home);
    let mut env = weft_testkit::claude_code::env(home, base_url);
    env.push(("CLAUDE_CODE_ENABLE_TASKS".into(), "0".into()));
    if let Some(exe) = claude_code_executable() {
        env.push(("CLAUDE_CODE_EXECUTABLE".into(), exe.display().to_string()));
    }
    env
}
