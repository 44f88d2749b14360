//! What every session's runner shares with the hub: the ports, the plugins, the
//! hub-wide patch channel and the kernel's settings. Its own module so the runner
//! depends on it and not on the hub that owns the runners.

use std::path::PathBuf;
use std::sync::Arc;

use crate::checkpoints::Checkpointer;
use crate::feed::Feed;
use crate::ports::{Accounts, Catalog, InteractionHandler, SessionStore, ToolProvider};

/// What every runner shares: the ports and the hub-wide patch channel.
pub(crate) struct KernelEnv {
    pub store: Arc<dyn SessionStore>,
    pub accounts: Arc<dyn Accounts>,
    pub tools: Arc<dyn ToolProvider>,
    pub catalog: Arc<dyn Catalog>,
    pub interactions: Arc<dyn InteractionHandler>,
    pub checkpoints: Arc<dyn Checkpointer>,
    pub plugins: crate::plugin::Plugins,
    pub state_dir: PathBuf,
    /// Every agent's own skills folders (from the specs), for `list_skills`' conflicts.
    pub skills_dirs: Vec<weft_agent_spec::spec::SkillsDir>,
    pub all_patches: Feed,
    /// Set by `shutdown`: no new turn starts.
    pub closing: std::sync::atomic::AtomicBool,
    /// How long a session may sit idle before its agent process (if the driver keeps
    /// one) is closed; the next prompt resumes the agent session in a new one.
    pub idle_close: Option<std::time::Duration>,
    /// How long a question waits for an answer before it expires (`None`: forever).
    pub interaction_timeout: Option<std::time::Duration>,
    /// Notified whenever a runner's worker ends (its session has nothing left to run),
    /// so `shutdown` waits without polling.
    pub settled: tokio::sync::Notify,
}

/// A new turn's id.
pub(crate) fn new_task_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
