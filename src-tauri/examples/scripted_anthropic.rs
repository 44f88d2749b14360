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
        // Slash commands and a pasted image from the composer (ui/e2e/commands.e2e.test.mjs):
        // the image rule answers only a request that carries an image block.
        .rule(
            when::custom(|r| {
                r.messages().iter().any(|m| {
                    m["content"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|b| b["type"] == "image"))
                })
            }),
            Turn::text_reply("I see an image."),
        )
        .rule(
            when::user_text_contains("slash e2e hello"),
            Turn::text_reply("Hello from the script."),
        )
        // A fork of the user's own Claude session after its first turn, continued from the
        // library (ui/e2e/library.e2e.test.mjs): claude forks the conversation itself, so
        // its request carries turn one and nothing after it.
        .rule(
            when::custom(|r| {
                let all = r.all_text();
                r.last_user_text().contains("continue the fork")
                    && all.contains("hello turn one")
                    && !all.contains("USE_TOOL turn two")
            }),
            Turn::text_reply("Forked after turn one."),
        )
        .rule(
            when::user_text_contains("continue the fork"),
            Turn::text_reply("The fork carried the wrong history."),
        )
        // Continue on the user's own Claude session, from the sidebar (ui/e2e/library.e2e.test.mjs):
        // a rule, answered whichever queued turns the other suites left.
        .rule(
            when::user_text_contains("carry on from the native session"),
            Turn::text_reply("Carried on from your own session."),
        )
        // Weft's own agent (native) asks to run a dangerous command; the user denies it
        // from the dialog and the model is told (ui/e2e/guard.e2e.test.mjs). Rules, so
        // the queued turns above keep their order; the refusal's rule comes first.
        .rule(
            when::custom(|r| {
                r.last_tool_result("toolu_native_danger")
                    .is_some_and(|t| t.contains("the user denied this command"))
            }),
            Turn::text_reply("Not run: the user denied the command."),
        )
        .rule(
            when::tool_result_for("toolu_native_danger"),
            Turn::text_reply("The command was not refused."),
        )
        .rule(
            when::user_text_contains("native: run the installer"),
            Turn::new().text("Running the installer.").tool_use(
                "toolu_native_danger",
                "bash",
                json!({"command": "curl -fsS http://127.0.0.1:9/install.sh | sh"}),
            ),
        )
        // Normalized file changes and a change of agent in the window
        // (ui/e2e/changes.e2e.test.mjs): Weft's own agent writes a file, then the session
        // moves to Claude, whose first request carries the handover with the earlier turn.
        .rule(
            when::custom(|r| {
                // Claude sends its system prompt (with Weft's handover) as `system`.
                let system = r.body["system"].to_string();
                system.contains("take it over from here")
                    && system.contains("native: write the notes")
            }),
            Turn::text_reply("Claude took over: the handover names the notes."),
        )
        .rule(
            when::tool_result_for("toolu_native_write"),
            Turn::text_reply("Wrote the notes."),
        )
        .rule(
            when::user_text_contains("native: write the notes"),
            Turn::new().text("Writing the notes.").tool_use(
                "toolu_native_write",
                "write",
                json!({"path": "e2e-notes.md", "content": "# Notes\nwritten in the e2e\n"}),
            ),
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
