//! The option parser of a library enum named in text ([`tuner::choice::Choice`]):
//! clap lists and completes its spellings, and reads a value with the
//! library's own `FromStr`, so the names live in one place.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use tuner::choice::Choice;

/// `#[arg(long, value_parser = choice::<Dataset>())]`.
pub fn choice<T>() -> impl TypedValueParser<Value = T>
where
    T: Choice + std::str::FromStr + Clone + Send + Sync,
{
    let values = T::ALL.iter().map(|c| PossibleValue::new(c.name()).help(c.about().unwrap_or_default()));
    // Every spelling clap lets through is one of ALL's names, which parse.
    PossibleValuesParser::new(values).map(|text| T::ALL.iter().copied().find(|c| c.name() == text).unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use tuner::program::Dataset;

    #[derive(Parser)]
    struct Cli {
        #[arg(long, value_parser = choice::<Dataset>(), default_value_t = Dataset::Large)]
        dataset: Dataset,
    }

    /// The library's spellings are the option's, and its default prints as one.
    #[test]
    fn an_option_takes_the_library_spellings_and_refuses_others() {
        assert_eq!(Cli::try_parse_from(["t"]).unwrap().dataset, Dataset::Large);
        assert_eq!(Cli::try_parse_from(["t", "--dataset", "MINI"]).unwrap().dataset, Dataset::Mini);
        let e = Cli::try_parse_from(["t", "--dataset", "mini"]).err().unwrap().to_string();
        assert!(e.contains("possible values: MINI, SMALL"), "{e}");
    }
}
