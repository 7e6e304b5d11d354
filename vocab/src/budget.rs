//! When a campaign stops: a number of evaluations, a span of wall time, or
//! both. The store keeps it with the campaign as JSON (`{"evals":20,
//! "time_s":90}`), so that a worker joining the campaign later reads the
//! same budget back.

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Variant evaluations in the whole campaign, resumed runs included.
    pub evals: Option<usize>,
    /// Wall time of one invocation, from its start: the capture of the
    /// inputs and the measurement of the originals count.
    #[serde(rename = "time_s", with = "seconds")]
    pub time: Option<Duration>,
}

impl Budget {
    /// The budget a store written before budgets were JSON kept as prose
    /// (`20 evaluations or 90 s`, `3600 s`, `the whole space`).
    fn from_prose(text: &str) -> Budget {
        let mut b = Budget::default();
        for part in text.split(" or ") {
            if let Some(n) = part.strip_suffix(" evaluations") {
                b.evals = n.trim().parse().ok();
            } else if let Some(t) = part.strip_suffix(" s") {
                b.time = t.trim().parse().ok().map(Duration::from_secs);
            }
        }
        b
    }
}

/// A stored budget: its JSON, or the prose of older stores.
impl TryFrom<String> for Budget {
    type Error = serde_json::Error;

    fn try_from(text: String) -> Result<Budget, serde_json::Error> {
        match text.trim_start().starts_with('{') {
            true => serde_json::from_str(&text),
            false => Ok(Budget::from_prose(&text)),
        }
    }
}

/// `Option<Duration>` as a number of seconds.
mod seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_some(&t.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let secs = Option::<f64>::deserialize(d)?;
        secs.map(|s| Duration::try_from_secs_f64(s).map_err(serde::de::Error::custom)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_reads_back_as_it_was_stored() {
        for b in [
            Budget { evals: Some(20), time: None },
            Budget { evals: Some(20), time: Some(Duration::from_secs(90)) },
            Budget { evals: None, time: Some(Duration::from_millis(1500)) },
            Budget::default(),
        ] {
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(Budget::try_from(json).unwrap(), b);
        }
        let json = serde_json::to_string(&Budget { evals: Some(3), time: Some(Duration::from_secs(90)) });
        assert_eq!(json.unwrap(), r#"{"evals":3,"time_s":90.0}"#);
    }

    #[test]
    fn the_prose_of_older_stores_still_reads() {
        let read = |s: &str| Budget::try_from(s.to_string()).unwrap();
        assert_eq!(
            read("20 evaluations or 90 s"),
            Budget { evals: Some(20), time: Some(Duration::from_secs(90)) }
        );
        assert_eq!(read("3600 s"), Budget { evals: None, time: Some(Duration::from_secs(3600)) });
        assert_eq!(read("the whole space"), Budget::default());
        assert!(Budget::try_from("{\"evals\": -1}".to_string()).is_err());
    }
}
