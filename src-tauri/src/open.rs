//! Opening the files agents point at (an artifact, a tool call's path): in the user's
//! editor when one is configured, else with the desktop's handler; never through a
//! shell. Links (http, https, mailto) open through the opener plugin's own scoped
//! command (capabilities/main.json), not here.
//!
//! The editor is `WEFT_OPEN_WITH` (a program and its arguments, split on whitespace),
//! else `openWith` (an array: program, arguments) in `<state_dir>/settings.json`. The
//! path is its last argument, absolute (so it cannot read as an option).
//!
//! Without an editor, the desktop's handler gets only files of an inert type (text,
//! source, data, images, PDF), by extension and by content: a relative link in agent
//! markdown is one click, and the handler of a `.jar`, `.exe`, `.jnlp`, `.desktop` or
//! `.AppImage` runs it. Anything else is shown in the file manager instead.

use std::path::{Path, PathBuf};
use std::process::Command;

const SETTINGS: &str = "settings.json";

/// The configured editor command, if any: `env_value` wins over the settings file.
pub fn open_with(state_dir: &Path, env_value: Option<String>) -> Option<Vec<String>> {
    if let Some(v) = env_value {
        let argv: Vec<String> = v.split_whitespace().map(str::to_string).collect();
        if !argv.is_empty() {
            return Some(argv);
        }
    }
    let text = std::fs::read_to_string(state_dir.join(SETTINGS)).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let argv: Vec<String> = value
        .get("openWith")?
        .as_array()?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    (!argv.is_empty()).then_some(argv)
}

/// The file `path` names (a `file://` URL, an absolute path, or one relative to the
/// session's `workdir`), made absolute; it must exist.
pub fn resolve(path: &str, workdir: Option<&str>) -> Result<PathBuf, String> {
    let raw = path.strip_prefix("file://").unwrap_or(path);
    if raw.is_empty() {
        return Err("no path given".into());
    }
    let p = Path::new(raw);
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        match workdir {
            Some(w) => Path::new(w).join(p),
            None => return Err(format!("`{raw}` is relative and the session has no folder")),
        }
    };
    std::fs::canonicalize(&joined).map_err(|e| format!("`{}`: {e}", joined.display()))
}

/// What opening `target` does.
#[derive(Debug, PartialEq, Eq)]
pub enum How {
    /// Run this program with these arguments (the path last).
    Run(String, Vec<String>),
    /// The desktop's handler for the file.
    Default,
    /// Show it in the file manager: a folder, or a file whose type is not known to be
    /// inert (the desktop might run it rather than open it).
    Reveal,
}

/// Extensions the desktop's handler opens to be read, never run: text, documents and
/// source in languages no desktop runs on a double click, data, images, PDF. Scripts
/// (`.sh`, `.py`), web pages (`.html`, `.svg`, which a browser would run) and
/// everything not named here are revealed instead.
const INERT: [&[&str]; 4] = [TEXT, DATA, SOURCE, IMAGES];
const TEXT: &[&str] = &[
    "txt", "text", "md", "markdown", "rst", "adoc", "org", "tex", "log", "pdf",
];
const DATA: &[&str] = &[
    "csv", "tsv", "json", "jsonl", "ndjson", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml",
    "lock", "diff", "patch", "sql",
];
const SOURCE: &[&str] = &[
    "rs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "go", "java", "kt", "kts", "scala", "swift",
    "cs", "fs", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "css", "scss", "sass",
    "less", "svelte", "vue", "proto", "graphql", "zig", "nim", "dart", "ex", "exs", "erl", "hs",
    "ml", "mli", "clj", "elm",
];
const IMAGES: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "bmp", "avif", "ico", "tif", "tiff",
];

/// True when `target`'s type is inert: an [`INERT`] extension, and content that is not
/// some other, runnable kind of file in disguise (an archive or program named `.txt`).
pub fn inert(target: &Path) -> bool {
    let Some(ext) = target.extension().and_then(|e| e.to_str()) else {
        return false;
    };
    let ext = ext.to_ascii_lowercase();
    if !INERT.iter().any(|list| list.contains(&ext.as_str())) {
        return false;
    }
    match infer::get_from_path(target) {
        Ok(None) => true,
        Ok(Some(kind)) => {
            matches!(
                kind.matcher_type(),
                infer::MatcherType::Image | infer::MatcherType::Text
            ) || kind.mime_type() == "application/pdf"
        }
        Err(_) => false,
    }
}

