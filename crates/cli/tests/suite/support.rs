//! Every test gets its own WEFT_HOME, so its own daemon, and stops that daemon when it
//! is done (the guard's `Drop`): no test leaves a process behind. Then the home, the
//! workspace and what the test's commands printed are searched for the suite's
//! secrets and the ones the test made (`weft_testkit::leaks`: files, every database
//! row, output): a test that passed fails if Weft wrote a secret anywhere.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Stops the daemon of a home when dropped.
pub struct DaemonGuard(pub PathBuf);

impl Drop for DaemonGuard {
    fn drop(&mut self) {
        stop_daemon(&self.0);
    }
}

/// `weft daemon stop` for `home` (nothing when none runs).
pub fn stop_daemon(home: &Path) {
    let _ = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["daemon", "stop"])
        .env("WEFT_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// A home, a workspace, and the daemon they get.
pub struct Env {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
    /// What the test's commands printed (those run through [`Env::weft`], or handed
    /// to [`Env::keep_output`]).
    printed: RefCell<Vec<u8>>,
    /// Secrets the test made, searched for at the end with the suite's own.
    secrets: RefCell<Vec<String>>,
}

impl Drop for Env {
    fn drop(&mut self) {
        stop_daemon(self.home.path());
        if !std::thread::panicking() {
            let secrets = self.secrets.borrow();
            let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
            weft_testkit::leaks::assert_none(
                &[self.home.path(), self.work.path()],
                &self.printed.borrow(),
                &secrets,
            );
        }
    }
}

impl Env {
    pub fn new() -> Self {
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(work.path().join("README.md"), "hello").unwrap_or_else(|e| panic!("{e}"));
        Self {
            home,
            work,
            printed: RefCell::default(),
            secrets: RefCell::default(),
        }
    }

    /// Searches for `secret` too when the test ends.
    pub fn watch_secret(&self, secret: &str) {
        self.secrets.borrow_mut().push(secret.to_string());
    }

    /// Keeps what a command printed, to search at the end.
    pub fn keep_output(&self, out: &Output) {
        let mut p = self.printed.borrow_mut();
        p.extend_from_slice(&out.stdout);
        p.extend_from_slice(&out.stderr);
    }

    /// `weft ARGS` in the workspace, with this home, no stdin.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_weft"));
        cmd.args(args)
            .env("WEFT_HOME", self.home.path())
            .env("WEFT_ECHO_DELAY_MS", "0")
            // A safety net only: the guard stops the daemon.
            .env("WEFT_DAEMON_IDLE_SECS", "120")
            .current_dir(self.work.path())
            .stdin(Stdio::null());
        cmd
    }

    pub fn weft(&self, args: &[&str]) -> Output {
        let out = bounded(self.cmd(args), args);
        self.keep_output(&out);
        out
    }

    /// `weft ARGS`, which must succeed: its trimmed output.
    pub fn ok(&self, args: &[&str]) -> String {
        ok_stdout(&self.weft(args))
    }

    pub fn json(&self, args: &[&str]) -> (i32, Value, String) {
        let out = self.weft(args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}\nstderr: {stderr}"));
        (out.status.code().unwrap_or(-1), value, stderr)
    }

    /// The workspace by its real path, as Weft records it.
    pub fn real_work(&self) -> PathBuf {
        self.work
            .path()
            .canonicalize()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn workdir(&self) -> String {
        self.work.path().to_string_lossy().into_owned()
    }
}

/// The hello of the app's transport: no client environment, no token.
pub fn app_hello() -> weft_protocol::Hello {
    weft_protocol::Hello {
        version: weft_client::VERSION.into(),
        surface: "app".into(),
        env: None,
        token: None,
        ..Default::default()
    }
}

/// How long one `weft` command may take before the test calls it hung.
const HUNG: std::time::Duration = std::time::Duration::from_secs(300);

/// Runs `cmd` to its end like `output()`, but a command that hangs is killed and fails
/// the test naming it, instead of holding up the whole suite (a hung client once kept
/// a CI run waiting for its 90 minutes).
pub fn bounded(mut cmd: Command, args: &[&str]) -> Output {
    use std::io::Read;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run weft: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(
        child.stdout.take().unwrap_or_else(|| panic!("stdout")),
    ));
    let stderr = drain(Box::new(
        child.stderr.take().unwrap_or_else(|| panic!("stderr")),
    ));
    let deadline = std::time::Instant::now() + HUNG;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                let err = stderr.join().unwrap_or_default();
                panic!(
                    "weft {args:?} did not end within {} s; stderr: {}",
                    HUNG.as_secs(),
                    String::from_utf8_lossy(&err)
                );
            }
        }
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Polls `f` until it gives a value, or panics after `secs` with `what`.
pub fn wait_for<T>(what: &str, secs: u64, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// True while process `pid` runs (an exited one not yet reaped, a zombie, is not).
pub fn pid_alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, r)| r.trim_start().chars().next());
    matches!(state, Some(s) if s != 'Z' && s != 'X')
}

