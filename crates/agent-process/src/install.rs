//! The npm-distributed agent CLIs Weft offers to install (`weft agents install NAME`,
//! the app's Agents view) into `$WEFT_HOME/agents`, and where each one is found now.
//! Which agents those are, and their packages, is each agent's spec
//! ([`weft_agent_spec::spec::Install`]); this is how an install is done, the same way
//! for the CLI (which runs npm itself) and the daemon (which runs it in a terminal).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use weft_agent_spec::spec::{AgentSpec, Package};

use crate::program::{find_agent, installed_agents_dir};

/// An agent CLI Weft offers to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installable {
    /// The command.
    pub name: String,
    /// The agent Weft runs with it.
    pub agent: String,
    /// Its npm package.
    pub package: String,
    /// The version Weft is tested with (`agents.toml`'s).
    pub tested: String,
    /// Run in the package's folder when the command does not run after npm.
    pub repair: Option<Vec<String>>,
}

/// The agents of `specs` offered for install, each command once (two agents may run
/// one CLI).
pub fn installables(specs: &[AgentSpec]) -> Vec<Installable> {
    let mut out: Vec<Installable> = Vec::new();
    for spec in specs {
        let Some(install) = spec.install.as_ref().filter(|i| i.offered) else {
            continue;
        };
        let Package::Npm { name: package } = &install.package else {
            continue;
        };
        if out.iter().any(|i| i.name == install.command) {
            continue;
        }
        out.push(Installable {
            name: install.command.clone(),
            agent: spec.id.clone(),
            package: package.clone(),
            tested: install.version.clone(),
            repair: install.repair.clone(),
        });
    }
    out
}

/// The installable CLI called `name`, or an error naming those there are.
pub fn installable(specs: &[AgentSpec], name: &str) -> Result<Installable, String> {
    let all = installables(specs);
    let known: Vec<&str> = all.iter().map(|i| i.name.as_str()).collect();
    let message = format!(
        "`{name}` is not an agent Weft installs; it installs {}",
        known.join(", ")
    );
    all.iter().find(|i| i.name == name).cloned().ok_or(message)
}

/// Where an installable CLI is found in the environment `var` gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The binary, or where it was looked for.
    pub path: Result<PathBuf, String>,
    /// True when it is the one in `$WEFT_HOME/agents`.
    pub managed: bool,
}

/// A version or tag a client asks for: passed to npm as `package@version`, so never
/// something npm would read as an option.
pub fn check_version(v: &str) -> Result<(), String> {
    let fine = !v.is_empty()
        && !v.starts_with('-')
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+_".contains(c));
    if fine {
        Ok(())
    } else {
        Err(format!("`{v}` is not a version"))
    }
}

impl Installable {
    /// The variable naming an explicit binary (`WEFT_CLAUDE_BIN`, …), as the drivers read it.
    pub fn bin_var(&self) -> String {
        format!(
            "WEFT_{}_BIN",
            self.agent.to_uppercase().replace(['-', '.'], "_")
        )
    }

    /// Looks for it as its driver does: the explicit variable, `$WEFT_HOME/agents`, PATH.
    pub fn find(&self, var: &dyn Fn(&str) -> Option<String>) -> Found {
        let path = find_agent(&self.name, &[&self.bin_var()], var);
        let managed = match (&path, installed_agents_dir(var)) {
            (Ok(p), Some(dir)) => p.starts_with(dir),
            _ => false,
        };
        Found { path, managed }
    }

    /// npm's arguments that install `version` (the tested one when `None`) into `dir`.
    pub fn npm_args(&self, dir: &Path, version: Option<&str>) -> Vec<String> {
        let version = version.unwrap_or(&self.tested);
        vec![
            "install".into(),
            "--prefix".into(),
            dir.display().to_string(),
            "--no-audit".into(),
            "--no-fund".into(),
            format!("{}@{version}", self.package),
        ]
    }

