//! Reading a program's arguments the way GNU getopt_long reads them.
//!
//! A read-only program is read-only only with some of its options, so the guard must
//! see each option exactly as the program will:
//! - options permute: one may follow an operand (`sort data.txt -o out`);
//! - short options bundle, and a value may be attached: `-iS'touch x'` is `-i`, then
//!   `-S` with the value `touch x`;
//! - a long option's value is `--name=value` or the next word (`--name value`), an
//!   optional one only `--name=value`;
//! - a long option may be abbreviated to any unambiguous prefix (`--out=` is
//!   `--output=`), so a prefix is resolved against the program's *whole* option table:
//!   the tables list every option a program has, not only the harmless ones.
//!
//! What this cannot see is an [`Arg::Unseen`] word: its text is known only at run time,
//! or it is a glob that may expand to a file name starting with `-`.

use crate::words::Word;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    No,
    /// Attached, or the next word.
    Value,
    /// Only attached (`-wVALUE`, `--name=VALUE`).
    Optional,
}

/// A program's option table, in getopt's own notation.
pub struct Spec {
    /// getopt's optstring: each letter an option, `:` after one that takes a value,
    /// `::` after one whose value is optional. A leading `+` stops at the first
    /// operand (everything after is an operand), as it does for getopt.
    pub short: &'static str,
    /// Long options: `name`, `name=` (takes a value), `name?` (optional value).
    pub long: &'static [&'static str],
}

/// One argument as the program reads it.
#[derive(Debug, Clone)]
pub enum Arg {
    /// An option: its short letter or its full long name, and its value.
    Opt {
        name: String,
        long: bool,
        value: Option<Word>,
    },
    /// An operand.
    Operand(Word),
    /// A word that may be an option, but whose text is only known at run time (or a
    /// glob that may expand to names starting with `-`).
    Unseen(Word),
}

impl Arg {
    /// The option's name as written on a command line (`-o`, `--output`).
    pub fn shown(name: &str, long: bool) -> String {
        if long {
            format!("--{name}")
        } else {
            format!("-{name}")
        }
    }
}

impl Spec {
    fn stops_at_operand(&self) -> bool {
        self.short.starts_with('+')
    }

    fn short_takes(&self, c: char) -> Option<Takes> {
        if c == ':' {
            return None;
        }
        let table = self.short.trim_start_matches(['+', '-']);
        let at = table.find(c)?;
        let rest = &table[at + c.len_utf8()..];
        Some(if rest.starts_with("::") {
            Takes::Optional
        } else if rest.starts_with(':') {
            Takes::Value
        } else {
            Takes::No
        })
    }

