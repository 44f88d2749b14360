//! The argument schemas the model sees: derived from the tools' argument types, they
//! must stay what the hand-written schemas said (names, types, bounds, required).

use std::sync::Arc;

use serde_json::{json, Value};
use weft_native::pack::{self, BUILTIN};
use weft_native::skills::{MemoryList, MemorySave, SkillTool};
use weft_native::subagent::Task;
use weft_native::tools::builtin::{AskUser, UpdatePlan};
use weft_native::tools::ToolRef;

fn expected() -> Vec<(&'static str, Value)> {
    let none = || json!({"type": "object", "properties": {}});
    let strings = |names: &[&str]| {
        let props: serde_json::Map<String, Value> = names
            .iter()
            .map(|n| (n.to_string(), json!({"type": "string"})))
            .collect();
        json!({"type": "object", "properties": props, "required": names})
    };
    vec![
        (
            "read",
            json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "file path, relative to the workspace"},
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1}},
            "required": ["path"]}),
        ),
        ("ls", strings(&["path"])),
        ("glob", strings(&["pattern"])),
        (
            "grep",
            json!({"type": "object", "properties": {
            "pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"}},
            "required": ["pattern"]}),
        ),
        ("write", strings(&["path", "content"])),
        ("edit", strings(&["path", "old_text", "new_text"])),
        (
            "bash",
            json!({"type": "object", "properties": {
            "command": {"type": "string"},
            "timeout_secs": {"type": "integer", "minimum": 1, "maximum": 1800}},
            "required": ["command"]}),
        ),
        ("git_status", none()),
        ("git_diff", none()),
        ("git_log", none()),
        ("git_commit", strings(&["message"])),
        ("notes_list", none()),
        ("notes_search", strings(&["query"])),
        ("notes_read", strings(&["name"])),
        ("notes_add", strings(&["name", "content"])),
        (
            "list_tables",
            json!({"type": "object", "properties": {
            "db": {"type": "string", "description": "database file, relative to the workspace"}}}),
        ),
        ("describe_table", strings(&["db", "table"])),
        ("query", strings(&["db", "sql"])),
        ("exec", strings(&["db", "sql"])),
        (
            "update_plan",
            json!({"type": "object", "properties": {
            "explanation": {"type": "string"},
            "steps": {"type": "array", "items": {"type": "object", "properties": {
                "text": {"type": "string"},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}},
                "required": ["text"]}}},
            "required": ["steps"]}),
        ),
        (
            "ask_user",
            json!({"type": "object", "properties": {
            "question": {"type": "string"},
            "choices": {"type": "array", "items": {"type": "string"}},
            "multiple": {"type": "boolean",
                "description": "the user may pick several of the choices"},
            "other": {"type": "boolean",
                "description": "the user may also answer in their own words"}},
            "required": ["question"]}),
        ),
        ("skill", strings(&["name"])),
        ("memory_save", strings(&["text"])),
        ("memory_list", none()),
        (
            "task",
            json!({"type": "object", "properties": {
            "description": {"type": "string", "description": "3-5 words"},
            "prompt": {"type": "string"}},
            "required": ["description", "prompt"]}),
        ),
    ]
}

#[test]
fn every_native_tool_shows_the_schema_it_always_showed() {
    let mut tools: Vec<ToolRef> = BUILTIN
        .iter()
        .flat_map(|name| pack::builtin(name).unwrap().tools())
        .collect();
    tools.extend([
        Arc::new(UpdatePlan) as ToolRef,
        Arc::new(AskUser),
        Arc::new(SkillTool(Vec::new())),
        Arc::new(MemorySave),
        Arc::new(MemoryList),
        Arc::new(Task),
    ]);
    let expected = expected();
    for (name, schema) in &expected {
        let tool = tools
            .iter()
            .find(|t| t.name() == *name)
            .unwrap_or_else(|| panic!("no tool {name}"));
        assert_eq!(&tool.schema(), schema, "the schema of {name}");
    }
    assert_eq!(
        tools.len(),
        expected.len(),
        "a tool without an expected schema"
    );
}
