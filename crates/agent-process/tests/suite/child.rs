//! GroupChild: the environment it starts with, and what it tells the ledger.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use weft_agent_process::{find_program, GroupChild, RawLine};
use weft_proctree::ledger::{self, Ledger};

fn program(name: &str) -> std::path::PathBuf {
    find_program(name, Some("/usr/bin:/bin".as_ref())).unwrap_or_else(|| panic!("no {name}"))
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn the_child_gets_exactly_the_environment_given_and_nothing_inherited() {
    // Something in our own environment that must not leak into the agent's.
    assert!(std::env::var_os("PATH").is_some() || std::env::var_os("HOME").is_some());
    let env = pairs(&[("WEFT_ONLY", "this"), ("LANG", "C")]);
    let mut child = GroupChild::spawn(&program("env"), &[], Path::new("/"), &env).unwrap();
    let mut out = String::new();
    let mut stdout = child.take_stdout().unwrap();
    stdout.read_to_string(&mut out).await.unwrap();
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, ["LANG=C", "WEFT_ONLY=this"]);
    child.wait_exit(Duration::from_secs(5)).await.unwrap();
}

#[derive(Default)]
struct Recorder(Mutex<Vec<(String, u32, u64)>>);

/// The ledger is one per process and the tests run on parallel threads: a test that
/// installs its recorder while another waits for its reap took that test's "ended"
/// (a CI run: "the group's end is told once, at the reap", 0 told). Held by each test
/// that installs one, for the whole test.
static LEDGER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl Ledger for Recorder {
    fn started(&self, pid: u32, start_ticks: u64) {
        self.0
            .lock()
            .unwrap()
            .push(("started".into(), pid, start_ticks));
    }
    fn ended(&self, pid: u32) {
        self.0.lock().unwrap().push(("ended".into(), pid, 0));
    }
}

#[tokio::test]
async fn the_ledger_hears_of_the_group_when_it_starts_and_once_when_it_is_killed() {
    let _ledger = LEDGER.lock().await;
    let rec = Arc::new(Recorder::default());
    ledger::install(rec.clone());
    let mut child =
        GroupChild::spawn(&program("sleep"), &["300".into()], Path::new("/"), &[]).unwrap();
    let pid = child.pid().unwrap();
    let ticks = ledger::start_ticks(pid).unwrap();
    child.kill();
    drop(child);
    ledger::uninstall();
    let seen: Vec<_> = rec
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, p, _)| *p == pid)
        .cloned()
        .collect();
    assert_eq!(
        seen,
        [
            ("started".to_string(), pid, ticks),
            ("ended".to_string(), pid, 0)
        ]
    );
}

#[tokio::test]
async fn what_an_exited_leader_left_in_its_group_goes_when_it_is_reaped_and_its_id_is_then_forgotten(
) {
    // Once the group is empty the kernel may give its number to anyone; a kill by that
    // number later (an idle close, a drop minutes on) would reach a stranger. So the
    // leftovers go at the reap, the ledger hears of the end then, and nothing after.
    let _ledger = LEDGER.lock().await;
    let rec = Arc::new(Recorder::default());
    ledger::install(rec.clone());
    let mut child = GroupChild::spawn(
        &program("sh"),
        &["-c".into(), "sleep 300 & echo $!".into()],
        Path::new("/"),
        &pairs(&[("PATH", "/usr/bin:/bin")]),
    )
    .unwrap();
    let pid = child.pid().unwrap();
    let mut out = String::new();
    let mut stdout = child.take_stdout().unwrap();
    // The background sleep holds stdout open: read its pid, not to the end.
    while !out.ends_with('\n') {
        let mut b = [0u8; 64];
        let n = stdout.read(&mut b).await.unwrap();
        assert!(n > 0, "no pid from the shell");
        out.push_str(std::str::from_utf8(&b[..n]).unwrap());
    }
    let leftover: u32 = out.trim().parse().unwrap();
    assert!(child.wait_exit(Duration::from_secs(10)).await.is_some());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(format!("/proc/{leftover}/stat"))
        .is_ok_and(|s| !s.contains(") Z "))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the leader's leftover {leftover} outlived its reap"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.kill();
    drop(child);
    ledger::uninstall();
    let ended = rec
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(what, p, _)| *p == pid && what == "ended")
        .count();
    assert_eq!(ended, 1, "the group's end is told once, at the reap");
}

#[tokio::test]
async fn a_child_read_as_lines_delivers_each_line_then_the_end_when_it_exits() {
    // The end comes only if no copy of stdout's write end is left in this process: the
    // reader would wait for it forever.
    let script = "for i in 1 2 3; do echo line-$i; done; printf cut";
    let (mut child, mut lines) = GroupChild::spawn_lines(
        &program("sh"),
        &["-c".into(), script.into()],
        Path::new("/"),
        &[],
        1024,
        16,
    )
    .unwrap();
    let mut got = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.recv())
            .await
            .expect("stdout's end never came")
            .expect("the reader ended without an Eof");
        match line {
            RawLine::Line(l) => got.push(String::from_utf8(l).unwrap()),
            RawLine::Cut(l) => got.push(format!("cut:{}", String::from_utf8(l).unwrap())),
            RawLine::TooLong { .. } => panic!("no line is that long"),
            RawLine::Eof => break,
        }
    }
    assert_eq!(got, ["line-1", "line-2", "line-3", "cut:cut"]);
    assert!(
        child.take_stdout().is_none(),
        "stdout belongs to the reader"
    );
    child.wait_exit(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn a_child_read_in_paced_bursts_hands_over_every_byte_then_the_end() {
    // 3,000 small writes, then a 1 MB one: all of it arrives, in order, and then the end.
    let script =
        "i=0; while [ $i -lt 3000 ]; do echo $i; i=$((i+1)); done; head -c 1048576 /dev/zero";
    let (mut child, mut stdout) = GroupChild::spawn_paced(
        &program("sh"),
        &["-c".into(), script.into()],
        Path::new("/"),
        &[],
    )
    .unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stdout.read_to_end(&mut out))
        .await
        .expect("stdout's end never came")
        .unwrap();
    let text_end = out.iter().position(|&b| b == 0).unwrap_or(out.len());
    let numbers: Vec<String> = (0..3000).map(|i| format!("{i}\n")).collect();
    assert_eq!(String::from_utf8_lossy(&out[..text_end]), numbers.concat());
    assert_eq!(out.len() - text_end, 1 << 20);
    child.wait_exit(Duration::from_secs(5)).await.unwrap();
}