/// The real agent CLI `name` (also from variable `var`), or `None` with a SKIPPED line
/// outside CI; under `CI=true` a missing one fails the test (scripts/setup.sh installs
/// them all).
pub fn agent_bin(name: &str, var: &str) -> Option<PathBuf> {
    let found = weft_agent_process::find_agent(name, &[var], &|n| std::env::var(n).ok()).ok();
    if found.is_none() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true and the real {name} CLI is missing (scripts/setup.sh installs it)"
        );
        eprintln!("SKIPPED: no {name} CLI found");
    }
    found
}

/// A command's standard output as JSON (its output and errors in the panic if not).
pub fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The row of session `key` in a JSON list of sessions or hits.
pub fn find<'a>(list: &'a Value, key: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|s| s["sessionKey"] == key)
}

/// An isolated HOME whose Gemini settings pick the API key (no Google login, no
/// usage statistics).
pub fn gemini_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        &home.path().join(".gemini/settings.json"),
        GEMINI_KEY_SETTINGS,
    );
    home
}

/// The real gemini in `home` against the scripted server at `base_url`.
pub fn gemini_env(cmd: &mut Command, home: &Path, bin: &Path, base_url: &str) {
    cmd.env("HOME", home)
        .env_remove("GEMINI_CLI_HOME")
        .env("WEFT_GEMINI_BIN", bin)
        .env("GEMINI_API_KEY", "test-key")
        .env("GOOGLE_GEMINI_BASE_URL", base_url)
        .env("GEMINI_CLI_NO_RELAUNCH", "true");
}

/// The Gemini settings that pick the API key (no Google login, no usage statistics).
pub const GEMINI_KEY_SETTINGS: &str = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}"#;

/// Writes a file the test needs, failing the test if it cannot.
pub fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// An isolated HOME where Claude Code's onboarding is done, so a first run asks nothing.
pub fn claude_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(
        &home.path().join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    );
    home
}

/// The real claude in `home` against the scripted server at `base_url`, with the
/// suite's ambient key (which the leak search knows).
pub fn claude_env(cmd: &mut Command, home: &Path, claude: &Path, base_url: &str) {
    cmd.env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("WEFT_CLAUDE_BIN", claude)
        .env("ANTHROPIC_BASE_URL", base_url)
        .env(
            "ANTHROPIC_API_KEY",
            weft_testkit::leaks::AMBIENT_ANTHROPIC_KEY,
        )
        .env("IS_SANDBOX", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("CLAUDE_CODE_MAX_RETRIES", "0");
}

/// The real codex with `home` as its home against the scripted server at `v1_url`,
/// its key `api_key`; no retries, no sandbox and no approvals, so a turn never waits.
pub fn codex_env(cmd: &mut Command, home: &Path, codex: &Path, v1_url: &str, api_key: &str) {
    cmd.env("CODEX_HOME", home)
        .env("HOME", home)
        .env("WEFT_CODEX_BIN", codex)
        .env("WEFT_CODEX_BASE_URL", v1_url)
        .env("WEFT_CODEX_API_KEY_ENV", "WEFT_TEST_OPENAI_KEY")
        .env("WEFT_TEST_OPENAI_KEY", api_key)
        .env("WEFT_CODEX_MAX_RETRIES", "0")
        .env("WEFT_CODEX_SANDBOX", "danger-full-access")
        .env("WEFT_CODEX_APPROVAL_POLICY", "never")
        .env("WEFT_CODEX_CONFIG", "model=\"mock-model\"");
}

/// The JSON output of a command that must have succeeded.
pub fn ok_json(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    stdout_json(out)
}

/// A string field as an owned string, empty when absent.
pub fn string(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The reply of a `weft run --json` result holds `want`.
pub fn assert_reply(run: &Value, want: &str) {
    assert!(
        run["snapshot"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(want)),
        "the reply lacks {want:?}: {run}"
    );
}

/// Each element's string field `name` of a JSON list, in order (elements without it
/// are passed over).
pub fn strings<'a>(list: &'a Value, name: &str) -> Vec<&'a str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v[name].as_str())
        .collect()
}

/// The prompts of a JSON history, in order.
pub fn prompts(history: &Value) -> Vec<String> {
    strings(history, "prompt")
        .into_iter()
        .map(String::from)
        .collect()
}

/// The trimmed standard output of a command that must have succeeded.
pub fn ok_stdout(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// An executable shell script `name` in `dir`: a stand-in for a program Weft runs.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    write(&path, body);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    path
}

/// `git ARGS` in `dir`, which must succeed (a fixed author, so commits need no config):
/// its trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap_or_else(|e| panic!("git: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
