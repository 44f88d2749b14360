//! An agent's own login into an account's home, as its spec describes it: its binary
//! (found as its driver finds it), the spec's login arguments, and the config-home
//! variable pointing at the account's home. The daemon runs it in a terminal for the
//! app; `weft accounts login` runs it in the user's own terminal.

use std::path::PathBuf;

use weft_agent_spec::spec::AgentSpec;

use crate::program::find_agent;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginCommand {
    /// The agent's binary.
    pub program: PathBuf,
    /// Its login arguments (none: its first-run dialog logs in).
    pub args: Vec<String>,
    /// The variable naming its config folder, set to the account's home.
    pub home_var: String,
}

/// The login of `spec`'s agent, with its binary looked for in the environment `var`
/// gives; an error says why it has none or where the binary was looked for.
pub fn command(
    spec: &AgentSpec,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<LoginCommand, String> {
    let (Some(args), Some(home)) = (&spec.login, &spec.config_home) else {
        return Err(format!("{} does not log in by itself", spec.name));
    };
    let command = spec
        .install
        .as_ref()
        .map_or(spec.id.as_str(), |i| i.command.as_str());
    let bin_var = format!(
        "WEFT_{}_BIN",
        spec.id.to_uppercase().replace(['-', '.'], "_")
    );
    Ok(LoginCommand {
        program: find_agent(command, &[&bin_var], var)?,
        args: args.clone(),
        home_var: home.var.clone(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use weft_agent_spec::spec::{ConfigHome, Install};

    use super::*;

    #[test]
    fn the_login_is_the_specs_binary_arguments_and_home_variable() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("tool-cli");
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut spec = AgentSpec::new("my-tool", "My Tool");
        assert_eq!(
            command(&spec, &|_| None).unwrap_err(),
            "My Tool does not log in by itself"
        );
        spec.login = Some(vec!["auth".into(), "login".into()]);
        spec.config_home = Some(ConfigHome {
            var: "TOOL_HOME".into(),
            default_dir: None,
            logged_in: None,
        });
        spec.install = Some(Install::npm("tool-cli", "tool"));
        let path = bin.display().to_string();
        let var = move |n: &str| (n == "WEFT_MY_TOOL_BIN").then(|| path.clone());
        assert_eq!(
            command(&spec, &var).unwrap(),
            LoginCommand {
                program: bin.clone(),
                args: vec!["auth".into(), "login".into()],
                home_var: "TOOL_HOME".into(),
            }
        );
        let nowhere = |n: &str| (n == "PATH").then(|| "/nonexistent".to_string());
        assert!(command(&spec, &nowhere).is_err());
    }
}
