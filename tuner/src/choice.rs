//! The library's enums that a caller names in text (a command line's option
//! values, a stored name): every choice, how it is spelled and what it does,
//! with `FromStr` and `Display` from those names. The binary builds its
//! option parsers from [`Choice::ALL`], so the spellings are these.

use crate::error::Error;

/// An enum whose values are named in text.
pub trait Choice: Copy + Sized + 'static {
    /// What a value is called in an error (`dataset`).
    const WHAT: &'static str;
    /// Every choice, in the order they are listed.
    const ALL: &'static [Self];
    /// How the choice is spelled.
    fn name(self) -> &'static str;
    /// What the choice does, in a line, where it says more than its name.
    fn about(self) -> Option<&'static str> {
        None
    }
}

/// The choice spelled exactly `text`.
pub fn parse<T: Choice>(text: &str) -> Result<T, Error> {
    T::ALL.iter().copied().find(|c| c.name() == text).ok_or_else(|| {
        let names: Vec<&str> = T::ALL.iter().map(|c| c.name()).collect();
        Error::input(format!("unknown {} `{text}` (one of: {})", T::WHAT, names.join(", ")))
    })
}

/// `FromStr` and `Display` of a [`Choice`], from its names.
macro_rules! named {
    ($t:ty) => {
        impl std::str::FromStr for $t {
            type Err = $crate::error::Error;
            fn from_str(text: &str) -> Result<$t, Self::Err> {
                $crate::choice::parse(text)
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::choice::Choice::name(*self))
            }
        }
    };
}
pub(crate) use named;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::OnNoise;
    use crate::program::Dataset;
    use crate::slurm::Submit;
    use crate::strategy::{Rungs, StrategyKind};

    fn names<T: Choice>() -> Vec<&'static str> {
        T::ALL.iter().map(|c| c.name()).collect()
    }

    /// The spellings the command line has always taken (clap's kebab-case of
    /// the variants, the datasets in capitals), each read back as itself.
    #[test]
    fn every_choice_is_spelled_as_before_and_reads_back() {
        assert_eq!(names::<Dataset>(), ["MINI", "SMALL", "MEDIUM", "LARGE", "EXTRALARGE"]);
        assert_eq!(names::<StrategyKind>(), ["exhaustive", "random", "halving", "model"]);
        assert_eq!(names::<Rungs>(), ["auto", "all"]);
        assert_eq!(names::<OnNoise>(), ["warn", "wait", "fail"]);
        assert_eq!(names::<Submit>(), ["slurm"]);
        for d in Dataset::ALL {
            assert_eq!(d.to_string().parse::<Dataset>().unwrap(), *d);
        }
        assert_eq!("model".parse::<StrategyKind>().unwrap(), StrategyKind::Model);
        let e = "mini".parse::<Dataset>().unwrap_err();
        assert_eq!(e.to_string(), "unknown dataset `mini` (one of: MINI, SMALL, MEDIUM, LARGE, EXTRALARGE)");
    }
}
