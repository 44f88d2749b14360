//! A workspace's files, for the composer's `@path` completion: the request names the
//! workspace and what was typed after `@`; the reply lists matching paths relative to
//! the workspace, best match first. The daemon walks the folder (respecting
//! `.gitignore`, never leaving it); the mention itself travels as `@path` in the
//! prompt's text.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What `listWorkspaceFiles` asks: the files of a workspace matching what follows `@`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceFilesQuery {
    /// The workspace folder, absolute.
    pub workspace: String,
    /// What was typed after `@`: matched fuzzily against each relative path (empty:
    /// the shallowest paths). A query naming a place outside the workspace (`..`, an
    /// absolute path) is refused.
    #[serde(default)]
    pub query: String,
    /// At most this many (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// What a listed path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum WorkspaceEntryKind {
    /// A file (or a link, which is listed but never followed).
    File,
    /// A folder.
    Dir,
}

/// One path of a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceEntry {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    /// File or folder.
    pub kind: WorkspaceEntryKind,
}

/// One entry of a folder listed by `listDir` (the workspace picker's folder browser).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DirEntry {
    /// Its name in the folder.
    pub name: String,
    /// A folder (a link to a folder counts as one: opening it lists where it points).
    pub is_dir: bool,
    /// A folder that is a git repository (holds `.git`).
    pub is_repo: bool,
}

/// A file as `readFile` answers it: at most the bytes asked for, from its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    /// The file read, absolute and with its links resolved.
    pub path: String,
    /// Its whole size in bytes.
    #[ts(type = "number")]
    pub size: u64,
    /// Only its first bytes were read (it is bigger than asked for).
    pub truncated: bool,
    /// The bytes read, base64.
    pub data: String,
}

/// A folder as `listDir` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DirListing {
    /// The folder listed, absolute and with its links resolved.
    pub path: String,
    /// Its parent folder (none at `/`).
    pub parent: Option<String>,
    /// The daemon's user's home folder, where a browser starts.
    pub home: String,
    /// Whether the folder itself is a git repository.
    pub is_repo: bool,
    /// Its entries, folders first, then by name; hidden ones (a leading `.`) included.
    pub entries: Vec<DirEntry>,
}
