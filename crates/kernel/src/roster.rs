//! The kernel's drivers: those registered when it was built, and those a source may
//! change while it runs (the user's ACP agents in `$WEFT_HOME/agents.json`, which are
//! data, so adding one needs no restart).
//!
//! A driver holds live agent processes. One whose definition changed or went away is
//! no longer found for new turns, but the sessions that hold it keep it, and it is
//! still shut down with the kernel, so no process outlives the daemon.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::driver::AgentDriver;

/// Drivers that may change while the kernel runs.
pub trait DriverSource: Send + Sync {
    /// Its drivers when they changed since the last call (the first call: always),
    /// else `None`. Called on lookups, so it must be cheap when nothing changed (a stat
    /// of a file). A driver whose definition is unchanged must be the same instance.
    fn changed(&self) -> Option<Vec<Arc<dyn AgentDriver>>>;
}

pub(crate) struct Roster {
    /// Registered at build time; a source's driver never replaces one of these.
    fixed: BTreeMap<String, Arc<dyn AgentDriver>>,
    source: Option<Arc<dyn DriverSource>>,
    /// Every driver found now: the fixed ones and the source's latest.
    live: RwLock<BTreeMap<String, Arc<dyn AgentDriver>>>,
    /// The source's drivers that were replaced or removed, for shutdown.
    retired: Mutex<Vec<Arc<dyn AgentDriver>>>,
    /// Counts the changes, so what was learnt of the drivers (their info) can tell it
    /// is stale.
    generation: AtomicU64,
}

impl Roster {
    pub(crate) fn new(
        drivers: Vec<Arc<dyn AgentDriver>>,
        source: Option<Arc<dyn DriverSource>>,
    ) -> Self {
        let fixed: BTreeMap<String, Arc<dyn AgentDriver>> = drivers
            .into_iter()
            .map(|d| (d.id().to_string(), d))
            .collect();
        let roster = Self {
            live: RwLock::new(fixed.clone()),
            fixed,
            source,
            retired: Mutex::new(Vec::new()),
            generation: AtomicU64::new(0),
        };
        roster.refresh();
        roster
    }

    /// Takes the source's drivers in if they changed.
    pub(crate) fn refresh(&self) {
        let Some(fresh) = self.source.as_ref().and_then(|s| s.changed()) else {
            return;
        };
        let mut next = self.fixed.clone();
        for d in fresh {
            let id = d.id().to_string();
            if !self.fixed.contains_key(&id) {
                next.insert(id, d);
            }
        }
        let mut live = self.live.write();
        let mut retired = self.retired.lock();
        for (id, old) in live.iter() {
            let kept = next.get(id).is_some_and(|new| Arc::ptr_eq(new, old));
            if !kept && !retired.iter().any(|r| Arc::ptr_eq(r, old)) {
                retired.push(old.clone());
            }
        }
        let changed = live.len() != next.len()
            || live
                .iter()
                .any(|(id, d)| !next.get(id).is_some_and(|n| Arc::ptr_eq(n, d)));
        *live = next;
        if changed {
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// How many times the drivers found changed.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The driver under `id`, looking at the source again if there is none.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<dyn AgentDriver>> {
        if let Some(d) = self.live.read().get(id) {
            return Some(d.clone());
        }
        self.refresh();
        self.live.read().get(id).cloned()
    }

    /// Every driver found now, by id.
    pub(crate) fn all(&self) -> Vec<Arc<dyn AgentDriver>> {
        self.live.read().values().cloned().collect()
    }

    /// Every driver that may hold a process: those found now and those retired.
    pub(crate) fn to_shut_down(&self) -> Vec<Arc<dyn AgentDriver>> {
        let mut all = self.all();
        all.extend(self.retired.lock().iter().cloned());
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{AgentTurnInput, DriverContext, DriverResult};
    use async_trait::async_trait;
    use std::sync::atomic::AtomicUsize;
    use weft_protocol::{AgentInfo, Capabilities};

    struct Named(&'static str, Arc<AtomicUsize>);

    #[async_trait]
    impl AgentDriver for Named {
        fn id(&self) -> &str {
            self.0
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities::default()
        }
        async fn info(&self) -> AgentInfo {
            AgentInfo {
                id: self.0.into(),
                name: self.0.into(),
                installed: true,
                version: None,
                capabilities: Capabilities::default(),
                problem: None,
                facts: Default::default(),
            }
        }
        async fn run(&self, _input: AgentTurnInput, _ctx: DriverContext) -> DriverResult {
            DriverResult::ok()
        }
        async fn shutdown(&self) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Hands out what the test put in, once.
    #[derive(Default)]
    struct Next(Mutex<Option<Vec<Arc<dyn AgentDriver>>>>);

    impl DriverSource for Next {
        fn changed(&self) -> Option<Vec<Arc<dyn AgentDriver>>> {
            self.0.lock().take()
        }
    }

    #[tokio::test]
    async fn a_sources_driver_comes_and_goes_and_is_still_shut_down_and_never_replaces_a_fixed_one()
    {
        let shut = Arc::new(AtomicUsize::new(0));
        let d = |id| Arc::new(Named(id, shut.clone())) as Arc<dyn AgentDriver>;
        let source = Arc::new(Next::default());
        let roster = Roster::new(vec![d("echo")], Some(source.clone()));
        assert!(roster.get("mine").is_none());

        let mine = d("mine");
        *source.0.lock() = Some(vec![mine.clone(), d("echo")]);
        // A miss looks at the source again; the fixed echo stays the one registered.
        let found = roster
            .get("mine")
            .unwrap_or_else(|| panic!("mine not found"));
        assert!(Arc::ptr_eq(&found, &mine));
        assert_eq!(roster.all().len(), 2);
        assert_eq!(roster.generation(), 1);

        // The same instance handed out again is no change.
        *source.0.lock() = Some(vec![mine.clone()]);
        roster.refresh();
        assert_eq!(roster.generation(), 1);

        *source.0.lock() = Some(vec![d("yours")]);
        roster.refresh();
        let ids: Vec<String> = roster.all().iter().map(|d| d.id().to_string()).collect();
        assert_eq!(ids, ["echo", "yours"]);
        assert_eq!(roster.generation(), 2);
        // Gone from the list, not from shutdown: it may still hold a process.
        let everyone = roster.to_shut_down();
        assert!(everyone.iter().any(|d| Arc::ptr_eq(d, &mine)));
        futures::future::join_all(everyone.iter().map(|d| d.shutdown())).await;
        assert_eq!(shut.load(Ordering::SeqCst), 3);
    }
}
