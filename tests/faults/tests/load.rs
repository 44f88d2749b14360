//! A short load run (`scripts/load.sh` makes long ones): 8 echo sessions at full speed
//! and 2 real claude sessions at once, two clients following all, one reading nothing
//! until the end; every snapshot agrees with the daemon's and the store's, and the
//! client that read nothing was resynced rather than queued for, and had its requests
//! answered meanwhile.

use std::time::Duration;

use weft_faults::load::{self, LoadConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_at_once_end_with_the_stores_snapshots_and_a_slow_client_resynced() {
    let weft = weft_faults::procs::weft_bin().unwrap_or_else(|e| panic!("{e}"));
    let config = LoadConfig {
        echo: 8,
        claude: 2,
        duration: Duration::from_secs(8),
        // The idle client's queues hold ~5,000 events (4,096 in the client, 1,024 frames
        // in the daemon): 20,000 patches overflow them at any load (a CI run at load
        // 27 folded 8,700 in its 8 s and the idle client was never resynced).
        min_patches: 20_000,
        weft,
    };
    let r = load::run(&config).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(r.unequal.is_empty(), "{:?}", r.unequal);
    assert_eq!(r.equal, r.sessions);
    assert!(r.turns >= r.sessions, "{r:?}");
    assert!(
        r.idle_replies >= 1,
        "the idle client made no request meanwhile: {r:?}"
    );
    assert!(
        r.idle_resyncs >= 1,
        "the idle client was never resynced: {r:?}"
    );
}
