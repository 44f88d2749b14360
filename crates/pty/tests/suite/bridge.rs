use std::time::{Duration, Instant};

use weft_pty::{PtyBridge, PtyError, PtySize, PtySpec, Screen};

/// A fresh terminal standing in for xterm.js.
fn viewer() -> Screen {
    Screen::new(24, 80, 1000)
}

const SIZE: PtySize = PtySize { rows: 24, cols: 80 };

fn sh(script: &str) -> PtySpec {
    PtySpec {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        base_env: None,
        env: vec![("WEFT_PTY_TEST".into(), "1".into())],
        cwd: std::env::temp_dir(),
        ..PtySpec::default()
    }
}

fn wait_screen(bridge: &PtyBridge, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = bridge.screen_text();
        if pred(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; {}; screen:\n{text}",
            child_state(bridge)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Where the child is, for a timeout's message: running, sleeping in what, stopped by
/// a signal, gone — each points at a different cause.
fn child_state(bridge: &PtyBridge) -> String {
    let Some(pid) = bridge.pid() else {
        return "no pid".into();
    };
    let read = |f: &str| std::fs::read_to_string(format!("/proc/{pid}/{f}")).unwrap_or_default();
    let stat = read("stat");
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, r)| r.split_whitespace().next())
        .unwrap_or("gone");
    let signals: Vec<String> = read("status")
        .lines()
        .filter(|l| l.starts_with("Sig") || l.starts_with("Shd"))
        .map(str::to_string)
        .collect();
    format!(
        "child {pid}: state {state}, waiting in {:?}, {} bytes of output, exit {:?}, {signals:?}",
        read("wchan"),
        bridge.output_len(),
        bridge.exit_info()
    )
}

fn alive(pid: u32) -> bool {
    // A zombie is as good as gone: it runs nothing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.split_whitespace().nth(2).is_none_or(|st| st != "Z"))
        .unwrap_or(false)
}

fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the command name: state ppid pgrp …
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2) == Some(&pgid.to_string().as_str()) && fields.first() != Some(&"Z") {
            out.push(pid);
        }
    }
    out
}

#[tokio::test]
async fn typed_input_reaches_the_child_and_its_reply_renders() {
    let bridge = PtyBridge::spawn(
        &sh("printf 'name? '; read x; echo \"hello $x from $WEFT_PTY_TEST\""),
        SIZE,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "prompt", |s| s.contains("name?"));
    bridge.write(b"weft\r").unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "reply", |s| s.contains("hello weft from 1"));
    let exit = bridge.wait().await;
    assert!(exit.success);
    assert_eq!(exit.code, 0);
}

#[tokio::test]
async fn a_viewer_attaching_late_gets_the_current_screen_then_only_new_output() {
    let bridge = PtyBridge::spawn(
        &sh("for i in 1 2 3 4 5; do echo line$i; done; read x; echo after-$x; read y"),
        SIZE,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "lines", |s| s.contains("line5"));
    let mut attach = bridge.attach();
    let mut view = viewer();
    view.process(&attach.screen);
    assert_eq!(view.text(), bridge.screen_text(), "restored screen matches");
    bridge.write(b"x\r").unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "after", |s| s.contains("after-x"));
    while let Ok(chunk) = attach.chunks.try_recv() {
        let end = chunk.offset + chunk.data.len() as u64;
        if end <= attach.offset {
            continue;
        }
        let skip = attach.offset.saturating_sub(chunk.offset) as usize;
        view.process(&chunk.data[skip..]);
    }
    let text = view.text();
    assert_eq!(
        text.matches("line5").count(),
        1,
        "no duplicated output:\n{text}"
    );
    assert_eq!(text, bridge.screen_text());
}

