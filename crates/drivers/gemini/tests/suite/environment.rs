//! Where `gemini` comes from: never the current folder, on either rail. (Whose
//! environment it gets is the ACP driver's, tested there with its fake agent: a turn
//! whose environment differs from the live process's cannot continue it, and the
//! Gemini driver then resumes in a new headless process, started from that turn's
//! environment.)

use std::sync::Arc;

use weft_agent_process::planted::PlantedFolder;
use weft_gemini::GeminiDriver;
use weft_kernel::driver::AgentTurnInput;
use weft_kernel::AgentDriver;
use weft_protocol::ClientEnv;

#[test]
fn gemini_is_never_looked_up_in_the_current_folder() {
    let planted = PlantedFolder::new("gemini").unwrap();
    let path = planted.relative_path_var();
    let var = |n: &str| (n == "PATH").then(|| path.clone());
    // Found elsewhere (the project-local install above this test binary) or not at
    // all; never the planted one.
    if let Ok(found) = weft_gemini::acp_spec().find_binary(&var) {
        assert!(!planted.is_planted(&found), "{}", found.display());
    }
    let mut env = ClientEnv::default();
    env.0.insert("PATH".into(), path.clone());
    let input = AgentTurnInput {
        workdir: planted.path().to_path_buf(),
        client_env: Some(Arc::new(env)),
        ..Default::default()
    };
    if let Some(tui) = GeminiDriver::new().tui(&input) {
        assert!(
            !planted.is_planted(&tui.program),
            "{}",
            tui.program.display()
        );
    }
    assert!(!planted.ran());
}
