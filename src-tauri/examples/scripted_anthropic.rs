//! A scripted Anthropic Messages server on loopback for the app's real-`claude` e2e
//! turn (ui/e2e/claude.e2e.test.mjs): prints its base URL, then serves until killed.
//! The script: a Bash tool call (which needs the user's permission), then a reply;
//! and a second permission that the test leaves pending while it kills the app.

use serde_json::json;
use weft_testkit::anthropic::when;
use weft_testkit::{AnthropicServer, Script, Turn};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let script = Script::new()
        .turn_when(
            when::user_text_contains("please write the file"),
            Turn::new().text("Writing the file.").tool_use(
                "toolu_app1",
                "Bash",
                json!({"command": "echo app-e2e > app-e2e.txt", "description": "write app-e2e.txt"}),
            ),
        )
        .turn_when(
            when::tool_result_for("toolu_app1"),
            Turn::text_reply("Wrote app-e2e.txt for you."),
        )
        // Continue on the user's own Claude session, from the sidebar (ui/e2e/library.e2e.test.mjs):
        // a rule, answered whichever queued turns the other suites left.
        .rule(
            when::user_text_contains("carry on from the native session"),
            Turn::text_reply("Carried on from your own session."),
        )
        // The app is killed while this permission is pending.
        .turn_when(
            when::user_text_contains("ask and wait"),
            Turn::new().tool_use(
                "toolu_app2",
                "Bash",
                json!({"command": "echo never > never.txt", "description": "never runs"}),
            ),
        );
    let server = AnthropicServer::start(script).await?;
    println!("{}", server.base_url());
    // Serve until the test kills us.
    std::future::pending::<()>().await;
    Ok(())
}
