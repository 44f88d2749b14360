//! Search tools of the coding pack on ripgrep's own crates: `glob` (ignore's walker,
//! .gitignore honoured, globset) and `grep` (grep-regex + grep-searcher).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use grep_regex::RegexMatcher;
use grep_searcher::sinks::UTF8;
use grep_searcher::Searcher;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::ToolKind;

use super::{field, Native, Spec, ToolCx, ToolOutput};

const MAX_FILES: usize = 1000;
const MAX_MATCHES: usize = 500;

fn walk(root: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build()
}

fn matcher(pattern: &str) -> Result<globset::GlobMatcher, String> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| format!("bad glob {pattern:?}: {e}"))
}

/// `glob {pattern}`: files whose workspace-relative path matches.
pub struct Glob;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct GlobArgs {
    pattern: String,
}

#[async_trait]
impl Native for Glob {
    const SPEC: Spec = Spec {
        name: "glob",
        description: "Find files in the workspace whose relative path matches a glob (e.g. **/*.rs); .gitignore is honoured.",
        read_only: true,
        kind: ToolKind::Search,
    };
    type Args = GlobArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("glob {}", field(input, "pattern"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let m = match matcher(&a.pattern) {
            Ok(m) => m,
            Err(e) => return ToolOutput::error(e),
        };
        let root = cx.root().to_path_buf();
        let found = tokio::task::spawn_blocking(move || {
            let mut found = Vec::new();
            for entry in walk(&root).flatten() {
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
                if m.is_match(rel) {
                    found.push(rel.display().to_string());
                    if found.len() > MAX_FILES {
                        break;
                    }
                }
            }
            found.sort();
            found
        })
        .await
        .unwrap_or_default();
        listing(
            found,
            MAX_FILES,
            "no files match",
            "files; narrow the pattern",
        )
    }
}

/// `grep {pattern, path?, glob?}`: lines matching a regex, as `path:line:text`.
pub struct Grep;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
}

#[async_trait]
impl Native for Grep {
    const SPEC: Spec = Spec {
        name: "grep",
        description: "Search file contents with a regular expression (Rust regex syntax). Optional path (a file or folder) and glob filter. Prints path:line:text.",
        read_only: true,
        kind: ToolKind::Search,
    };
    type Args = GrepArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("grep {}", field(input, "pattern"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let regex = match RegexMatcher::new(&a.pattern) {
            Ok(r) => r,
            Err(e) => return ToolOutput::error(format!("bad pattern {:?}: {e}", a.pattern)),
        };
        let filter = match a.glob.as_deref().map(matcher).transpose() {
            Ok(f) => f,
            Err(e) => return ToolOutput::error(e),
        };
        let start = match cx.workspace.resolve(a.path.as_deref().unwrap_or(".")) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        let root = cx.root().to_path_buf();
        let lines =
            tokio::task::spawn_blocking(move || grep(&root, &start, &regex, filter.as_ref()))
                .await
                .unwrap_or_default();
        listing(
            lines,
            MAX_MATCHES,
            "no matches",
            "matches; narrow the search",
        )
    }
}

/// `items` one a line, at most `max` of them; `none` when there are none, and a note
/// of more than `max` `more` when some were left out (the walk stops just past `max`).
fn listing(items: Vec<String>, max: usize, none: &str, more: &str) -> ToolOutput {
    if items.is_empty() {
        return ToolOutput::ok(none);
    }
    let cut = items.len() > max;
    let mut out = items.into_iter().take(max).collect::<Vec<_>>().join("\n");
    if cut {
        out.push_str(&format!("\n[more than {max} {more}]"));
    }
    ToolOutput::ok(out)
}

fn grep(
    root: &Path,
    start: &Path,
    regex: &RegexMatcher,
    filter: Option<&globset::GlobMatcher>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut searcher = Searcher::new();
    let files: Vec<PathBuf> = if start.is_file() {
        vec![start.to_path_buf()]
    } else {
        walk(start)
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.into_path())
            .collect()
    };
    for path in files {
        let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        if filter
            .is_some_and(|f| !f.is_match(&rel) && !f.is_match(rel.file_name().unwrap_or_default()))
        {
            continue;
        }
        let shown = rel.display().to_string();
        let _ = searcher.search_path(
            regex,
            &path,
            UTF8(|line, text| {
                out.push(format!("{shown}:{line}:{}", text.trim_end()));
                Ok(out.len() <= MAX_MATCHES)
            }),
        );
        if out.len() > MAX_MATCHES {
            break;
        }
    }
    out
}
