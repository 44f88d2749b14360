//! Shared test plumbing: a TurnSink that records and answers, isolated homes for the
//! real agents pointed at the scripted model servers, and finding the binaries (or
//! saying loudly why a test skipped).

use std::path::PathBuf;
use std::time::Duration;

use weft_kernel::driver::AgentTurnInput;
use weft_testkit::sink::ci;
pub use weft_testkit::sink::{run, run_with, TestSink};

/// The real `gemini`, or None after printing why the test is skipped. Under CI=true a
/// missing binary fails the test instead.
pub fn gemini_bin() -> Option<PathBuf> {
    match weft_gemini::acp_spec().find_binary(&|n| std::env::var(n).ok()) {
        Ok(p) => Some(p),
        Err(why) => {
            if ci() {
                panic!("CI=true and the real Gemini CLI is missing: {why}");
            }
            eprintln!("SKIPPED (no gemini binary): {why}");
            None
        }
    }
}

/// A driver with a short stop grace.
pub fn driver() -> weft_gemini::GeminiDriver {
    let cfg = weft_gemini::Config {
        stop_grace: Duration::from_secs(5),
        ..Default::default()
    };
    let mut spec = weft_gemini::acp_spec();
    spec.stop_grace = cfg.stop_grace;
    weft_gemini::GeminiDriver::with(spec, cfg)
}

/// An isolated home (with Gemini's settings) and working folder.
pub struct Home {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Home {
    pub fn new(settings: serde_json::Value) -> Self {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".gemini");
        std::fs::create_dir_all(&dir).unwrap();
        let mut all = serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false}
        });
        if let (Some(s), Some(e)) = (all.as_object_mut(), settings.as_object()) {
            for (k, v) in e {
                s.insert(k.clone(), v.clone());
            }
        }
        std::fs::write(dir.join("settings.json"), all.to_string()).unwrap();
        Self {
            home,
            work: tempfile::tempdir().unwrap(),
        }
    }

    pub fn workdir(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    /// The CLI's environment: isolated HOME, the scripted server.
    pub fn env(&self, base_url: &str) -> Vec<(String, String)> {
        vec![
            ("HOME".into(), self.home.path().display().to_string()),
            ("GEMINI_API_KEY".into(), "test-key".into()),
            ("GOOGLE_GEMINI_BASE_URL".into(), base_url.into()),
            ("GEMINI_CLI_NO_RELAUNCH".into(), "true".into()),
        ]
    }

    pub fn input(&self, key: &str, prompt: &str, base_url: &str) -> AgentTurnInput {
        AgentTurnInput {
            session_key: key.into(),
            task_id: format!("task-{prompt}"),
            prompt: prompt.into(),
            workdir: self.workdir(),
            env: self.env(base_url),
            state_dir: self.home.path().join(".weft"),
            ..Default::default()
        }
    }
}
