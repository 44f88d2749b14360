//! A small MCP server over stdio for the native agent's tests, built with rmcp (the
//! official SDK): `echo` (read-only) and `write_file` (mutating).

mod server;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    use rmcp::ServiceExt;
    let Ok(running) = server::Fixture::default()
        .serve(rmcp::transport::stdio())
        .await
    else {
        std::process::exit(1);
    };
    let _ = running.waiting().await;
}
