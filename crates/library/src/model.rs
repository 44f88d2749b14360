//! What a reader takes out of a transcript (the types live with the readers' trait,
//! in `weft-agent-spec`), and what the library does to it before writing.

pub use weft_agent_spec::sessions::batch::*;

/// Readies the batch for the writer, on the reader's thread: works out
/// [`Batch::words`], and keeps one usage event per key (Claude writes a message's
/// usage on each of its blocks' lines) as the store's upsert would: the first
/// event's time, the largest count's tokens and model.
pub fn seal(batch: &mut Batch) {
    batch.words = crate::words::distinct(batch.docs.iter().map(|d| d.text.as_str()));
    if batch.usage.len() > 1 {
        let mut at: rustc_hash::FxHashMap<String, usize> = Default::default();
        let mut kept: Vec<UsageEvent> = Vec::with_capacity(batch.usage.len());
        for u in batch.usage.drain(..) {
            match at.get(&u.key) {
                Some(&i) => {
                    if u.total() > kept[i].total() {
                        kept[i] = UsageEvent {
                            at: kept[i].at,
                            ..u
                        };
                    }
                }
                None => {
                    at.insert(u.key.clone(), kept.len());
                    kept.push(u);
                }
            }
        }
        batch.usage = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_batch_keeps_one_usage_event_a_key_as_the_upsert_would() {
        let event = |key: &str, at: i64, model: &str, output: u64| UsageEvent {
            key: key.into(),
            at,
            model: model.into(),
            input: 10,
            output,
            cache_read: 0,
            cache_write: 0,
            reasoning: 0,
        };
        let mut batch = Batch {
            usage: vec![
                event("a", 1, "m1", 5),
                event("b", 2, "m1", 7),
                event("a", 3, "m2", 9),
                event("a", 4, "m3", 9),
                event("b", 5, "m2", 1),
            ],
            ..Default::default()
        };
        batch.doc(
            1,
            0,
            1,
            DocKind::Reply,
            "Parse_Config 日本語 parse_config ok",
        );
        seal(&mut batch);
        let kept: Vec<(&str, i64, &str, u64)> = batch
            .usage
            .iter()
            .map(|u| (u.key.as_str(), u.at, u.model.as_str(), u.output))
            .collect();
        // The first time; a strictly larger count replaces the tokens and model.
        assert_eq!(kept, [("a", 1, "m2", 9), ("b", 2, "m1", 7)]);
        let mut words = batch.words.clone();
        words.sort();
        assert_eq!(words, ["ok", "parse_config", "日本語"]);
    }
}
