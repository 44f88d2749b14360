//! What each fault came to, and the table of faults by kind × outcome.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::Kind;

/// How the turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ending {
    /// Done, no error.
    Done,
    /// Incomplete, with a reason.
    Incomplete,
    /// Ended with an error (not marked incomplete).
    Error,
    /// Still running when the harness gave up on it.
    Hung,
    /// Not run (this machine cannot make the fault); see `skipped`.
    Skipped,
}

/// One fault's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The kind.
    pub kind: Kind,
    /// How the turn ended.
    pub ending: Ending,
    /// Its error, when it has one.
    pub reason: Option<String>,
    /// Text deltas recorded by the harness but missing from the store.
    pub lost: usize,
    /// Processes of the turn left outside the live daemon.
    pub orphans: usize,
    /// The next prompt to the session ended done.
    pub next_ok: bool,
    /// The follower's snapshot equals the daemon's and the store's.
    pub snapshot_equal: bool,
    /// The ending is one this fault may honestly end with.
    pub honest: bool,
    /// Why the fault was not run.
    pub skipped: Option<String>,
    /// Anything else that went wrong (a harness step that failed).
    pub problems: Vec<String>,
}

impl Outcome {
    /// An outcome for `kind`, to be filled in.
    pub fn new(kind: Kind) -> Outcome {
        Outcome {
            kind,
            ending: Ending::Hung,
            reason: None,
            lost: 0,
            orphans: 0,
            next_ok: false,
            snapshot_equal: false,
            honest: false,
            skipped: None,
            problems: Vec::new(),
        }
    }

    /// `kind` could not be made here.
    pub fn skipped(kind: Kind, why: String) -> Outcome {
        Outcome {
            ending: Ending::Skipped,
            skipped: Some(why),
            ..Outcome::new(kind)
        }
    }

    /// The fault took longer than the harness allows one.
    pub fn harness_timeout(kind: Kind) -> Outcome {
        let mut o = Outcome::new(kind);
        o.problems
            .push("the fault did not finish within 120 s".into());
        o
    }

    /// What this outcome breaks.
    pub fn violations(&self) -> Vec<String> {
        if self.ending == Ending::Skipped {
            return Vec::new();
        }
        let mut v = self.problems.clone();
        if self.lost > 0 {
            v.push(format!(
                "{} recorded deltas missing from the store",
                self.lost
            ));
        }
        if self.orphans > 0 {
            v.push(format!("{} processes of the turn left", self.orphans));
        }
        if self.ending == Ending::Hung {
            v.push("the turn never ended".into());
        } else if !self.honest {
            v.push(format!(
                "dishonest end: {:?} ({})",
                self.ending,
                self.reason.as_deref().unwrap_or("no reason")
            ));
        }
        if !self.next_ok {
            v.push("the next prompt failed".into());
        }
        if !self.snapshot_equal {
            v.push("the follower's snapshot differs from the daemon's or the store's".into());
        }
        v
    }
}

/// Every outcome of a run.
#[derive(Debug, Clone)]
pub struct Report {
    /// Faults asked for.
    pub faults: usize,
    /// The seed.
    pub seed: u64,
    /// Outcomes, in order.
    pub outcomes: Vec<Outcome>,
    /// Processes of the run still alive once its daemon stopped.
    pub left_behind: usize,
}

impl Report {
    /// An empty report.
    pub fn new(faults: usize, seed: u64) -> Report {
        Report {
            faults,
            seed,
            outcomes: Vec::new(),
            left_behind: 0,
        }
    }

    /// Adds an outcome.
    pub fn add(&mut self, o: Outcome) {
        self.outcomes.push(o);
    }

    /// Outcomes that broke something.
    pub fn violations(&self) -> Vec<(usize, Kind, Vec<String>)> {
        self.outcomes
            .iter()
            .enumerate()
            .filter_map(|(i, o)| {
                let v = o.violations();
                (!v.is_empty()).then_some((i, o.kind, v))
            })
            .collect()
    }

    /// Lost deltas over the run.
    pub fn lost(&self) -> usize {
        self.outcomes.iter().map(|o| o.lost).sum()
    }

    /// Orphans over the run (per fault, plus what outlived the daemon's stop).
    pub fn orphans(&self) -> usize {
        self.outcomes.iter().map(|o| o.orphans).sum::<usize>() + self.left_behind
    }

    /// Skipped kinds and why.
    pub fn skipped(&self) -> BTreeMap<String, String> {
        self.outcomes
            .iter()
            .filter_map(|o| Some((format!("{:?}", o.kind), o.skipped.clone()?)))
            .collect()
    }

    /// The table, as Markdown: kinds down, outcomes across.
    pub fn table(&self) -> String {
        let mut rows: BTreeMap<String, [usize; 10]> = BTreeMap::new();
        for o in &self.outcomes {
            let r = rows.entry(o.kind.name().to_string()).or_default();
            r[0] += 1;
            match o.ending {
                Ending::Done => r[1] += 1,
                Ending::Incomplete => r[2] += 1,
                Ending::Error => r[3] += 1,
                Ending::Hung => r[4] += 1,
                Ending::Skipped => r[5] += 1,
            }
            r[6] += o.lost;
            r[7] += o.orphans;
            if o.ending != Ending::Skipped {
                r[8] += usize::from(!o.next_ok || !o.snapshot_equal);
                r[9] += usize::from(!o.violations().is_empty());
            }
        }
        let mut s = String::from(
            "| fault | runs | done | incomplete | error | hung | skipped | lost deltas | orphans | next prompt or snapshot wrong | violations |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        let mut total = [0usize; 10];
        for (kind, r) in &rows {
            let cells: Vec<String> = r.iter().map(usize::to_string).collect();
            let _ = writeln!(s, "| {kind} | {} |", cells.join(" | "));
            for (t, v) in total.iter_mut().zip(r) {
                *t += v;
            }
        }
        let cells: Vec<String> = total.iter().map(usize::to_string).collect();
        let _ = writeln!(s, "| **total** | {} |", cells.join(" | "));
        let _ = writeln!(
            s,
            "\nseed {}, {} faults; processes left after the daemon stopped: {}",
            self.seed, self.faults, self.left_behind
        );
        for (kind, why) in self.skipped() {
            let _ = writeln!(s, "skipped {kind}: {why}");
        }
        s
    }
}
