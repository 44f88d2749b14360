//! One behaviour's world: a kernel over the driver under test, a working folder, the
//! scripted model; and finding (and killing) the agent's processes by their mark.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use weft_kernel::driver::AgentTurnInput;
use weft_kernel::ports::Accounts;
use weft_kernel::{AgentDriver, Loom};
use weft_protocol::{
    Capabilities, InteractAction, InteractRequest, InteractionKind, InteractionResponse, Phase,
    PromptRequest, UniversalSnapshot,
};

use super::{Behaviour, Harness, ScriptedModel, TURN_TIMEOUT};

pub(crate) struct FixedEnv(Vec<(String, String)>);

impl Accounts for FixedEnv {
    fn resolve(&self, _input: &AgentTurnInput) -> Result<weft_kernel::ports::SpawnAccount, String> {
        Ok(weft_kernel::ports::SpawnAccount {
            env: self.0.clone(),
            ..Default::default()
        })
    }
}

/// One behaviour's world: a kernel over the driver, a workdir, the scripted model.
pub struct World {
    /// The kernel.
    pub loom: Arc<Loom>,
    /// The scripted model.
    pub model: Box<dyn ScriptedModel>,
    /// The agent id.
    pub agent: String,
    /// The driver's capabilities.
    pub caps: Capabilities,
    mark: String,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) state: tempfile::TempDir,
    work: tempfile::TempDir,
}

pub(crate) fn require_binary(h: &dyn Harness, what: &str) -> bool {
    match h.binary() {
        Ok(_) => true,
        Err(why) => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("CI=true and the agent's binary is missing ({what}): {why}");
            }
            eprintln!("SKIPPED {what}: the agent's binary is missing: {why}");
            false
        }
    }
}

fn new_mark() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

impl World {
    /// A world for `behaviour` on a driver that declares capability `cap` (`has` reads
    /// it), or `None` (skipped) when it does not.
    pub async fn start_needing(
        h: &dyn Harness,
        behaviour: Behaviour,
        cap: &str,
        has: fn(&Capabilities) -> bool,
    ) -> Option<World> {
        let w = Self::start(h, behaviour).await?;
        if has(&w.caps) {
            return Some(w);
        }
        eprintln!("SKIPPED: {} does not declare {cap}", w.agent);
        w.close().await;
        None
    }

    /// A world for `behaviour`, or `None` (skipped) when the binary is missing.
    pub async fn start(h: &dyn Harness, behaviour: Behaviour) -> Option<World> {
        if let Some(why) = h.unsupported(behaviour) {
            eprintln!("SKIPPED {behaviour:?}: {why}");
            return None;
        }
        if !require_binary(h, &format!("{behaviour:?}")) {
            return None;
        }
        let model = h.model(behaviour).await;
        let mark = new_mark();
        let mut env = model.env();
        env.push(("WEFT_CONFORMANCE_MARK".into(), mark.clone()));
        let state = tempfile::tempdir().expect("state dir");
        let work = tempfile::tempdir().expect("workdir");
        let driver = h.driver();
        let loom = open_loom(state.path(), driver.clone(), &env);
        Some(World {
            agent: driver.id().to_string(),
            caps: driver.capabilities(),
            loom,
            model,
            mark,
            env,
            state,
            work,
        })
    }

    /// The working folder (canonical).
    pub fn workdir(&self) -> PathBuf {
        self.work.path().canonicalize().expect("workdir")
    }

    /// Starts a turn in a new session (`None`) or an existing one.
    pub async fn prompt(&self, session: Option<&str>, text: &str) -> (String, String) {
        let accepted = self
            .loom
            .prompt(PromptRequest {
                prompt: text.into(),
                agent: Some(self.agent.clone()),
                session_key: session.map(String::from),
                workdir: Some(self.workdir().display().to_string()),
                ..Default::default()
            })
            .await
            .expect("prompt accepted");
        (accepted.session_key, accepted.task_id)
    }