    /// After npm: the installed command, repaired when it does not run (a skipped
    /// postinstall), or why it does not run.
    pub fn finish(&self, dir: &Path) -> Result<PathBuf, String> {
        let bin = dir.join("node_modules/.bin").join(&self.name);
        if let (false, Some(repair)) = (runs(&bin), &self.repair) {
            if let Some((program, args)) = repair.split_first() {
                let _ = Command::new(program)
                    .args(args)
                    .current_dir(dir.join("node_modules").join(&self.package))
                    .stdin(Stdio::null())
                    .status();
            }
        }
        if runs(&bin) {
            Ok(bin)
        } else {
            Err(format!(
                "{} was installed but does not run (`{} --version` failed)",
                self.package,
                bin.display()
            ))
        }
    }
}

/// Makes `dir` an npm prefix of Weft's own (so npm never walks up to a project's).
pub fn prepare(dir: &Path) -> std::io::Result<()> {
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
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use weft_agent_spec::spec::Install;

    use super::*;

    fn spec(id: &str, install: Option<Install>) -> AgentSpec {
        let mut spec = AgentSpec::new(id, id);
        spec.install = install;
        spec
    }

    #[test]
    fn only_offered_npm_installs_are_listed_each_command_once() {
        let specs = [
            spec("one", Some(Install::npm("one", "@a/one"))),
            spec("one-acp", Some(Install::npm("one", "@a/one"))),
            spec(
                "quiet",
                Some(Install {
                    offered: false,
                    ..Install::npm("quiet", "quiet")
                }),
            ),
            spec("none", None),
            spec(
                "py",
                Some(Install {
                    package: Package::PyPi {
                        name: "py".into(),
                        python: (3, 11),
                    },
                    ..Install::npm("py", "py")
                }),
            ),
        ];
        let names: Vec<String> = installables(&specs).into_iter().map(|i| i.name).collect();
        assert_eq!(names, ["one"]);
        let err = installable(&specs, "quiet").unwrap_err();
        assert_eq!(
            err,
            "`quiet` is not an agent Weft installs; it installs one"
        );
        assert_eq!(
            installable(&specs, "one").unwrap().bin_var(),
            "WEFT_ONE_BIN"
        );
        assert_eq!(
            installables(&[spec("a-b.c", Some(Install::npm("x", "x")))])[0].bin_var(),
            "WEFT_A_B_C_BIN"
        );
    }

    #[test]
    fn a_version_is_never_an_option_of_npms() {
        assert!(check_version("1.2.3-beta.1+x").is_ok());
        assert!(check_version("latest").is_ok());
        for bad in ["", "-g", "--prefix=/", "1 2", "1;rm", "a/b"] {
            assert!(check_version(bad).is_err(), "{bad}");
        }
    }

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
        let specs = [spec("codex", Some(Install::npm("codex", "@openai/codex")))];
        let found = installable(&specs, "codex").unwrap().find(&var);
        assert_eq!(found.path, Ok(bin.join("codex")));
        assert!(found.managed);

        let missing = installables(&[spec(
            "weft-no-such-agent",
            Some(Install::npm("weft-no-such-agent", "x")),
        )])[0]
            .find(&var);
        let looked = missing.path.unwrap_err();
        assert!(
            looked.contains("weft agents install weft-no-such-agent"),
            "{looked}"
        );
    }

    #[test]
    fn finish_repairs_a_command_that_does_not_run_yet() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("node_modules/pkg");
        std::fs::create_dir_all(&pkg).unwrap();
        let bin = dir.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        // The command fails until the repair step (run in the package's folder) puts
        // the real one in place, as Claude Code's postinstall does.
        let cmd = bin.join("tool");
        std::fs::write(&cmd, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(&cmd, std::fs::Permissions::from_mode(0o755)).unwrap();
        let fix = format!("printf '#!/bin/sh\\nexit 0\\n' > {}", cmd.display());
        let mut tool = Installable {
            name: "tool".into(),
            agent: "tool".into(),
            package: "pkg".into(),
            tested: "1".into(),
            repair: None,
        };
        assert!(tool
            .finish(dir.path())
            .unwrap_err()
            .contains("does not run"));
        tool.repair = Some(vec!["sh".into(), "-c".into(), fix]);
        assert_eq!(tool.finish(dir.path()).unwrap(), cmd);
        assert_eq!(
            tool.npm_args(Path::new("/d"), None),
            [
                "install",
                "--prefix",
                "/d",
                "--no-audit",
                "--no-fund",
                "pkg@1"
            ]
        );
    }
}
