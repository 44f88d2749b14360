//! `weft mcp import` and `weft skills import`: what the user set up in the agents
//! themselves (their own MCP files, their own skills folders), brought into Weft by
//! the daemon's `importAgentSetup`, and the report of what was found and done.

use std::process::ExitCode;

use weft_protocol::{verb, AgentSetupImport, ImportOutcome};

use crate::client;
use crate::list::print_json;

/// What to import and how to say it.
pub(crate) struct ImportArgs {
    pub servers: bool,
    pub skills: bool,
    pub dry_run: bool,
    pub json: bool,
}

pub(crate) async fn run(daemon: &client::Daemon, args: ImportArgs) -> ExitCode {
    let report = match daemon
        .send(verb::ImportAgentSetup {
            dry_run: args.dry_run,
            servers: args.servers,
            skills: args.skills,
        })
        .await
    {
        Ok(r) => r,
        Err(code) => return code,
    };
    if args.json {
        return print_json(&report);
    }
    print(&report, args.servers, args.skills);
    ExitCode::SUCCESS
}

fn outcome(o: ImportOutcome, dry_run: bool) -> &'static str {
    match o {
        ImportOutcome::Added if dry_run => "would add",
        ImportOutcome::Added => "added",
        ImportOutcome::Exists => "exists",
        ImportOutcome::Duplicate => "duplicate",
        ImportOutcome::Unsupported => "skipped",
        ImportOutcome::Failed => "failed",
    }
}

fn print(r: &AgentSetupImport, servers: bool, skills: bool) {
    let added = |o: &ImportOutcome| *o == ImportOutcome::Added;
    if servers {
        if r.servers.is_empty() {
            out!("no MCP servers found in the agents' own configuration");
        }
        for s in &r.servers {
            let what = crate::mcp::runs(s.command.as_deref(), &s.args, s.url.as_deref());
            out!(
                "{:<10} {:<20} {:<8} {what}",
                outcome(s.outcome, r.dry_run),
                s.name,
                s.agent
            );
            out!("    from {}", s.source);
            if !s.env_names.is_empty() {
                out!("    env and headers: {}", s.env_names.join(", "));
            }
            if let Some(note) = &s.note {
                out!("    {note}");
            }
        }
        let n = r.servers.iter().filter(|s| added(&s.outcome)).count();
        if r.dry_run {
            out!(
                "{n} server(s) would be added to {} (dry run: nothing written)",
                r.mcp_file
            );
        } else {
            out!("{n} server(s) added to {}", r.mcp_file);
        }
    }
    if skills {
        if r.skills.is_empty() {
            out!("no skills found in the agents' own skills folders");
        }
        for s in &r.skills {
            out!(
                "{:<10} {:<24} {:<8} {}",
                outcome(s.outcome, r.dry_run),
                s.name,
                s.agent,
                s.source
            );
            if let Some(note) = &s.note {
                out!("    {note}");
            }
        }
        let n = r.skills.iter().filter(|s| added(&s.outcome)).count();
        if r.dry_run {
            out!("{n} skill(s) would be added (dry run: nothing copied)");
        } else {
            out!("{n} skill(s) added");
        }
    }
    for p in &r.problems {
        eprintln!("weft: {p}");
    }
}
