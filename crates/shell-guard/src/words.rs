//! A word of the command line after quote removal: its static value when the parser
//! can know it, and whether quoting or escapes changed how it reads.

use tree_sitter::Node;

/// One resolved word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The value after quote removal and escape decoding; `None` when part of it is
    /// only known at run time (a variable, a command substitution…).
    pub value: Option<String>,
    /// The word as written.
    pub raw: String,
    /// An unquoted glob character (`*`, `?`, `[`) is in it.
    pub glob: bool,
    /// Quotes, backslashes or `$'…'` escapes were needed to read it.
    pub quoted: bool,
    /// The dynamic parts, as written (`$cmd`, `$(printf …)`), for reasons.
    pub dynamic: Vec<String>,
    /// It contains a command or process substitution.
    pub substitution: bool,
    /// An arithmetic context in it reads a variable (`$((x))`, `${a[x]}`, `${s:x}`):
    /// bash evaluates a variable's value as arithmetic there, and `a[$(cmd)]` in that
    /// value runs `cmd`.
    pub arith_var: bool,
    /// The variables it expands (`!` for an indirect `${!x}`).
    pub vars: Vec<String>,
}

impl Word {
    /// A word known only by its text (an argument the caller adds).
    pub fn literal(s: &str) -> Self {
        Self {
            value: Some(s.to_string()),
            raw: s.to_string(),
            glob: false,
            quoted: false,
            dynamic: Vec::new(),
            substitution: false,
            arith_var: false,
            vars: Vec::new(),
        }
    }

    /// A word whose value is only known at run time.
    pub fn unknown(raw: &str) -> Self {
        Self {
            value: None,
            raw: raw.to_string(),
            glob: false,
            quoted: false,
            dynamic: vec![raw.to_string()],
            substitution: false,
            arith_var: false,
            vars: Vec::new(),
        }
    }

    /// Its value, or the text as written when it is not static (for display).
    pub fn shown(&self) -> &str {
        self.value.as_deref().unwrap_or(&self.raw)
    }

    /// The word as written, shortened for a reason (a line can nest thousands of
    /// levels inside one word).
    pub fn brief(&self) -> String {
        brief(&self.raw)
    }

    /// Whether it is static and equal to `s`.
    pub fn is(&self, s: &str) -> bool {
        self.value.as_deref() == Some(s)
    }
}

/// `s`, at most 80 characters of it.
pub fn brief(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(80).collect::<String>())
    }
}

/// What `$HOME` and `~` stand for while resolving.
pub struct Env<'a> {
    /// The home directory.
    pub home: Option<&'a str>,
}

/// Resolves a word-like node (word, string, raw_string, concatenation, expansions…).
pub fn resolve(node: Node<'_>, src: &[u8], env: &Env<'_>) -> Word {
    let raw = text(node, src).to_string();
    let mut w = Word {
        value: Some(String::new()),
        raw: raw.clone(),
        glob: false,
        quoted: false,
        dynamic: Vec::new(),
        substitution: false,
        arith_var: false,
        vars: Vec::new(),
    };
    push(node, src, env, &mut w, true);
    w
}

fn push(node: Node<'_>, src: &[u8], env: &Env<'_>, w: &mut Word, first: bool) {
    let t = text(node, src);
    match node.kind() {
        "word" | "number" => {
            let (v, escaped, glob) = unquoted(t, first, env);
            w.quoted |= escaped;
            w.glob |= glob;
            match v {
                Some(v) => add(w, &v),
                None => {
                    w.value = None;
                    w.dynamic.push(t.to_string());
                }
            }
        }
        "raw_string" => {
            w.quoted = true;
            add(w, t.trim_start_matches('\'').trim_end_matches('\''));
        }
        "ansi_c_string" => {
            w.quoted = true;
            let inner = t
                .strip_prefix("$'")
                .and_then(|s| s.strip_suffix('\''))
                .unwrap_or(t);
            add(w, &ansi_c(inner));
        }
        "string" | "translated_string" => {
            w.quoted = true;
            let mut cursor = node.walk();
            let children: Vec<_> = node.named_children(&mut cursor).collect();
            if children.is_empty() {
                // `""` or `"plain"` where the grammar keeps no content node.
                let inner = t.trim_start_matches('$').trim_matches('"');
                add(w, &dquoted(inner));
            }
            for c in children {
                match c.kind() {
                    "string_content" => add(w, &dquoted(text(c, src))),
                    _ => push(c, src, env, w, false),
                }
            }
        }
        "concatenation" => {
            let mut cursor = node.walk();
            let mut first_part = first;
            for c in node.children(&mut cursor) {
                push(c, src, env, w, first_part);
                first_part = false;
            }
        }
        "simple_expansion" | "expansion" => {
            let name = t
                .trim_start_matches('$')
                .trim_start_matches('{')
                .trim_end_matches('}');
            w.arith_var |= node.kind() == "expansion" && expansion_arith(node, src);
            if t.starts_with("${!") {
                w.vars.push("!".into());
            }
            let mut c = node.walk();
            w.vars.extend(
                node.named_children(&mut c)
                    .filter(|k| k.kind() == "variable_name" || k.kind() == "subscript")
                    .map(|k| {
                        let k = k.child_by_field_name("name").unwrap_or(k);
                        text(k, src).to_string()
                    })
                    .take(1),
            );
            match (name, env.home) {
                ("HOME", Some(h)) => add(w, h),
                _ => {
                    w.value = None;
                    w.dynamic.push(t.to_string());
                }
            }
        }
        "command_substitution" | "process_substitution" => {
            w.value = None;
            w.substitution = true;
            w.dynamic.push(t.to_string());
        }
        kind => {
            // arithmetic, brace expressions, anything else: known only at run time.
            if kind == "arithmetic_expansion" && mentions_var(node, 0) {
                w.arith_var = true;
            }
            w.value = None;
            w.dynamic.push(t.to_string());
        }
    }
}

