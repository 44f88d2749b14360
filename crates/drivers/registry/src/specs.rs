//! Every agent's [`AgentSpec`], with the version `agents.toml` (at the repository's
//! root, the one list of pins `scripts/setup.sh` installs from) gives its package.

use std::path::Path;
use std::sync::LazyLock;

use weft_agent_process::pins;
use weft_agent_spec::spec::{AgentSpec, Package};

/// The version `agents.toml` (embedded by `weft_agent_process::pins`) pins `package` to.
pub fn pinned(package: &Package) -> Option<&'static str> {
    match package {
        Package::Npm { name } => pins::npm(name),
        Package::PyPi { name, .. } => pins::pypi(name),
    }
}

fn with_pin(mut spec: AgentSpec) -> AgentSpec {
    if let Some(install) = &mut spec.install {
        install.version = pinned(&install.package).unwrap_or_default().to_string();
    }
    spec
}

/// The built-in agents' specs, in the order of [`crate::all`].
static BUILT_IN: LazyLock<Vec<AgentSpec>> = LazyLock::new(|| {
    crate::AGENTS
        .iter()
        .map(|(_, spec, _)| with_pin(spec()))
        .collect()
});

/// Every agent's spec: the built-in ones, then the ACP agents (presets and the user's
/// own from `<state_dir>/agents.json`, read now).
pub fn specs_in(state_dir: &Path) -> Vec<AgentSpec> {
    let mut all = BUILT_IN.clone();
    all.extend(
        weft_acp::spec::specs(state_dir)
            .into_iter()
            .filter(|s| !BUILT_IN.iter().any(|b| b.id == s.id))
            .map(with_pin),
    );
    all
}

/// Every agent's spec, with the user's ACP agents of the global state folder.
pub fn specs() -> Vec<AgentSpec> {
    specs_in(&weft_kernel::state::global_state_dir())
}

/// The spec of a built-in (non-ACP) agent, read without a file.
pub fn built_in(id: &str) -> Option<&'static AgentSpec> {
    BUILT_IN.iter().find(|s| s.id == id)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn agents_toml_parses_and_pins_every_spec() {
        let pins = pins::parse().unwrap();
        assert!(!pins.npm.is_empty() && !pins.pypi.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let all = specs_in(dir.path());
        assert!(
            all.iter().any(|s| s.id == "hermes"),
            "the ACP presets are listed"
        );
        for spec in &all {
            let Some(install) = &spec.install else {
                continue;
            };
            assert!(
                !install.version.is_empty(),
                "{}: agents.toml pins no {}",
                spec.id,
                install.package.name()
            );
        }
        for id in ["claude", "codex", "gemini"] {
            assert!(all.iter().any(|s| s.id == id && s.install.is_some()));
        }
    }

    #[test]
    fn each_built_in_driver_declares_its_own_spec() {
        for (driver, spec, _) in crate::AGENTS {
            let (driver, spec) = (driver(), spec());
            assert_eq!(driver.id(), spec.id);
            assert_eq!(driver.name(), spec.name);
            assert_eq!(driver.capabilities(), spec.can.capabilities, "{}", spec.id);
        }
    }

    #[test]
    fn the_pins_are_the_tested_versions() {
        let npm = |name: &str| Package::Npm { name: name.into() };
        assert_eq!(pinned(&npm("@google/gemini-cli")), Some("0.61.0"));
        assert_eq!(pinned(&npm("nothing-of-that-name")), None);
    }
}
