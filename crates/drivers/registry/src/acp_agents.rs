//! The ACP agents as a source the kernel looks at again: the presets and the user's own
//! in `<state_dir>/agents.json`, re-read when that file changes, so an agent added
//! there is in `weft agents` and the app without a restart.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use weft_acp::{AcpDriver, AcpSpec};
use weft_kernel::{AgentDriver, DriverSource};

/// What says agents.json changed: its modification time, size and inode (none: absent).
type Stamp = Option<(std::time::SystemTime, u64, u64)>;

/// A driver with its whole definition, to tell whether an entry changed.
type Defined = (String, Arc<dyn AgentDriver>);

/// The ACP agents of a state folder. An agent whose definition did not change keeps
/// its driver, and so its live sessions.
pub struct AcpAgents {
    state_dir: PathBuf,
    /// Ids of the built-in agents: an ACP agent cannot take one.
    taken: Vec<String>,
    /// The last reading: the file's stamp, and each driver with its definition.
    seen: Mutex<Option<(Stamp, Vec<Defined>)>>,
}

impl AcpAgents {
    /// The ACP agents of `state_dir`, none of them taking an id in `taken`.
    pub fn new(state_dir: &Path, taken: Vec<String>) -> Self {
        Self {
            state_dir: state_dir.to_path_buf(),
            taken,
            seen: Mutex::new(None),
        }
    }

    fn stamp(&self) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(self.state_dir.join("agents.json")).ok()?;
        Some((meta.modified().ok()?, meta.len(), meta.ino()))
    }
}

/// gemini --acp leaves tool output out of its updates and has a folder-trust switch of
/// its own: both as the Gemini driver handles them.
fn adjust(spec: &mut AcpSpec) {
    if spec.id == "gemini-acp" {
        weft_gemini::wire_preset(spec);
    }
}

impl DriverSource for AcpAgents {
    fn changed(&self) -> Option<Vec<Arc<dyn AgentDriver>>> {
        let stamp = self.stamp();
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.as_ref().is_some_and(|(s, _)| *s == stamp) {
            return None;
        }
        let before = seen.take().map(|(_, d)| d).unwrap_or_default();
        let now: Vec<(String, Arc<dyn AgentDriver>)> =
            weft_acp::specs_with(&self.state_dir, adjust)
                .into_iter()
                .filter(|s| !self.taken.contains(&s.id))
                .map(|spec| {
                    // Its whole definition (functions by address, stable in one process).
                    let definition = format!("{spec:?}");
                    let driver = before
                        .iter()
                        .find(|(d, _)| *d == definition)
                        .map(|(_, driver)| driver.clone())
                        .unwrap_or_else(|| Arc::new(AcpDriver::new(spec)));
                    (definition, driver)
                })
                .collect();
        let drivers = now.iter().map(|(_, d)| d.clone()).collect();
        *seen = Some((stamp, now));
        Some(drivers)
    }
}
