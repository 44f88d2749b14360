//! A real Synapse on loopback for the tests: installed from PyPI into a venv
//! (`WEFT_SYNAPSE_VENV`, default `<repo>/.tools/synapse`, which scripts/setup.sh
//! makes), SQLite, no federation key servers, users registered through the shared
//! secret. One server per test binary, started on first use; it dies with the test
//! process (`setpriv --pdeathsig`, from a thread that lives as long as the process).
//!
//! Its message limit stays at Synapse's default (about one event per 5 s after a
//! burst of 10); logins, registrations, joins and invites are lifted, since every
//! test logs in from the same address. A test lifts one user's message limit through
//! the admin API ([`Synapse::lift_limit`]).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub struct Synapse {
    pub url: String,
    dir: PathBuf,
    venv: PathBuf,
    admin_token: String,
}

static SERVER: OnceLock<Result<Synapse, String>> = OnceLock::new();

fn venv() -> PathBuf {
    std::env::var_os("WEFT_SYNAPSE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.tools/synapse"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"))
}

/// The shared server, started on first use; Err says why there is none.
pub fn server() -> Result<&'static Synapse, String> {
    SERVER.get_or_init(start).as_ref().map_err(Clone::clone)
}

fn start() -> Result<Synapse, String> {
    let venv = venv();
    let python = venv.join("bin/python");
    if !python.is_file() {
        return Err(format!(
            "no Synapse venv at {} (scripts/setup.sh makes it; or set WEFT_SYNAPSE_VENV)",
            venv.display()
        ));
    }
    let dir = std::env::temp_dir().join(format!("weft-synapse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let config = dir.join("homeserver.yaml");
    let generated = Command::new(&python)
        .args([
            "-m",
            "synapse.app.homeserver",
            "--server-name",
            "localhost",
            "--config-path",
        ])
        .arg(&config)
        .arg("--data-directory")
        .arg(&dir)
        .args(["--generate-config", "--report-stats=no"])
        .output()
        .map_err(|e| format!("generating Synapse's config: {e}"))?;
    if !generated.status.success() {
        return Err(format!(
            "generating Synapse's config: {}",
            String::from_utf8_lossy(&generated.stderr)
        ));
    }
    let port = free_port();
    // Rewritten with a YAML tool: the generated file ends inside a comment.
    let patch = format!(
        r#"
import yaml
p = {config:?}
c = yaml.safe_load(open(p))
c["listeners"] = [{{"port": {port}, "bind_addresses": ["127.0.0.1"], "type": "http", "tls": False,
                   "x_forwarded": False, "resources": [{{"names": ["client"], "compress": False}}]}}]
c["trusted_key_servers"] = []
c["enable_registration"] = False
c["registration_shared_secret"] = "weft-test-shared-secret"
big = {{"per_second": 1000, "burst_count": 1000}}
c["rc_login"] = {{"address": big, "account": big, "failed_attempts": big}}
c["rc_registration"] = big
c["rc_joins"] = {{"local": big, "remote": big}}
c["rc_invites"] = {{"per_room": big, "per_user": big, "per_issuer": big}}
c["rc_key_requests"] = big
c["rc_3pid_validation"] = big
c["media_store_path"] = {media:?}
yaml.safe_dump(c, open(p, "w"))
"#,
        config = config.display().to_string(),
        media = dir.join("media").display().to_string(),
    );
    let patched = Command::new(&python)
        .args(["-c", &patch])
        .output()
        .map_err(|e| e.to_string())?;
    if !patched.status.success() {
        return Err(format!(
            "patching Synapse's config: {}",
            String::from_utf8_lossy(&patched.stderr)
        ));
    }
    // Spawned from a thread that never ends, so the parent-death signal fires only
    // when the test process goes.
    let (tx, rx) = std::sync::mpsc::channel();
    let spawn_python = python.clone();
    let spawn_config = config.clone();
    // Its log config names a relative homeserver.log: in its own folder, not the repo.
    let spawn_dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let child = Command::new("setpriv")
            .current_dir(&spawn_dir)
            .args(["--pdeathsig", "KILL", "--"])
            .arg(&spawn_python)
            .args(["-m", "synapse.app.homeserver", "-c"])
            .arg(&spawn_config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let _ = tx.send(child.map(|c| c.id()).map_err(|e| e.to_string()));
        loop {
            std::thread::park();
        }
    });
    rx.recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("starting Synapse: {e}"))?;
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if http("GET", &format!("{url}/_matrix/client/versions"), None, None).is_ok() {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "Synapse did not answer within 60 s (its log: {})",
                dir.join("homeserver.log").display()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut server = Synapse {
        url,
        dir,
        venv,
        admin_token: String::new(),
    };
    server.register("weftadmin", "admin-password", true)?;
    server.admin_token = server.login_token("weftadmin", "admin-password")?;
    Ok(server)
}

impl Synapse {
    /// Registers `user` with `password` (the password through a file, not argv).
    pub fn register(&self, user: &str, password: &str, admin: bool) -> Result<(), String> {
        let file = self.dir.join(format!("pw-{user}"));
        std::fs::write(&file, password).map_err(|e| e.to_string())?;
        let out = Command::new(self.venv.join("bin/register_new_matrix_user"))
            .arg("-c")
            .arg(self.dir.join("homeserver.yaml"))
            .args(["-u", user, "--password-file"])
            .arg(&file)
            .arg(if admin { "-a" } else { "--no-admin" })
            .arg("--exists-ok")
            .arg(&self.url)
            .output()
            .map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&file);
        if !out.status.success() {
            return Err(format!(
                "registering {user}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    fn login_token(&self, user: &str, password: &str) -> Result<String, String> {
        let body = json!({"type": "m.login.password", "identifier": {"type": "m.id.user", "user": user}, "password": password});
        let v = http(
            "POST",
            &format!("{}/_matrix/client/v3/login", self.url),
            None,
            Some(&body),
        )?;
        v["access_token"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| format!("no token in {v}"))
    }

    /// Lifts `mxid`'s message limit (0 = unlimited), as an admin of a homeserver one
    /// runs can.
    pub fn lift_limit(&self, mxid: &str) {
        let url = format!(
            "{}/_synapse/admin/v1/users/{mxid}/override_ratelimit",
            self.url
        );
        let body = json!({"messages_per_second": 0, "burst_count": 0});
        http("POST", &url, Some(&self.admin_token), Some(&body))
            .unwrap_or_else(|e| panic!("lifting the limit of {mxid}: {e}"));
    }
}

/// A plain HTTP request to the homeserver (curl: the tests need no HTTP client of
/// their own for the few admin calls).
pub fn http(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<Value, String> {
    let mut cmd = Command::new("curl");
    cmd.args([
        "-sS",
        "--fail-with-body",
        "-X",
        method,
        url,
        "-H",
        "Content-Type: application/json",
    ]);
    if let Some(t) = token {
        // Through a header file on stdin would be tidier; a test token on a loopback
        // server is not a secret worth that.
        cmd.args(["-H", &format!("Authorization: Bearer {t}")]);
    }
    if let Some(b) = body {
        cmd.args(["--data", &b.to_string()]);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "{method} {url}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("{method} {url}: {e}"))
}
