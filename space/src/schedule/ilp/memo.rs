//! Answers of earlier lexmins, remembered across schedules.
//!
//! A campaign schedules one SCoP under many points, and points that differ
//! in knobs a fusion group's rows do not depend on (or only in the order of
//! independent groups) ask the very same ILPs: on 2mm, half of a campaign's
//! CBC solves repeat an earlier point's. A [`Memo`] keeps answers by a
//! [`Key`] that hashes the whole question (backend, bounds, constraints and
//! objectives in their order, cutoff), so an answer is only ever reused for
//! the question that produced it. Where the memo lives is the caller's
//! business (a campaign's children share a file); this module only says
//! what is asked and how an answer is written.
//!
//! A remembered optimum is checked against the problem before it is used
//! (bounds, constraints, objective values), so a damaged memo costs a solve,
//! never a wrong schedule.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::{Backend, Outcome, Problem, Relation};

/// Where answers are kept. `put` may drop an answer (a full or read-only
/// memo); `get` returns only what an earlier `put` was given.
pub trait Memo: Send + Sync {
    fn get(&self, key: &Key) -> Option<String>;
    fn put(&self, key: &Key, answer: &str);
}

/// 128 bits of SHA-256 over the question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(pub [u8; 16]);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The question `lexmin_below(problem, backend, cutoff)` asks. Variable
/// names are left out: no backend reads them.
pub fn key(problem: &Problem, backend: Backend, cutoff: Option<&[i64]>) -> Key {
    let mut h = Sha256::new();
    // The encoding's version: bump it when an answer's meaning changes.
    h.update(b"lexmin 1");
    h.update([matches!(backend, Backend::Cbc) as u8]);
    let int = |h: &mut Sha256, x: i64| h.update(x.to_le_bytes());
    let bound = |h: &mut Sha256, b: Option<i64>| match b {
        None => h.update([0]),
        Some(x) => {
            h.update([1]);
            int(h, x)
        }
    };
    let terms = |h: &mut Sha256, coeffs: &[(usize, i64)]| {
        int(h, coeffs.len() as i64);
        for &(v, a) in coeffs {
            int(h, v as i64);
            int(h, a);
        }
    };
    int(&mut h, problem.vars.len() as i64);
    for v in &problem.vars {
        bound(&mut h, v.lower);
        bound(&mut h, v.upper);
    }
    int(&mut h, problem.constraints.len() as i64);
    for c in &problem.constraints {
        h.update([(c.relation == Relation::Eq) as u8]);
        int(&mut h, c.constant);
        terms(&mut h, &c.coeffs);
    }
    int(&mut h, problem.objectives.len() as i64);
    for o in &problem.objectives {
        terms(&mut h, o);
    }
    match cutoff {
        None => h.update([0]),
        Some(c) => {
            h.update([1]);
            c.iter().for_each(|&x| int(&mut h, x));
        }
    }
    let digest = h.finalize();
    let mut k = [0u8; 16];
    k.copy_from_slice(&digest[..16]);
    Key(k)
}

/// One line of text: `infeasible`, `above` (not below the cutoff), or
/// `optimal O1,O2,..;I:V,...` with the objective values and the non-zero
/// variables.
pub fn encode(answer: &Option<Outcome>) -> String {
    match answer {
        None => "above".into(),
        Some(Outcome::Infeasible) => "infeasible".into(),
        Some(Outcome::Optimal { values, objective_values }) => {
            let objectives: Vec<String> = objective_values.iter().map(i64::to_string).collect();
            let nonzero: Vec<String> =
                values.iter().enumerate().filter(|(_, &v)| v != 0).map(|(i, v)| format!("{i}:{v}")).collect();
            format!("optimal {};{}", objectives.join(","), nonzero.join(","))
        }
    }
}

/// The answer `text` encodes, if it reads and (for an optimum) holds for
/// `problem`; `None` otherwise, and the caller solves.
pub fn decode(text: &str, problem: &Problem) -> Option<Option<Outcome>> {
    match text {
        "above" => return Some(None),
        "infeasible" => return Some(Some(Outcome::Infeasible)),
        _ => {}
    }
    let (objectives, nonzero) = text.strip_prefix("optimal ")?.split_once(';')?;
    let objective_values: Vec<i64> = list(objectives).map(|t| t.parse().ok()).collect::<Option<_>>()?;
    let mut values = vec![0i64; problem.vars.len()];
    for term in list(nonzero) {
        let (i, v) = term.split_once(':')?;
        *values.get_mut(i.parse::<usize>().ok()?)? = v.parse().ok()?;
    }
    let holds = problem.satisfied_by(&values)
        && problem.objective_values(&values).ok().as_deref() == Some(&objective_values[..]);
    holds.then_some(Some(Outcome::Optimal { values, objective_values }))
}

/// The comma-separated items of `s`.
fn list(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').filter(|t| !t.is_empty())
}

/// A memo in this process's memory.
#[derive(Default)]
pub struct InMemory(Mutex<HashMap<Key, String>>);

impl Memo for InMemory {
    fn get(&self, key: &Key) -> Option<String> {
        self.0.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: &Key, answer: &str) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(*key, answer.to_string());
        }
    }
}
