//! The npm-distributed agent CLIs Weft installs (`weft agents install NAME`, the app's
//! Agents view) into `$WEFT_HOME/agents`, and where each one is found now.

use std::path::PathBuf;

use crate::program::{find_agent, installed_agents_dir};

/// An agent CLI Weft installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Installable {
    /// The command.
    pub name: &'static str,
    /// The agent Weft runs with it.
    pub agent: &'static str,
    /// Its npm package.
    pub package: &'static str,
}

/// Every agent CLI Weft installs.
pub const INSTALLABLE: &[Installable] = &[
    Installable {
        name: "claude",
        agent: "claude",
        package: "@anthropic-ai/claude-code",
    },
    Installable {
        name: "codex",
        agent: "codex",
        package: "@openai/codex",
    },
    Installable {
        name: "gemini",
        agent: "gemini",
        package: "@google/gemini-cli",
    },
    Installable {
        name: "claude-agent-acp",
        agent: "claude-acp",
        package: "@agentclientprotocol/claude-agent-acp",
    },
];

/// The installable CLI called `name`.
pub fn installable(name: &str) -> Option<&'static Installable> {
    INSTALLABLE.iter().find(|i| i.name == name)
}

/// Where an installable CLI is found in the environment `var` gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The binary, or where it was looked for.
    pub path: Result<PathBuf, String>,
    /// True when it is the one in `$WEFT_HOME/agents`.
    pub managed: bool,
}

impl Installable {
    /// The version Weft is tested with: `agents.toml`'s, as `scripts/setup.sh` installs.
    pub fn tested(&self) -> &'static str {
        crate::pins::npm(self.package).unwrap_or_default()
    }

    /// The variable naming an explicit binary (`WEFT_CLAUDE_BIN`, …), as the drivers read it.
    pub fn bin_var(&self) -> String {
        format!(
            "WEFT_{}_BIN",
            self.agent.to_uppercase().replace(['-', '.'], "_")
        )
    }

    /// Looks for it as its driver does: the explicit variable, `$WEFT_HOME/agents`, PATH.
    pub fn find(&self, var: &dyn Fn(&str) -> Option<String>) -> Found {
        let path = find_agent(self.name, &[&self.bin_var()], var);
        let managed = match (&path, installed_agents_dir(var)) {
            (Ok(p), Some(dir)) => p.starts_with(dir),
            _ => false,
        };
        Found { path, managed }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn an_installed_package_is_found_and_marked_managed() {
        let home = tempfile::tempdir().unwrap();
        let pkg = home.path().join("agents/node_modules/@openai/codex");
        std::fs::create_dir_all(pkg.join("bin")).unwrap();
        let script = pkg.join("bin/codex.js");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = home.path().join("agents/node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink("../@openai/codex/bin/codex.js", bin.join("codex")).unwrap();
        let weft_home = home.path().to_string_lossy().into_owned();
        let var = move |n: &str| (n == "WEFT_HOME").then(|| weft_home.clone());
        let found = installable("codex").unwrap().find(&var);
        assert_eq!(found.path, Ok(bin.join("codex")));
        assert!(found.managed);

        let missing = Installable {
            name: "weft-no-such-agent",
            agent: "weft-no-such-agent",
            package: "weft-no-such-agent",
        }
        .find(&var);
        let looked = missing.path.unwrap_err();
        for i in INSTALLABLE {
            assert!(!i.tested().is_empty(), "agents.toml pins no {}", i.package);
        }
        assert!(
            looked.contains("weft agents install weft-no-such-agent"),
            "{looked}"
        );
        assert_eq!(
            installable("claude-agent-acp").unwrap().bin_var(),
            "WEFT_CLAUDE_ACP_BIN"
        );
    }
}