#[tokio::test]
async fn resize_reaches_the_child_and_a_storm_does_not_break_it() {
    let bridge = PtyBridge::spawn(&sh("stty size; read x; stty size; read y"), SIZE)
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "first size", |s| s.contains("24 80"));
    for i in 0..500u16 {
        bridge
            .resize(PtySize {
                rows: 20 + i % 10,
                cols: 60 + i % 40,
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
    bridge
        .resize(PtySize {
            rows: 30,
            cols: 100,
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        bridge.size(),
        PtySize {
            rows: 30,
            cols: 100
        }
    );
    bridge.write(b"\r").unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "second size", |s| s.contains("30 100"));
    assert!(matches!(
        bridge.resize(PtySize { rows: 0, cols: 10 }),
        Err(PtyError::BadSize)
    ));
    // A size past the limits is refused, saying them, and the terminal keeps its own.
    let huge = bridge.resize(PtySize {
        rows: u16::MAX,
        cols: u16::MAX,
    });
    let message = huge
        .as_ref()
        .err()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        matches!(huge, Err(PtyError::TooLarge { .. }))
            && message.contains("1000 columns × 500 rows"),
        "{huge:?}"
    );
    assert_eq!(
        bridge.size(),
        PtySize {
            rows: 30,
            cols: 100
        }
    );
    let at_limit = PtySize {
        rows: weft_pty::MAX_ROWS,
        cols: weft_pty::MAX_COLS,
    };
    bridge.resize(at_limit).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bridge.size(), at_limit);
    assert!(matches!(
        PtyBridge::spawn(
            &sh("true"),
            PtySize {
                rows: 501,
                cols: 80
            }
        ),
        Err(PtyError::TooLarge { .. })
    ));
}

#[tokio::test]
async fn a_child_that_exits_at_once_leaves_its_last_output_and_code() {
    let bridge = PtyBridge::spawn(&sh("echo 'fatal: no config'; exit 3"), SIZE)
        .unwrap_or_else(|e| panic!("{e}"));
    let exit = bridge.wait().await;
    assert_eq!(exit.code, 3);
    assert!(!exit.success);
    assert!(bridge.screen_text().contains("fatal: no config"));
    assert!(bridge.write(b"x").is_err() || bridge.exit_info().is_some());
}

#[tokio::test]
async fn a_banner_comes_before_the_output_and_a_step_after_it_can_fail_the_terminal() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let saw = seen.clone();
    let spec = PtySpec {
        banner: Some("weft: installing pkg@1\nfirst".into()),
        after: Some(weft_pty::After(std::sync::Arc::new(move |exit| {
            *saw.lock().unwrap_or_else(|e| e.into_inner()) = Some(exit.code);
            Err("weft: pkg was installed but does not run".into())
        }))),
        ..sh("echo npm-says-done")
    };
    let bridge = PtyBridge::spawn(&spec, SIZE).unwrap_or_else(|e| panic!("{e}"));
    let exit = bridge.wait().await;
    assert_eq!(*seen.lock().unwrap_or_else(|e| e.into_inner()), Some(0));
    assert!(!exit.success, "the step after failed it: {exit:?}");
    let text = bridge.screen_text();
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} not on the screen:\n{text}"))
    };
    assert!(at("weft: installing pkg@1") < at("first"));
    assert!(at("first") < at("npm-says-done"));
    assert!(at("npm-says-done") < at("does not run"));
    // Lines end as a terminal wants them: the banner's second line starts at column 0.
    assert!(text.lines().any(|l| l == "first"), "{text}");
    // A viewer attaching now gets all of it.
    let mut screen = viewer();
    screen.process(&bridge.attach().screen);
    assert!(screen.text().contains("does not run"));
}

#[test]
fn missing_programs_and_folders_are_clear_errors() {
    let spec = PtySpec {
        program: "weft-no-such-program".into(),
        cwd: std::env::temp_dir(),
        ..Default::default()
    };
    let err = PtyBridge::spawn(&spec, SIZE)
        .err()
        .unwrap_or_else(|| panic!("spawned"));
    assert!(matches!(err, PtyError::NotFound(_)));
    assert!(err.to_string().contains("weft-no-such-program"));
    let spec = PtySpec {
        program: "/nope/bin/x".into(),
        cwd: std::env::temp_dir(),
        ..Default::default()
    };
    assert!(matches!(
        PtyBridge::spawn(&spec, SIZE),
        Err(PtyError::NotFound(_))
    ));
    let mut spec = sh("true");
    spec.cwd = "/no/such/folder".into();
    assert!(matches!(
        PtyBridge::spawn(&spec, SIZE),
        Err(PtyError::BadCwd(_))
    ));
}

