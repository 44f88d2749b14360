//! The order in which a scripted server picks a reply, shared by every vendor's
//! `Script`: a rule that takes the request first (every time, or a number of times),
//! then the next queued turn if it fits (a queued turn may only take some requests;
//! others leave it queued), then the default reply.

use std::collections::VecDeque;
use std::sync::Arc;

/// A predicate over one vendor's request type.
pub type Pred<Req> = Arc<dyn Fn(&Req) -> bool + Send + Sync>;

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

/// What a vendor's script keeps besides its turns (the model list it serves, a token
/// count), and a reply it owes a request before the queue is asked.
pub trait Extra<Req, T>: Default {
    /// The reply to a side request, which neither a rule nor a queued turn takes
    /// (Gemini's JSON-mode side requests). Asked first: a rule written for the main
    /// loop (`user_text_contains(prompt)`) also matches a side request that quotes the
    /// prompt, and text where JSON is wanted makes the Gemini CLI retry that request
    /// with backoff, over a minute a turn.
    fn side_reply(&self, _req: &Req) -> Option<T> {
        None
    }
}

impl<Req, T> Extra<Req, T> for () {}

/// The model ids a `GET /v1/models` lists (default `mock-model`).
#[derive(Debug, Clone)]
pub struct Models(pub(crate) Vec<String>);

impl Default for Models {
    fn default() -> Self {
        Self(vec!["mock-model".into()])
    }
}

impl<Req, T> Extra<Req, T> for Models {}

impl Models {
    /// The `GET /v1/models` reply: a list of `entry(id)` for each model id.
    pub(crate) fn list(&self, entry: impl Fn(&str) -> serde_json::Value) -> crate::server::Reply {
        let data: Vec<serde_json::Value> = self.0.iter().map(|id| entry(id)).collect();
        crate::server::Reply::json(200, &serde_json::json!({"object": "list", "data": data}))
    }
}

/// The model's replies, in order, with rules for requests outside the order: every
/// vendor's `Script` (`anthropic::Script` and the others name this with their request,
/// turn and extras). Each request is answered by the vendor's [`Extra::side_reply`]
/// for a side request, else the first [`Script::rule`] that takes it, then the next queued
/// [`Script::turn`] if its own guard (if any) takes it, then the default reply
/// (`Turn::text_reply("ok")` unless [`Script::default_reply`]).
pub struct Script<Req, T, X = ()> {
    pub(crate) book: Playbook<Req, T>,
    /// Requests answered so far (numbers default ids).
    pub(crate) served: usize,
    pub(crate) extra: X,
}

impl<Req, T, X> Default for Script<Req, T, X>
where
    T: Clone + From<crate::script::Turn>,
    X: Extra<Req, T>,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<Req, T, X> Script<Req, T, X>
where
    T: Clone + From<crate::script::Turn>,
    X: Extra<Req, T>,
{
    /// No turns; every request gets the default reply.
    pub fn new() -> Self {
        Self {
            book: Playbook::new(crate::script::Turn::text_reply("ok").into()),
            served: 0,
            extra: X::default(),
        }
    }

    /// Queues `turn` for the next request no rule takes.
    pub fn turn(mut self, turn: T) -> Self {
        self.book.queue(None, turn);
        self
    }

    /// Queues `turn`, served only to a request `when` takes (others get the default
    /// and leave it queued).
    pub fn turn_when(mut self, when: Pred<Req>, turn: T) -> Self {
        self.book.queue(Some(when), turn);
        self
    }

    /// Answers every request `when` takes with `turn`, before the queue.
    pub fn rule(mut self, when: Pred<Req>, turn: T) -> Self {
        self.book.rule(when, turn, None);
        self
    }

    /// Answers the next `times` requests `when` takes with `turn`, before the queue.
    pub fn rule_times(mut self, when: Pred<Req>, turn: T, times: usize) -> Self {
        self.book.rule(when, turn, Some(times));
        self
    }

    /// The reply when nothing else applies.
    pub fn default_reply(mut self, turn: T) -> Self {
        self.book.set_default(turn);
        self
    }

    pub(crate) fn choose(&mut self, req: &Req) -> T {
        self.served += 1;
        if let Some(turn) = self.extra.side_reply(req) {
            return turn;
        }
        if let Some(turn) = self.book.take_rule(req) {
            return turn;
        }
        self.book
            .take_queued(req)
            .unwrap_or_else(|| self.book.default_turn())
    }
}

impl<Req, T> Script<Req, T, Models> {
    /// The model ids `GET /v1/models` lists (default `mock-model`).
    pub fn models(mut self, ids: &[&str]) -> Self {
        self.extra = Models(ids.iter().map(|s| s.to_string()).collect());
        self
    }
}
