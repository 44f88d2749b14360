//! `weft agents install NAME`: the version of an npm-distributed agent CLI Weft is
//! tested with, installed into a folder Weft owns (`$WEFT_HOME/agents`) with the
//! system's own npm — never the user's global install. The drivers look there before
//! `PATH` (`weft_agent_process::find_agent`).

use std::path::Path;
use std::process::{Command, ExitCode};

use weft_agent_process::install::{installable, Installable, INSTALLABLE};

pub(crate) fn install(name: &str, version: Option<String>) -> ExitCode {
    let Some(&Installable { package, .. }) = installable(name) else {
        let known: Vec<&str> = INSTALLABLE.iter().map(|i| i.name).collect();
        eprintln!(
            "weft: `{name}` is not an agent Weft installs; it installs {}",
            known.join(", ")
        );
        return ExitCode::from(crate::EXIT_USAGE);
    };
    let version = version.unwrap_or_else(|| {
        installable(name)
            .map(Installable::tested)
            .unwrap_or_default()
            .to_string()
    });
    let var = |n: &str| std::env::var(n).ok();
    let Some(dir) = weft_agent_process::installed_agents_dir(&var) else {
        eprintln!("weft: neither WEFT_HOME nor HOME is set: no folder to install into");
        return ExitCode::FAILURE;
    };
    let Ok(npm) = weft_agent_process::find_agent("npm", &["WEFT_NPM_BIN"], &var) else {
        eprintln!(
            "weft: npm is not installed (it comes with Node.js: e.g. `sudo apt-get install \
             nodejs npm`); Weft installs {name} with the system's npm"
        );
        return ExitCode::FAILURE;
    };
    if let Err(e) = prepare(&dir) {
        eprintln!("weft: cannot prepare {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    eprintln!(
        "weft: installing {package}@{version} into {} (npm's progress follows)",
        dir.display()
    );
    let status = Command::new(&npm)
        .arg("install")
        .arg("--prefix")
        .arg(&dir)
        .args(["--no-audit", "--no-fund"])
        .arg(format!("{package}@{version}"))
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            eprintln!(
                "weft: npm install failed ({s}); nothing of the user's own installs was touched"
            );
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("weft: cannot run {}: {e}", npm.display());
            return ExitCode::FAILURE;
        }
    }
    let bin = dir.join("node_modules/.bin").join(name);
    // Claude Code's postinstall puts its native binary in place; npm may skip scripts.
    if name == "claude" && !runs(&bin) {
        let _ = Command::new("node")
            .arg("install.cjs")
            .current_dir(dir.join("node_modules").join(package))
            .status();
    }
    if !runs(&bin) {
        eprintln!(
            "weft: {} was installed but does not run (`{} --version` failed)",
            package,
            bin.display()
        );
        return ExitCode::FAILURE;
    }
    out!("{}", bin.display());
    ExitCode::SUCCESS
}

fn prepare(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let manifest = dir.join("package.json");
    if !manifest.exists() {
        std::fs::write(manifest, "{\"name\":\"weft-agents\",\"private\":true}\n")?;
    }
    Ok(())
}

fn runs(bin: &Path) -> bool {
    Command::new(bin)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `weft agents` subcommands.
#[derive(clap::Subcommand)]
pub(crate) enum AgentsCommand {
    /// Install (or update to) the version Weft is tested with, into $WEFT_HOME/agents;
    /// prints the installed binary.
    Install {
        /// claude, codex, gemini or claude-agent-acp.
        name: String,
        /// Another version than the tested one.
        #[arg(long)]
        version: Option<String>,
    },
}