    fn long_entries(&self) -> impl Iterator<Item = (&'static str, Takes)> + '_ {
        self.long.iter().map(|l| {
            if let Some(n) = l.strip_suffix('=') {
                (n, Takes::Value)
            } else if let Some(n) = l.strip_suffix('?') {
                (n, Takes::Optional)
            } else {
                (*l, Takes::No)
            }
        })
    }

    /// The long option `name` (exact, else the one option it is a prefix of).
    fn long_option(&self, name: &str) -> Result<(&'static str, Takes), String> {
        if let Some(e) = self.long_entries().find(|(n, _)| *n == name) {
            return Ok(e);
        }
        let found: Vec<(&'static str, Takes)> = self
            .long_entries()
            .filter(|(n, _)| n.starts_with(name))
            .collect();
        match found.as_slice() {
            [] => Err(format!(
                "has no option --{name} it is known to be read-only with"
            )),
            [one] => Ok(*one),
            _ => Err(format!(
                "--{name} is ambiguous ({})",
                found
                    .iter()
                    .map(|(n, _)| format!("--{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// A value cut from a word that also holds its option (`-oFILE`, `--out=FILE`).
fn attached(w: &Word, text: &str) -> Word {
    let mut v = Word::literal(text);
    v.glob = w.glob;
    v.quoted = w.quoted;
    v
}

/// Whether a word is a whole process substitution (`<(cmd)`): a `/dev/fd/N` name,
/// never an option; what runs in it is judged as its own command.
pub fn process_substitution(w: &Word) -> bool {
    w.substitution
        && w.value.is_none()
        && (w.raw.starts_with("<(") || w.raw.starts_with(">("))
        && w.raw.ends_with(')')
}

/// Whether a glob word may expand to a name that starts with `-` (and so be read
/// as an option): it starts with a pattern character.
fn glob_may_be_option(w: &Word) -> bool {
    w.glob && w.shown().starts_with(['*', '?', '['])
}

/// Reads `args` as getopt_long would with `spec`; an error is why the program would
/// refuse them or why they are not read-only-known (an option not in the table, an
/// ambiguous prefix, a value missing or given where none is taken).
pub fn parse(spec: &Spec, args: &[Word]) -> Result<Vec<Arg>, String> {
    read(spec, args, false).map(|(a, _)| a)
}

/// A wrapper's options (`env -i`, `timeout -s KILL 5`): the options before its first
/// operand, and that operand's index (`args.len()` when there is none). After `--`
/// the next word is the operand.
pub fn parse_head(spec: &Spec, args: &[Word]) -> Result<(Vec<Arg>, usize), String> {
    read(spec, args, true)
}

fn read(spec: &Spec, args: &[Word], head: bool) -> Result<(Vec<Arg>, usize), String> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    let mut end = false;
    while i < args.len() {
        let w = &args[i];
        i += 1;
        let operand = end
            || process_substitution(w)
            || w.value
                .as_deref()
                .is_some_and(|v| v == "-" || !v.starts_with('-'));
        if head && (operand || w.value.is_none() || glob_may_be_option(w)) {
            return Ok((out, i - 1));
        }
        if end || process_substitution(w) {
            out.push(Arg::Operand(w.clone()));
            continue;
        }
        let Some(v) = w.value.as_deref() else {
            out.push(Arg::Unseen(w.clone()));
            continue;
        };
        if glob_may_be_option(w) {
            out.push(Arg::Unseen(w.clone()));
            continue;
        }
        if v == "--" {
            end = true;
            continue;
        }
        if v == "-" || !v.starts_with('-') {
            out.push(Arg::Operand(w.clone()));
            end = spec.stops_at_operand();
            continue;
        }
        if let Some(body) = v.strip_prefix("--") {
            let (name, given) = match body.split_once('=') {
                Some((n, val)) => (n, Some(val)),
                None => (body, None),
            };
            let (full, takes) = spec.long_option(name)?;
            let value = match (takes, given) {
                (Takes::No, Some(_)) => {
                    return Err(format!("--{full} takes no value"));
                }
                (Takes::No, None) | (Takes::Optional, None) => None,
                (_, Some(val)) => Some(attached(w, val)),
                (Takes::Value, None) => {
                    let next = args
                        .get(i)
                        .ok_or_else(|| format!("--{full} is missing its value"))?;
                    i += 1;
                    Some(next.clone())
                }
            };
            out.push(Arg::Opt {
                name: full.to_string(),
                long: true,
                value,
            });
            continue;
        }
        let bundle = &v[1..];
        for (at, c) in bundle.char_indices() {
            let takes = spec
                .short_takes(c)
                .ok_or_else(|| format!("has no option -{c} it is known to be read-only with"))?;
            let rest = &bundle[at + c.len_utf8()..];
            let value = match takes {
                Takes::No => None,
                Takes::Optional => (!rest.is_empty()).then(|| attached(w, rest)),
                Takes::Value if !rest.is_empty() => Some(attached(w, rest)),
                Takes::Value => {
                    let next = args
                        .get(i)
                        .ok_or_else(|| format!("-{c} is missing its value"))?;
                    i += 1;
                    Some(next.clone())
                }
            };
            let ends = value.is_some() || takes != Takes::No;
            out.push(Arg::Opt {
                name: c.to_string(),
                long: false,
                value,
            });
            if ends {
                break;
            }
        }
    }
    Ok((out, args.len()))
}

/// Whether option `name` is one of `keys` (`"o|output"` names both spellings).
pub fn named(keys: &str, name: &str) -> bool {
    keys.split('|').any(|k| k == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Spec = Spec {
        short: "-bcCdfghik:mMno:rRsS:t:T:uVy:z",
        long: &[
            "check?",
            "compress-program=",
            "debug",
            "output=",
            "key=",
            "reverse",
            "random-sort",
            "random-source=",
        ],
    };

    fn words(s: &[&str]) -> Vec<Word> {
        s.iter().map(|w| Word::literal(w)).collect()
    }

    fn opts(spec: &Spec, s: &[&str]) -> Vec<(String, Option<String>)> {
        parse(spec, &words(s))
            .unwrap_or_else(|e| panic!("{s:?}: {e}"))
            .into_iter()
            .filter_map(|a| match a {
                Arg::Opt { name, value, .. } => Some((name, value.and_then(|v| v.value))),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn long_options_match_by_unambiguous_prefix_and_take_values_both_ways() {
        assert_eq!(
            opts(&SORT, &["--out=x", "f"]),
            vec![("output".into(), Some("x".into()))]
        );
        assert_eq!(
            opts(&SORT, &["f", "--comp", "./x.sh"]),
            vec![("compress-program".into(), Some("./x.sh".into()))]
        );
        assert_eq!(opts(&SORT, &["--ch"]), vec![("check".into(), None)]);
        assert!(parse(&SORT, &words(&["--r"])).is_err(), "ambiguous");
        assert!(parse(&SORT, &words(&["--reverse=1"])).is_err());
        assert!(parse(&SORT, &words(&["--nope"])).is_err());
    }

    #[test]
    fn short_options_bundle_and_take_attached_values() {
        assert_eq!(
            opts(&SORT, &["-ro/tmp/x"]),
            vec![("r".into(), None), ("o".into(), Some("/tmp/x".into()))]
        );
        assert_eq!(
            opts(&SORT, &["-rk", "2"]),
            vec![("r".into(), None), ("k".into(), Some("2".into()))]
        );
        assert!(parse(&SORT, &words(&["-rq"])).is_err());
        let after_end = parse(&SORT, &words(&["--", "-o"])).unwrap_or_default();
        assert!(matches!(after_end.as_slice(), [Arg::Operand(_)]));
    }

    #[test]
    fn a_plus_optstring_stops_at_the_first_operand() {
        let env = Spec {
            short: "+iS:",
            long: &[],
        };
        let a = parse(&env, &words(&["-i", "ls", "-S", "x"])).unwrap_or_default();
        assert!(matches!(
            a.as_slice(),
            [
                Arg::Opt { .. },
                Arg::Operand(_),
                Arg::Operand(_),
                Arg::Operand(_)
            ]
        ));
    }
}