/// Decides how to open `target` (absolute, existing).
pub fn how(target: &Path, with: Option<&[String]>) -> How {
    if let Some((program, args)) = with.and_then(|w| w.split_first()) {
        let mut args = args.to_vec();
        args.push(target.display().to_string());
        return How::Run(program.clone(), args);
    }
    if target.is_file() && !executable(target) && inert(target) {
        How::Default
    } else {
        How::Reveal
    }
}

/// An executable file is revealed whatever its name says.
fn executable(target: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(target).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Starts `program args…` directly (no shell) and reaps it when it exits.
pub fn run(program: &str, args: &[String]) -> std::io::Result<()> {
    let mut child = Command::new(program).args(args).spawn()?;
    std::thread::spawn(move || child.wait());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_file_urls_absolute_and_workspace_relative_paths() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("src/a b.rs");
        std::fs::create_dir_all(file.parent().unwrap_or(dir.path()))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&file, "x").unwrap_or_else(|e| panic!("{e}"));
        let canonical = std::fs::canonicalize(&file).unwrap_or_else(|e| panic!("{e}"));
        let w = dir.path().to_str();
        assert_eq!(resolve("src/a b.rs", w), Ok(canonical.clone()));
        assert_eq!(
            resolve(&format!("file://{}", file.display()), None),
            Ok(canonical.clone())
        );
        assert_eq!(resolve(&file.display().to_string(), None), Ok(canonical));
        assert!(resolve("src/none.rs", w).is_err());
        assert!(resolve("src/a b.rs", None).is_err());
        assert!(resolve("", w).is_err());
    }

    #[test]
    fn the_editor_gets_the_absolute_path_as_its_last_argument_else_the_desktop_handler() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let doc = dir.path().join("-rf.md");
        std::fs::write(&doc, "x").unwrap_or_else(|e| panic!("{e}"));
        let with = vec!["code".to_string(), "--goto".to_string()];
        assert_eq!(
            how(&doc, Some(&with)),
            How::Run(
                "code".into(),
                vec!["--goto".into(), doc.display().to_string()]
            )
        );
        assert_eq!(how(&doc, None), How::Default);
        assert_eq!(how(dir.path(), None), How::Reveal);
        let launcher = dir.path().join("evil.desktop");
        std::fs::write(&launcher, "[Desktop Entry]").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(how(&launcher, None), How::Reveal);
        let script = dir.path().join("run.sh");
        std::fs::write(&script, "#!/bin/sh").unwrap_or_else(|e| panic!("{e}"));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(how(&script, None), How::Reveal);
    }

    #[test]
    fn only_inert_files_go_to_the_desktops_handler_the_rest_is_revealed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap_or_else(|e| panic!("{e}"));
            p
        };
        let zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00rest of a jar";
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(64, 0);
        let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR";
        for runs in [
            file("app.jar", zip),
            file("setup.exe", b"MZ\x90\x00"),
            file("start.jnlp", b"<jnlp/>"),
            file("evil.desktop", b"[Desktop Entry]"),
            file("tool.AppImage", &elf),
            file("pkg.deb", b"!<arch>"),
            file("page.html", b"<script>x</script>"),
            file("pic.svg", b"<svg/>"),
            file("run.sh", b"echo hi"),
            file("Makefile", b"all:"),
            // A program or archive named as text.
            file("notes.txt", zip),
            file("README.md", &elf),
        ] {
            assert_eq!(how(&runs, None), How::Reveal, "{}", runs.display());
        }
        for reads in [
            file("notes.txt", b"plain words"),
            file("main.rs", b"fn main() {}"),
            file("Data.JSON", b"{}"),
            file("shot.png", png),
            file("paper.pdf", b"%PDF-1.7\n"),
        ] {
            assert_eq!(how(&reads, None), How::Default, "{}", reads.display());
        }
    }

    #[test]
    fn the_editor_comes_from_the_environment_else_the_settings_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(open_with(dir.path(), None), None);
        std::fs::write(
            dir.path().join(SETTINGS),
            r#"{"openWith": ["gedit", "-s"]}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            open_with(dir.path(), None),
            Some(vec!["gedit".into(), "-s".into()])
        );
        assert_eq!(
            open_with(dir.path(), Some("nvim-qt  --nofork".into())),
            Some(vec!["nvim-qt".into(), "--nofork".into()])
        );
        assert_eq!(
            open_with(dir.path(), Some(" ".into())),
            Some(vec!["gedit".into(), "-s".into()])
        );
    }
}
