//! `weft-sandbox-exec --workdir DIR [--temp DIR] [--allow-network] -- COMMAND…`:
//! confines itself (Landlock + seccomp) and execs COMMAND.

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    weft_sandbox::exec_main()
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("weft-sandbox-exec: Linux only");
    std::process::ExitCode::from(125)
}
