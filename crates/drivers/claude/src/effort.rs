//! Which reasoning efforts each Claude model takes, as Claude Code decides it: its
//! model table marks `effort`, `max_effort` and `xhigh_effort` per model, and models
//! before those marks (Claude 3, Opus 4.0/4.1, Sonnet 4.0/4.5, Haiku 4.5) take none.
//! Claude Code quietly lowers an effort a model does not take (`max` to `high`), so a
//! composer offers only the ones that hold.

/// Every effort the CLI knows, lowest first.
pub const ALL: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// The efforts `model` (an alias such as `opus`, or a full id, perhaps with a `[1m]`
/// suffix or a date) takes; the whole list for the CLI's default and for a model this
/// table does not know (a newer one).
pub fn for_model(model: &str) -> Vec<String> {
    let m = model.trim().to_ascii_lowercase();
    let m = m.split('[').next().unwrap_or_default();
    let id = match m {
        "opus" => "claude-opus-4-8",
        "sonnet" => "claude-sonnet-5",
        "haiku" => "claude-haiku-4-5",
        "fable" => "claude-fable-5",
        other => other,
    };
    let is = |name: &str| id == name || id.starts_with(&format!("{name}-"));
    let takes: &[&str] = if id.contains("claude-3-")
        || ["claude-opus-4-0", "claude-opus-4-1", "claude-sonnet-4-0"]
            .into_iter()
            .any(is)
        || is("claude-sonnet-4-5")
        || is("claude-haiku-4-5")
        || id == "claude-opus-4"
        || id == "claude-sonnet-4"
    {
        &[]
    } else if is("claude-opus-4-5") {
        &ALL[..3]
    } else if is("claude-opus-4-6") || is("claude-sonnet-4-6") {
        &["low", "medium", "high", "max"]
    } else {
        &ALL
    };
    takes.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::for_model;

    #[test]
    fn each_model_takes_the_efforts_the_cli_gives_it() {
        assert!(for_model("haiku").is_empty());
        assert!(for_model("claude-sonnet-4-5-20250929").is_empty());
        assert_eq!(for_model("claude-opus-4-5"), ["low", "medium", "high"]);
        assert_eq!(
            for_model("claude-sonnet-4-6"),
            ["low", "medium", "high", "max"]
        );
        assert_eq!(
            for_model("opus[1m]"),
            ["low", "medium", "high", "xhigh", "max"]
        );
        assert_eq!(for_model("default").len(), 5);
    }
}
