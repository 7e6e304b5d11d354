//! The lexmin answers one campaign invocation's scheduling children share
//! (`space::schedule::Memo`): an append-only log in the invocation's
//! schedule directory, removed with it.
//!
//! A child reads the whole log when it starts and appends each answer it
//! solves as one line, written by one `write` on a file opened for
//! appending, so two children's lines never interleave. Each line carries
//! a checksum: a line cut short (a child killed at its timeout) or
//! otherwise damaged is skipped, and the question is solved again.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use sha2::{Digest, Sha256};
use space::schedule::{Memo, MemoKey};

/// The log's name in the schedule directory.
const LOG: &str = "lexmins.log";

/// Past this size the log takes no more answers (it is read whole by
/// every child): about 200,000 answers, several nights of points.
const MAX_BYTES: u64 = 64 << 20;

pub struct Log {
    known: Mutex<HashMap<String, String>>,
    /// `None` when the log is full or cannot be written: answers are then
    /// only remembered by this process.
    file: Mutex<Option<File>>,
}

impl Log {
    /// The log of `dir`, with what earlier children wrote to it.
    pub fn open(dir: &Path) -> Log {
        let path = dir.join(LOG);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let known = text.lines().filter_map(parse).map(|(k, a)| (k.to_string(), a.to_string())).collect();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.len() < MAX_BYTES));
        Log { known: Mutex::new(known), file: Mutex::new(file) }
    }
}

impl Memo for Log {
    fn get(&self, key: &MemoKey) -> Option<String> {
        self.known.lock().ok()?.get(&key.to_string()).cloned()
    }

    fn put(&self, key: &MemoKey, answer: &str) {
        let key = key.to_string();
        if answer.contains('\n') {
            return;
        }
        if let Ok(mut file) = self.file.lock() {
            let line = format!("{key} {answer} {}\n", check(&key, answer));
            if file.as_mut().is_some_and(|f| f.write_all(line.as_bytes()).is_err()) {
                *file = None;
            }
        }
        if let Ok(mut known) = self.known.lock() {
            known.insert(key, answer.to_string());
        }
    }
}

/// A line's key and answer, if its checksum holds.
fn parse(line: &str) -> Option<(&str, &str)> {
    let (rest, sum) = line.rsplit_once(' ')?;
    let (key, answer) = rest.split_once(' ')?;
    (check(key, answer) == sum).then_some((key, answer))
}

fn check(key: &str, answer: &str) -> String {
    let digest = Sha256::new().chain_update(key).chain_update(b" ").chain_update(answer).finalize();
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_survive_the_child_and_damaged_lines_do_not() {
        let dir = std::env::temp_dir().join(format!("polytune-memo-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b, c) = (MemoKey([1; 16]), MemoKey([2; 16]), MemoKey([3; 16]));
        let first = Log::open(&dir);
        first.put(&a, "optimal 0;1:2");
        first.put(&b, "infeasible");
        assert_eq!(first.get(&a).as_deref(), Some("optimal 0;1:2"));
        drop(first);
        // A line cut short, as by a child killed while writing.
        let mut f = OpenOptions::new().append(true).open(dir.join(LOG)).unwrap();
        f.write_all(format!("{c} optimal 5;0:").as_bytes()).unwrap();
        drop(f);
        let second = Log::open(&dir);
        assert_eq!(second.get(&a).as_deref(), Some("optimal 0;1:2"));
        assert_eq!(second.get(&b).as_deref(), Some("infeasible"));
        assert_eq!(second.get(&c), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
