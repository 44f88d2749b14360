//! A stand-in for the kernel in the orphan test (`tests/suite/orphans.rs`): installs
//! a ledger that prints what it is told, starts `sleep 300` through [`GroupChild`]
//! from a runtime worker, prints `child <pid>`, and waits to be killed. Not a tool.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use weft_agent_process::GroupChild;
use weft_proctree::ledger::{self, Ledger};

struct Printing;

impl Ledger for Printing {
    fn started(&self, pid: u32, start_ticks: u64) {
        println!("started {pid} {start_ticks}");
    }
    fn ended(&self, pid: u32) {
        println!("ended {pid}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    ledger::install(Arc::new(Printing));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    rt.block_on(async {
        let sleep = weft_agent_process::find_program("sleep", Some("/usr/bin:/bin".as_ref()))
            .ok_or("no sleep")?;
        let env = vec![("WEFT_PROBE".to_string(), "1".to_string())];
        // Spawned inside a task: on a worker thread, which lives as long as we do.
        let child = tokio::spawn(async move {
            GroupChild::spawn(&sleep, &["300".into()], Path::new("/"), &env)
        })
        .await??;
        println!("child {}", child.pid().ok_or("no pid")?);
        std::io::stdout().flush()?;
        tokio::time::sleep(std::time::Duration::from_secs(600)).await;
        drop(child);
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
