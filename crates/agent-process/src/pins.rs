//! The agent CLIs Weft is tested with: `agents.toml` at the repository's root, the one
//! list of pins. `scripts/setup.sh` installs from it; it is embedded here when Weft is
//! built, so `weft agents install`, the Agents view and each driver's spec (through the
//! registry) name the same versions.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

/// The file, as built in.
pub const AGENTS_TOML: &str = include_str!("../../../agents.toml");

/// `agents.toml`: package name → exact version, per registry.
#[derive(Debug, Default, Deserialize)]
pub struct Pins {
    /// npm packages.
    #[serde(default)]
    pub npm: BTreeMap<String, String>,
    /// PyPI packages (extras included in the name).
    #[serde(default)]
    pub pypi: BTreeMap<String, String>,
}

/// The embedded file, parsed.
pub fn parse() -> Result<Pins, String> {
    toml::from_str(AGENTS_TOML).map_err(|e| format!("agents.toml does not parse: {e}"))
}

static PINS: LazyLock<Pins> = LazyLock::new(|| {
    // A test keeps the file parsing; a build that broke it still runs its agents.
    parse().unwrap_or_default()
});

/// The version `agents.toml` pins npm package `name` to.
pub fn npm(name: &str) -> Option<&'static str> {
    PINS.npm.get(name).map(String::as_str)
}

/// The version `agents.toml` pins PyPI package `name` to.
pub fn pypi(name: &str) -> Option<&'static str> {
    PINS.pypi.get(name).map(String::as_str)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn the_pins_parse() {
        let pins = super::parse().unwrap();
        assert!(!pins.npm.is_empty() && !pins.pypi.is_empty());
        assert_eq!(super::npm("nothing-of-that-name"), None);
    }
}