    /// Polls the session's snapshot until `pred` holds (panics after `timeout`).
    pub async fn wait(
        &self,
        key: &str,
        what: &str,
        pred: impl Fn(&UniversalSnapshot) -> bool,
    ) -> UniversalSnapshot {
        wait_on(&self.loom, key, what, TURN_TIMEOUT, pred).await
    }

    /// Waits for turn `task` to end.
    pub async fn finished(&self, key: &str, task: &str) -> UniversalSnapshot {
        self.wait(key, "the turn to end", ended(task)).await
    }

    /// Runs one turn to its end.
    pub async fn turn(&self, session: Option<&str>, text: &str) -> (String, UniversalSnapshot) {
        let (key, task) = self.prompt(session, text).await;
        let snap = self.finished(&key, &task).await;
        (key, snap)
    }

    /// Answers the pending interaction with the choice whose value or label `pick`
    /// selects.
    pub async fn answer(
        &self,
        key: &str,
        kind: InteractionKind,
        pick: impl Fn(&str, &str) -> bool,
    ) {
        let snap = self
            .wait(key, "an interaction", |s| {
                s.interactions.iter().any(|i| i.kind == kind)
            })
            .await;
        let i = snap
            .interactions
            .iter()
            .find(|i| i.kind == kind)
            .expect("interaction");
        let mut answers = BTreeMap::new();
        let mut value = None;
        for q in &i.questions {
            let c = q
                .choices
                .iter()
                .find(|c| pick(&c.value, &c.label))
                .unwrap_or_else(|| panic!("no fitting choice in {i:#?}"));
            answers.insert(q.id.clone(), c.value.clone());
            value.get_or_insert_with(|| c.value.clone());
        }
        self.loom
            .interact(InteractRequest {
                session_key: key.into(),
                prompt_id: i.prompt_id.clone(),
                response: InteractionResponse {
                    action: InteractAction::Select,
                    value,
                    answers,
                    selected: Default::default(),
                    texts: Default::default(),
                },
            })
            .await
            .expect("interact");
    }

    /// Processes carrying this world's mark.
    pub fn marked_pids(&self) -> Vec<i32> {
        marked_pids(&self.mark)
    }

    /// Shuts the kernel down and checks that no process of the agent is left.
    pub async fn close(self) {
        self.loom.shutdown().await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let left = marked_pids(&self.mark);
            if left.is_empty() {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                let names: Vec<String> = left
                    .iter()
                    .map(|pid| {
                        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                        format!("{pid}: {}", cmd.trim())
                    })
                    .collect();
                kill_all(&left);
                panic!("processes left behind after shutdown: {names:#?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        drop(self.state);
    }
}

/// Polls session `key`'s snapshot in `loom` until `pred` holds; panics after `timeout`.
pub(crate) async fn wait_on(
    loom: &Loom,
    key: &str,
    what: &str,
    timeout: Duration,
    pred: impl Fn(&UniversalSnapshot) -> bool,
) -> UniversalSnapshot {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let snap = loom.get_snapshot(key).await.expect("snapshot").snapshot;
        if pred(&snap) {
            return snap;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out waiting for {what}; the snapshot: {snap:#?}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Turn `task` has ended.
pub(crate) fn ended(task: &str) -> impl Fn(&UniversalSnapshot) -> bool + '_ {
    move |s| s.task_id.as_deref() == Some(task) && s.phase == Phase::Done
}

pub(crate) fn open_loom(
    state: &Path,
    driver: Arc<dyn AgentDriver>,
    env: &[(String, String)],
) -> Arc<Loom> {
    Loom::builder(state)
        .driver(driver)
        .accounts(Arc::new(FixedEnv(env.to_vec())))
        .store(weft_store_port::open(&state.join("weft.db")).expect("store"))
        .open()
        .expect("kernel")
}

/// Pids of live (not zombie) processes whose environment holds `WEFT_CONFORMANCE_MARK=mark`.
pub fn marked_pids(mark: &str) -> Vec<i32> {
    let needle = format!("WEFT_CONFORMANCE_MARK={mark}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next())
                == Some("Z");
            !zombie
                && std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
        })
        .collect()
}

pub(crate) fn kill_all(pids: &[i32]) {
    for pid in pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}
