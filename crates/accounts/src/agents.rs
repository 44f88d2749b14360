//! The agent CLIs Weft installs, as the Agents view lists them: where each one's binary
//! is found (as its driver looks for it), its version against the one Weft is tested
//! with, or every place looked.

use std::path::Path;

use weft_agent_process::install::installables;
use weft_agent_spec::spec::AgentSpec;
use weft_protocol::AgentInstall;

/// Where each agent of `specs` offered for install is found, as the drivers look for
/// it in the environment `var` gives.
pub fn list(specs: &[AgentSpec], var: &dyn Fn(&str) -> Option<String>) -> Vec<AgentInstall> {
    let dir = weft_agent_process::installed_agents_dir(var);
    installables(specs)
        .into_iter()
        .map(|i| {
            let found = i.find(var);
            let (path, problem) = match found.path {
                Ok(p) => (Some(p), None),
                Err(e) => (None, Some(e)),
            };
            AgentInstall {
                version: path.as_deref().and_then(|p| npm_version(p, &i.package)),
                name: i.name,
                agent: i.agent,
                package: i.package,
                tested_version: i.tested,
                path: path.map(|p| p.display().to_string()),
                managed: found.managed,
                problem,
                install_dir: dir.as_ref().map(|d| d.display().to_string()),
            }
        })
        .collect()
}

/// The version in the `package.json` of `package` that `bin` (an npm bin link, or a
/// file inside the package) belongs to.
fn npm_version(bin: &Path, package: &str) -> Option<String> {
    let real = std::fs::canonicalize(bin).ok()?;
    real.ancestors().skip(1).find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        (json.get("name")?.as_str()? == package)
            .then(|| json.get("version")?.as_str().map(String::from))
            .flatten()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn an_agent_installed_by_npm_is_listed_with_its_package_version_and_the_tested_one() {
        let home = tempfile::tempdir().unwrap();
        let pkg = home.path().join("agents/node_modules/@google/gemini-cli");
        std::fs::create_dir_all(pkg.join("dist")).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            r#"{"name":"@google/gemini-cli","version":"0.60.1"}"#,
        )
        .unwrap();
        let script = pkg.join("dist/index.js");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = home.path().join("agents/node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink("../@google/gemini-cli/dist/index.js", bin.join("gemini"))
            .unwrap();
        let weft_home = home.path().to_string_lossy().into_owned();
        let var = move |n: &str| match n {
            "WEFT_HOME" => Some(weft_home.clone()),
            "PATH" => Some("/nonexistent".into()),
            _ => None,
        };
        let listed = list(&weft_drivers::specs_in(home.path()), &var);
        let gemini = listed.iter().find(|a| a.name == "gemini").unwrap();
        assert_eq!(gemini.version.as_deref(), Some("0.60.1"));
        assert_eq!(gemini.tested_version, "0.61.0");
        assert!(gemini.managed);
        assert_eq!(gemini.path, Some(bin.join("gemini").display().to_string()));
        let names: Vec<&str> = listed.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["claude", "codex", "gemini", "claude-agent-acp"]);
    }
}