/// Whether an arithmetic expression reads a variable (a name, `$x`, `${x}`, or a
/// command substitution, whose output is evaluated in turn).
pub fn mentions_var(node: Node<'_>, depth: usize) -> bool {
    // Arithmetic nested past this is taken to read one (and the walk stays bounded).
    if depth > 64 {
        return true;
    }
    if matches!(
        node.kind(),
        "variable_name"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "subscript"
            | "word"
    ) {
        return true;
    }
    let mut c = node.walk();
    let kids: Vec<Node<'_>> = node.named_children(&mut c).collect();
    kids.into_iter().any(|k| mentions_var(k, depth + 1))
}

/// Whether a `${…}` expansion evaluates arithmetic on a variable: an indexed array's
/// subscript (`${a[i]}`) or a substring's offset or length (`${s:i:n}`).
pub fn expansion_arith(node: Node<'_>, src: &[u8]) -> bool {
    let mut c = node.walk();
    let kids: Vec<Node<'_>> = node.children(&mut c).collect();
    let mut after_colon = false;
    for k in kids {
        if k.kind() == "subscript" {
            if let Some(i) = k.child_by_field_name("index") {
                let t = text(i, src);
                if t != "@" && t != "*" && mentions_var(i, 0) {
                    return true;
                }
            }
        }
        if !k.is_named() && text(k, src) == ":" {
            after_colon = true;
        } else if after_colon && k.is_named() && mentions_var(k, 0) {
            return true;
        }
    }
    false
}

fn add(w: &mut Word, s: &str) {
    if let Some(v) = w.value.as_mut() {
        v.push_str(s);
    }
}

fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
    node.utf8_text(src).unwrap_or("")
}

/// An unquoted word: backslashes removed, a leading `~` expanded, globs noticed. The
/// value is `None` when a tilde stands for a folder only known at run time (`~+`,
/// `~-`, `~` with no known home).
fn unquoted(t: &str, first: bool, env: &Env<'_>) -> (Option<String>, bool, bool) {
    let mut out = String::with_capacity(t.len());
    let mut escaped = false;
    let mut glob = false;
    let mut rest = t;
    if first {
        // `~`, `~/x`, `~name/x`; and in an assignment-like word bash expands a tilde
        // after the first `=` too (`f=~/.ssh/id_rsa`).
        let (before, tilde) = match t.split_once("=~") {
            Some((name, after))
                if !name.is_empty()
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !name.starts_with(|c: char| c.is_ascii_digit()) =>
            {
                (&t[..name.len() + 1], Some(after))
            }
            _ => ("", t.strip_prefix('~')),
        };
        if let Some(after) = tilde {
            let (user, tail) = after.split_at(after.find('/').unwrap_or(after.len()));
            let dir = match user {
                "" => env.home.map(str::to_string),
                "+" | "-" => None,
                _ if user.starts_with(['+', '-']) || user.contains(['\\', '*', '?', '[']) => None,
                _ => match crate::paths::user_home(user) {
                    Some(h) => Some(h),
                    // bash leaves `~nobody-by-that-name` as it is.
                    None => Some(format!("~{user}")),
                },
            };
            let Some(dir) = dir else {
                return (None, false, false);
            };
            out.push_str(before);
            out.push_str(&dir);
            rest = tail;
        }
    }
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                escaped = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(n) => out.push(n),
                }
            }
            '*' | '?' | '[' => {
                glob = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    (Some(out), escaped, glob)
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
fn dquoted(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes the body of `$'…'` as bash does.
pub fn ansi_c(t: &str) -> String {
    let mut out = String::new();
    let b: Vec<char> = t.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if b[i] != '\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = b[i];
        i += 1;
        let simple = match c {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            '?' => Some('?'),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, max) = match c {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                i -= 1;
                (8, 3)
            }
            _ => {
                out.push('\\');
                out.push(c);
                continue;
            }
        };
        let start = i;
        while i < b.len() && i - start < max && b[i].is_digit(radix) {
            i += 1;
        }
        let digits: String = b[start..i].iter().collect();
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) => out.push(ch),
            None => {
                out.push('\\');
                out.push(c);
            }
        }
    }
    out
}

/// Whether a program name would need quoting to be written at all.
pub(crate) fn needs_quoting(p: &str) -> bool {
    p.is_empty()
        || p.chars().any(|c| {
            !(c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | '+' | ':' | '@' | '%' | ',' | '='))
        })
}

#[cfg(test)]
mod tests {
    use super::ansi_c;

    #[test]
    fn ansi_c_escapes_decode() {
        assert_eq!(ansi_c(r"\x72\x6d"), "rm");
        assert_eq!(ansi_c(r"\162\155"), "rm");
        assert_eq!(ansi_c(r"\u0072m"), "rm");
        assert_eq!(ansi_c(r"a\tb"), "a\tb");
    }
}
