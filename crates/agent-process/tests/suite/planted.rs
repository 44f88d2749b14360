//! Nothing planted in the current folder is found, whatever PATH says.

use std::ffi::OsStr;

use weft_agent_process::planted::PlantedFolder;
use weft_agent_process::{find_agent, find_program};

#[test]
fn an_executable_planted_in_the_current_folder_is_never_found() {
    let planted = PlantedFolder::new("weft-planted-agent").unwrap();
    let path = planted.relative_path_var();
    assert_eq!(
        find_program("weft-planted-agent", Some(OsStr::new(&path))),
        None
    );
    assert_eq!(find_program("./weft-planted-agent", None), None);
    assert_eq!(find_program("bin/weft-planted-agent", None), None);
    let var = |name: &str| (name == "PATH").then(|| path.clone());
    let err = find_agent("weft-planted-agent", &["WEFT_PLANTED_BIN"], &var).unwrap_err();
    assert!(err.contains("was not found"), "{err}");
    // As a control: by absolute path, or with its folder on PATH as an absolute
    // entry, it is found; so it is the relative lookup that is refused.
    let abs = planted.path().join("bin");
    assert!(find_program("weft-planted-agent", Some(abs.as_os_str())).is_some());
    assert!(!planted.ran());
}
