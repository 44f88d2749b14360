//! The fixture MCP server's tools, shared by the stdio binary and the HTTP test.

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler};

/// `echo` arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// What to say back.
    pub text: String,
}

/// `write_file` arguments.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct WriteArgs {
    /// A file name in the server's folder.
    pub name: String,
    /// Its content.
    pub text: String,
}

/// Two tools: a read-only echo and a mutating file write.
#[derive(Debug, Clone)]
pub struct Fixture {
    tool_router: ToolRouter<Self>,
}

impl Default for Fixture {
    fn default() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl Fixture {
    /// Says the text back.
    #[tool(description = "Say the text back", annotations(read_only_hint = true))]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        format!("fixture echo: {text}")
    }

    /// Writes a file in the current folder.
    #[tool(description = "Write a file in the server's folder")]
    fn write_file(&self, Parameters(WriteArgs { name, text }): Parameters<WriteArgs>) -> String {
        match std::fs::write(&name, text) {
            Ok(()) => format!("wrote {name}"),
            Err(e) => format!("cannot write {name}: {e}"),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}
