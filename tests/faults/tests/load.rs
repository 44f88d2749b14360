//! A short load run (`scripts/load.sh` makes long ones): 8 echo sessions at full speed
//! and 2 real claude sessions at once, two clients following all, one reading nothing
//! until the end; every snapshot agrees with the daemon's and the store's, and the
//! client that read nothing was resynced rather than queued for.

use std::time::Duration;

use weft_faults::load::{self, LoadConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_at_once_end_with_the_stores_snapshots_and_a_slow_client_resynced() {
    let weft = weft_faults::procs::weft_bin().unwrap_or_else(|e| panic!("{e}"));
    let config = LoadConfig {
        echo: 8,
        claude: 2,
        duration: Duration::from_secs(8),
        weft,
    };
    let r = load::run(&config).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(r.unequal.is_empty(), "{:?}", r.unequal);
    assert_eq!(r.equal, r.sessions);
    assert!(r.turns >= r.sessions, "{r:?}");
    assert!(
        r.idle_resyncs >= 1,
        "the idle client was never resynced: {r:?}"
    );
}
