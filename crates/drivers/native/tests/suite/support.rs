//! Shared helpers: a driver with short retry waits, and environments pointing it at a
//! scripted server.

use std::time::Duration;

use weft_native::model::RetryPolicy;
use weft_native::{Config, NativeDriver};

/// A driver whose retries wait milliseconds, reading no process environment.
pub fn driver() -> NativeDriver {
    NativeDriver::with_config(fast_config())
}

/// The config of [`driver`].
pub fn fast_config() -> Config {
    Config {
        home: Some(std::env::temp_dir().join("weft-native-test-no-home")),
        process_env: false,
        retry: RetryPolicy {
            retries: 3,
            base: Duration::from_millis(20),
            max_wait: Duration::from_secs(5),
        },
        max_steps: 50,
    }
}

/// The spawn environment for an endpoint.
pub fn endpoint_env(protocol: &str, base_url: &str, permission: &str) -> Vec<(String, String)> {
    vec![
        ("WEFT_NATIVE_PROTOCOL".into(), protocol.into()),
        ("WEFT_NATIVE_BASE_URL".into(), base_url.into()),
        ("WEFT_NATIVE_API_KEY".into(), "sk-test".into()),
        ("WEFT_NATIVE_MODEL".into(), "scripted-model".into()),
        ("WEFT_NATIVE_PERMISSION".into(), permission.into()),
    ]
}

use std::path::Path;
use std::sync::Arc;

use weft_kernel::{AgentDriver, AgentTurnInput, DriverResult};
use weft_protocol::UniversalSnapshot;
use weft_testkit::sink::{self, TestSink};

/// A state folder and a workspace for direct driver runs.
pub struct Dirs {
    pub state: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Dirs {
    pub fn new() -> Self {
        Self {
            state: tempfile::tempdir().expect("state"),
            work: tempfile::tempdir().expect("work"),
        }
    }

    pub fn work(&self) -> std::path::PathBuf {
        self.work.path().canonicalize().expect("work")
    }

    /// A turn's input.
    pub fn input(
        &self,
        env: &[(String, String)],
        prompt: &str,
        session: Option<&str>,
    ) -> AgentTurnInput {
        AgentTurnInput {
            session_key: "native:test".into(),
            task_id: uuid_like(),
            prompt: prompt.into(),
            workdir: self.work(),
            session_id: session.map(String::from),
            env: env.to_vec(),
            state_dir: self.state.path().to_path_buf(),
            ..Default::default()
        }
    }
}

impl Dirs {
    /// A turn's input in a workspace the user trusted: its `.weft/` hooks, settings,
    /// packs, skills, MCP servers and allow rules count.
    pub fn trusted_input(
        &self,
        env: &[(String, String)],
        prompt: &str,
        session: Option<&str>,
    ) -> AgentTurnInput {
        AgentTurnInput {
            workspace_trusted: true,
            ..self.input(env, prompt, session)
        }
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!("task-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// Runs one turn directly (no kernel), every interaction answered by `answer`.
pub async fn run_turn(
    driver: &dyn AgentDriver,
    input: AgentTurnInput,
) -> (DriverResult, UniversalSnapshot, Arc<TestSink>) {
    let sink = TestSink::new();
    let (r, s) = sink::run(driver, input, &sink).await;
    (r, s, sink)
}

/// Writes `text` to `dir/name` (parents made).
pub fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}
