//! The order in which a scripted server picks a reply, shared by every vendor's
//! `Script`: a rule that takes the request first (every time, or a number of times),
//! then the next queued turn if it fits (a queued turn may only take some requests;
//! others leave it queued), then the default reply.

use std::collections::VecDeque;
use std::sync::Arc;

/// A predicate over one vendor's request type.
pub(crate) type Pred<Req> = Arc<dyn Fn(&Req) -> bool + Send + Sync>;

struct Rule<Req, T> {
    when: Pred<Req>,
    turn: T,
    remaining: Option<usize>,
}

struct Queued<Req, T> {
    when: Option<Pred<Req>>,
    turn: T,
}

pub(crate) struct Playbook<Req, T> {
    rules: Vec<Rule<Req, T>>,
    queue: VecDeque<Queued<Req, T>>,
    default: T,
}

impl<Req, T: Clone> Playbook<Req, T> {
    pub fn new(default: T) -> Self {
        Self {
            rules: Vec::new(),
            queue: VecDeque::new(),
            default,
        }
    }

    /// Queues `turn` for the next request no rule takes (and `when` allows).
    pub fn queue(&mut self, when: Option<Pred<Req>>, turn: T) {
        self.queue.push_back(Queued { when, turn });
    }

    /// Answers requests `when` takes with `turn`: every one, or the next `remaining`.
    pub fn rule(&mut self, when: Pred<Req>, turn: T, remaining: Option<usize>) {
        self.rules.push(Rule {
            when,
            turn,
            remaining,
        });
    }

    pub fn set_default(&mut self, turn: T) {
        self.default = turn;
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The first rule that takes `req`, counting down a limited one.
    pub fn take_rule(&mut self, req: &Req) -> Option<T> {
        let rule = self
            .rules
            .iter_mut()
            .find(|r| r.remaining != Some(0) && (r.when)(req))?;
        if let Some(n) = rule.remaining.as_mut() {
            *n -= 1;
        }
        Some(rule.turn.clone())
    }

    /// The front of the queue, if it fits `req`.
    pub fn take_queued(&mut self, req: &Req) -> Option<T> {
        let fits = self
            .queue
            .front()
            .is_some_and(|q| q.when.as_ref().is_none_or(|w| w(req)));
        if fits {
            self.queue.pop_front().map(|q| q.turn)
        } else {
            None
        }
    }

    pub fn default_turn(&self) -> T {
        self.default.clone()
    }
}
