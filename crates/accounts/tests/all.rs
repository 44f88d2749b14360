//! The real OS secret store: the Secret Service over D-Bus (CI runs this under
//! `scripts/lib/with-keyring.sh`: its own bus and an unlocked GNOME Keyring), and what
//! happens when none answers.

use std::sync::Arc;

use weft_accounts::{Accounts, Secret, SecretServiceStore, SecretStore};
use weft_protocol::{AddAccountRequest, SecretInput, SecretText};

/// Whether a Secret Service answers here. Under `scripts/lib/with-keyring.sh` (which
/// sets `WEFT_IN_KEYRING_SESSION=1`; CI runs these tests so) one must; elsewhere the
/// test is skipped, saying so.
fn bus_or_skip() -> bool {
    match SecretServiceStore.get("weft-test-probe") {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var("WEFT_IN_KEYRING_SESSION").map_or(true, |v| v != "1"),
                "no Secret Service inside scripts/lib/with-keyring.sh: {e}"
            );
            eprintln!("SKIPPED: no Secret Service here ({e})");
            false
        }
    }
}

fn unique(tag: &str) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("weft-test-{tag}-{t:x}-{}", std::process::id())
}

#[test]
fn the_real_secret_service_keeps_gets_and_forgets_a_secret() {
    if !bus_or_skip() {
        return;
    }
    let store = SecretServiceStore;
    let id = unique("entry");
    let value = unique("value");
    store
        .set(&id, &Secret::new(value.clone()))
        .unwrap_or_else(|e| panic!("{e}"));
    let got = store.get(&id).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.as_ref().map(Secret::expose), Some(value.as_str()));
    store.delete(&id).unwrap_or_else(|e| panic!("{e}"));
    assert!(store.get(&id).unwrap_or_else(|e| panic!("{e}")).is_none());
    // Deleting what is not there is no error.
    store.delete(&id).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn an_account_secret_lives_in_the_secret_service_and_not_in_the_database() {
    if !bus_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("weft.db");
    let accounts = Accounts::open(
        dir.path(),
        &db,
        Arc::new(SecretServiceStore),
        weft_drivers::specs_in(dir.path()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let value = unique("sk");
    let account = accounts
        .add(AddAccountRequest {
            agent: "claude".into(),
            kind: "api-key".into(),
            label: "real store".into(),
            secret: Some(SecretInput::Value {
                value: SecretText(value.clone()),
            }),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let got = accounts
        .secret_of(&account)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.as_ref().map(Secret::expose), Some(value.as_str()));
    drop(accounts);
    for entry in std::fs::read_dir(dir.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
    {
        if entry.path().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            assert!(
                !bytes.windows(value.len()).any(|w| w == value.as_bytes()),
                "the secret is in {}",
                entry.path().display()
            );
        }
    }
    let accounts = Accounts::open(
        dir.path(),
        &db,
        Arc::new(SecretServiceStore),
        weft_drivers::specs_in(dir.path()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    accounts
        .remove(&account.id, false)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(SecretServiceStore
        .get(&account.id)
        .unwrap_or_else(|e| panic!("{e}"))
        .is_none());
}

/// Run in a child process whose D-Bus address points nowhere (the environment is the
/// process's own: a child keeps the other tests' bus intact).
#[test]
fn a_missing_secret_service_is_a_clear_error_and_loses_no_record() {
    if std::env::var_os("WEFT_TEST_NO_BUS_CHILD").is_none() {
        let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "a_missing_secret_service_is_a_clear_error_and_loses_no_record",
                "--nocapture",
            ])
            .env("WEFT_TEST_NO_BUS_CHILD", "1")
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/weft-no-bus",
            )
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let accounts = Accounts::open(
        dir.path(),
        &dir.path().join("weft.db"),
        Arc::new(SecretServiceStore),
        weft_drivers::specs_in(dir.path()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let kept = accounts
        .add(AddAccountRequest {
            agent: "gemini".into(),
            kind: "api-key".into(),
            label: "from a variable".into(),
            secret: Some(SecretInput::Env {
                name: "WEFT_TEST_GEMINI_KEY".into(),
            }),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let refused = accounts.add(AddAccountRequest {
        agent: "claude".into(),
        kind: "api-key".into(),
        label: "needs the store".into(),
        secret: Some(SecretInput::Value {
            value: SecretText("sk-not-kept".into()),
        }),
        ..Default::default()
    });
    let e = match refused {
        Ok(a) => panic!("no secret service, yet {a:?} was added"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("secret store is not available"), "{e}");
    assert!(e.contains("--secret-env"), "{e}");
    let listed = accounts.list().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, kept.id);
}

/// Locks the keyring's collections over D-Bus (`org.freedesktop.Secret.Service.Lock`,
/// through `gdbus`). Unlocking asks for the password through a prompt, which a headless
/// keyring cannot show (it answers "dismissed"): the throwaway keyring stays locked.
fn lock_collections() -> Result<(), String> {
    let out = std::process::Command::new("gdbus")
        .args([
            "call",
            "--session",
            "--dest",
            "org.freedesktop.secrets",
            "--object-path",
            "/org/freedesktop/secrets",
            "--method",
            "org.freedesktop.Secret.Service.Lock",
            "['/org/freedesktop/secrets/collection/login', '/org/freedesktop/secrets/aliases/default']",
        ])
        .output()
        .map_err(|e| format!("gdbus: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(())
}

/// The real GNOME Keyring, locked after an account was added: using the account, adding
/// another and removing it each fail with a message saying to unlock the store (or to
/// take the secret from a variable or command), and no record is lost or half-written.
///
/// It runs in a child under a keyring session of its own (`scripts/lib/with-keyring.sh`),
/// so locking it leaves the keyring the other tests use alone.
#[test]
fn a_locked_keyring_is_a_clear_error_and_loses_nothing() {
    if std::env::var_os("WEFT_TEST_LOCK_CHILD").is_none() {
        let have = |p: &str| {
            std::process::Command::new("sh")
                .args(["-c", &format!("command -v {p}")])
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !(have("gnome-keyring-daemon") && have("dbus-run-session") && have("gdbus")) {
            assert!(
                std::env::var("WEFT_IN_KEYRING_SESSION").map_or(true, |v| v != "1"),
                "gnome-keyring-daemon, dbus-run-session and gdbus are needed here"
            );
            eprintln!("SKIPPED: no gnome-keyring-daemon / dbus-run-session / gdbus here");
            return;
        }
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scripts/lib/with-keyring.sh");
        let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
        let out = std::process::Command::new(script)
            .arg(exe)
            .args([
                "--exact",
                "a_locked_keyring_is_a_clear_error_and_loses_nothing",
                "--nocapture",
            ])
            .env("WEFT_TEST_LOCK_CHILD", "1")
            .env_remove("WEFT_IN_KEYRING_SESSION")
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{said}");
        assert!(said.contains("1 passed"), "{said}");
        return;
    }
    if !bus_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let accounts = Accounts::open(
        dir.path(),
        &dir.path().join("weft.db"),
        Arc::new(SecretServiceStore),
        weft_drivers::specs_in(dir.path()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let value = unique("locked-value");
    let before = accounts
        .add(AddAccountRequest {
            agent: "claude".into(),
            kind: "api-key".into(),
            label: "kept before the lock".into(),
            secret: Some(SecretInput::Value {
                value: SecretText(value.clone()),
            }),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    lock_collections().unwrap_or_else(|e| panic!("cannot lock the keyring: {e}"));
    {
        let used = accounts.usable("claude", &before.id);
        let e = match used {
            Ok(_) => panic!("a locked keyring gave the secret"),
            Err(e) => e,
        };
        assert!(e.contains(&before.id), "{e}");
        assert!(e.contains("unlock"), "{e}");
        let added = accounts.add(AddAccountRequest {
            agent: "claude".into(),
            kind: "api-key".into(),
            label: "added while locked".into(),
            secret: Some(SecretInput::Value {
                value: SecretText(unique("never-kept")),
            }),
            ..Default::default()
        });
        let e = match added {
            Ok(_) => panic!("added while locked"),
            Err(e) => e,
        }
        .to_string();
        assert!(e.contains("secret store is not available"), "{e}");
        assert!(e.contains("unlock") && e.contains("--secret-env"), "{e}");
        let removed = accounts.remove(&before.id, false);
        let e = match removed {
            Ok(_) => panic!("removed while locked"),
            Err(e) => e,
        }
        .to_string();
        assert!(e.contains("was kept"), "{e}");
        let listed = accounts.list().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].id, before.id);
        assert_eq!(listed[0].secret, weft_protocol::SecretSource::Store);
    }
}
