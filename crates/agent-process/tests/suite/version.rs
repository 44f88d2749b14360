//! An npm-installed agent's version is read from its package, not by running it.

use std::os::unix::fs::PermissionsExt;

use weft_agent_process::npm_package_version;

#[test]
fn an_npm_bin_link_reads_its_packages_version_and_a_bare_program_reads_none() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let pkg = dir.path().join("node_modules/@vendor/agent");
    std::fs::create_dir_all(pkg.join("bin")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        pkg.join("package.json"),
        r#"{"name":"@vendor/agent","version":"1.2.3","bin":{"agent":"bin/agent.js"}}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Running it would fail the test: the version must come from package.json.
    let script = pkg.join("bin/agent.js");
    std::fs::write(&script, "#!/bin/sh\nexit 99\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    let bin = dir.path().join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink("../@vendor/agent/bin/agent.js", bin.join("agent"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        npm_package_version(&bin.join("agent")).as_deref(),
        Some("1.2.3")
    );

    // A program outside any npm package (or one whose package.json names no bin).
    let bare = dir.path().join("bare");
    std::fs::write(&bare, "#!/bin/sh\necho 9.9.9\n").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(npm_package_version(&bare), None);
    std::fs::write(pkg.join("package.json"), r#"{"version":"1.2.3"}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(npm_package_version(&bin.join("agent")), None);
}
