//! `--worktree auto`: a free name a person can say aloud and tell apart in a list
//! (`brisk-otter`), rather than a hash nobody remembers.

use crate::Error;

const ADJECTIVES: [&str; 16] = [
    "brisk", "calm", "clever", "eager", "fair", "gentle", "keen", "lucid", "merry", "nimble",
    "quiet", "rapid", "steady", "sunny", "tidy", "witty",
];
const NOUNS: [&str; 16] = [
    "otter", "heron", "maple", "falcon", "badger", "willow", "comet", "lynx", "cedar", "finch",
    "marten", "orca", "pine", "raven", "tern", "yak",
];

/// The first name `taken` says is free: the 256 pairs in an order that varies with the
/// clock (two repositories do not all start at `brisk-otter`), then the pairs with a
/// number.
pub(crate) fn pick(mut taken: impl FnMut(&str) -> Result<bool, Error>) -> Result<String, Error> {
    let pairs = ADJECTIVES.len() * NOUNS.len();
    let offset = usize::try_from(crate::now_ms().unsigned_abs() % pairs as u64).unwrap_or(0);
    for round in 0..100usize {
        for i in 0..pairs {
            let k = (offset + i * 7) % pairs;
            let base = format!("{}-{}", ADJECTIVES[k / NOUNS.len()], NOUNS[k % NOUNS.len()]);
            let name = if round == 0 {
                base
            } else {
                format!("{base}-{}", round + 1)
            };
            if !taken(&name)? {
                return Ok(name);
            }
        }
    }
    Err(Error::Exists("auto".into()))
}