#[test]
fn dropping_the_bridge_kills_the_whole_process_group() {
    let bridge = PtyBridge::spawn(&sh("sleep 600 & sleep 600 & echo started; wait"), SIZE)
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "started", |s| s.contains("started"));
    let pgid = bridge.pid().unwrap_or_else(|| panic!("no pid"));
    let deadline = Instant::now() + Duration::from_secs(5);
    while group_members(pgid).len() < 3 {
        assert!(
            Instant::now() < deadline,
            "children never started: {:?}",
            group_members(pgid)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let members = group_members(pgid);
    drop(bridge);
    let deadline = Instant::now() + Duration::from_secs(5);
    while members.iter().any(|p| alive(*p)) {
        assert!(
            Instant::now() < deadline,
            "left behind: {:?}",
            members.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test]
async fn a_large_burst_of_output_flows_through_without_loss() {
    // 20 MB here (debug build); the benchmark pushes 100 MB through a release build.
    let bridge = PtyBridge::spawn(
        &sh("head -c 20000000 /dev/zero | tr '\\0' 'a'; echo; echo END"),
        SIZE,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut attach = bridge.attach();
    // A viewer that keeps up gets every byte, in order, with no gap or overlap.
    let mut next = attach.offset;
    let mut exited = false;
    loop {
        if exited && next >= bridge.output_len() {
            break;
        }
        tokio::select! {
            chunk = attach.chunks.recv() => match chunk {
                Ok(chunk) => {
                    assert_eq!(chunk.offset, next, "chunks are contiguous");
                    next += chunk.data.len() as u64;
                }
                Err(e) => panic!("the viewer lost output: {e}"),
            },
            exit = bridge.wait(), if !exited => {
                assert!(exit.success);
                exited = true;
            }
        }
    }
    assert!(next >= 20_000_000);
    assert!(bridge.screen_text().contains("END"));
    // A viewer joining now redraws the final screen from the kept state.
    let again = bridge.attach();
    assert_eq!(again.offset, next);
    let mut view = viewer();
    view.process(&again.screen);
    assert!(view.text().contains("END"));
}

#[tokio::test]
async fn a_viewer_attaching_mid_burst_ends_on_the_same_screen() {
    // The kept screen trails the output during a burst; an attach first brings it
    // up to everything read, so the viewer is current at the offset it is given.
    let bridge = PtyBridge::spawn(
        &sh("awk 'BEGIN { for (i = 0; i < 9000; i++) printf \"row %d %.*s\\n\", i, i % 50, \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" }'; echo DONE; read x"),
        SIZE,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while bridge.output_len() == 0 {
        assert!(Instant::now() < deadline, "no output");
        std::thread::yield_now();
    }
    let mut attach = bridge.attach();
    assert!(attach.offset > 0);
    // As much scrollback as the bridge keeps: every byte replayed twice or missed
    // would show in the history, not only on the last screen.
    let mut view = Screen::new(SIZE.rows, SIZE.cols, 10_000);
    view.process(&attach.screen);
    let mut next = attach.offset;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if bridge.screen_text().contains("DONE") && next >= bridge.output_len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no DONE:\n{}",
            bridge.screen_text()
        );
        match tokio::time::timeout(Duration::from_millis(50), attach.chunks.recv()).await {
            Ok(Ok(chunk)) => {
                let end = chunk.offset + chunk.data.len() as u64;
                if end > next {
                    let skip = next.saturating_sub(chunk.offset) as usize;
                    view.process(&chunk.data[skip..]);
                    next = end;
                }
            }
            Ok(Err(e)) => panic!("the viewer lost output: {e}"),
            Err(_) => {}
        }
    }
    assert_eq!(view.text(), bridge.screen_text());
    assert!(
        view.formatted(true) == bridge.attach().screen,
        "the viewer's scrollback differs from the bridge's"
    );
}
