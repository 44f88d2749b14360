//! `weft matrix …`: the Matrix surface's own program, `weft-matrix`, run in this
//! process's place with the same arguments, terminal and environment.
//!
//! It is a program of its own because matrix-sdk's SQLite store links a
//! `libsqlite3-sys` that cannot share a build with Weft's rusqlite (docs/matrix.md).
//! It is taken only from beside this `weft`, as the daemon does when it starts the
//! surface: never from PATH, where another party could put a program that would then
//! read the user's Matrix password.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

/// The program's name beside `weft`.
pub(crate) const PROGRAM: &str = "weft-matrix";

/// Replaces this process with `weft-matrix ARGS…`; returns only when that fails.
pub(crate) fn exec(args: &[OsString]) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("weft: where weft runs from: {e}");
            return ExitCode::FAILURE;
        }
    };
    let program = exe.with_file_name(PROGRAM);
    if !program.is_file() {
        eprintln!(
            "weft: {}",
            weft_daemon::surfaces::not_installed(PROGRAM, &exe)
        );
        return ExitCode::FAILURE;
    }
    let err = std::process::Command::new(&program).args(args).exec();
    eprintln!("weft: cannot run {}: {err}", program.display());
    ExitCode::FAILURE
}
