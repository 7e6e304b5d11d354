//! The library's errors: what kind of failure each is, with the text a user
//! reads. An error may carry what was being done when it happened
//! ([`Context::context`]); it prints as `anyhow` prints its errors, so the
//! binary's messages read as they always have: `{}` the outermost message
//! alone, `{:#}` the whole chain, `context: cause: its cause`.

use std::fmt;

/// A result whose error is the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug)]
pub enum Error {
    /// Input the user gave that polytune refuses: a file, an option, a knob
    /// value, a machine profile, a stored campaign or capture. `at` is where
    /// (a file, `file:line`, an option) when the message starts with it.
    Input { at: Option<String>, reason: String },
    /// A step that could not be done: a build or a run of the user's program
    /// failed or timed out, a tool it needs is missing or refused.
    Failed(String),
    /// The command ran, but has no result to give (no measurement of the
    /// kernel, no verified variant).
    NoResult(String),
    /// The user pressed Ctrl-C; what was done is kept.
    Interrupted(String),
    /// A file or process operation failed; `context` says on what (none: the
    /// I/O error alone).
    Io { context: Option<String>, source: std::io::Error },
    /// An error of a crate below (the store, the executor, the model, the
    /// knobs, JSON and TOML), as it tells itself.
    Lower(Box<dyn std::error::Error + Send + Sync>),
    /// `source`, and what was being done when it happened.
    Context { context: String, source: Box<Error> },
}

impl Error {
    /// Input refused, where the message names no place.
    pub fn input(reason: impl Into<String>) -> Error {
        Error::Input { at: None, reason: reason.into() }
    }

    /// Input refused at `at` (prints `at: reason`).
    pub fn input_at(at: impl fmt::Display, reason: impl Into<String>) -> Error {
        Error::Input { at: Some(at.to_string()), reason: reason.into() }
    }

    /// A step that failed, with its message.
    pub fn failed(message: impl Into<String>) -> Error {
        Error::Failed(message.into())
    }

    /// This error with what was being done: an I/O error without one takes
    /// it, any other error is wrapped.
    pub fn with_context(self, context: impl Into<String>) -> Error {
        match self {
            Error::Io { context: None, source } => Error::Io { context: Some(context.into()), source },
            other => Error::Context { context: context.into(), source: Box::new(other) },
        }
    }

    /// The error under every context: what kind of failure this is.
    pub fn root(&self) -> &Error {
        match self {
            Error::Context { source, .. } => source.root(),
            other => other,
        }
    }

    /// Whether this is, under its contexts, [`Error::NoResult`].
    pub fn is_no_result(&self) -> bool {
        matches!(self.root(), Error::NoResult(_))
    }

    /// Whether this is, under its contexts, [`Error::Interrupted`].
    pub fn is_interrupted(&self) -> bool {
        matches!(self.root(), Error::Interrupted(_))
    }
}

impl fmt::Display for Error {
    /// Its own message; with `{:#}`, followed by each cause (`: cause`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input { at: Some(at), reason } => write!(f, "{at}: {reason}")?,
            Error::Input { at: None, reason: m }
            | Error::Failed(m)
            | Error::NoResult(m)
            | Error::Interrupted(m) => f.write_str(m)?,
            Error::Io { context: Some(c), .. } | Error::Context { context: c, .. } => f.write_str(c)?,
            Error::Io { context: None, source } => write!(f, "{source}")?,
            Error::Lower(e) => write!(f, "{e}")?,
        }
        if f.alternate() {
            let mut cause = std::error::Error::source(self);
            while let Some(e) = cause {
                write!(f, ": {e}")?;
                cause = e.source();
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    /// The cause under this error's own message (an error of a crate below,
    /// and an I/O error without context, print as themselves: their causes).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { context: Some(_), source } => Some(source),
            Error::Io { context: None, source } => source.source(),
            Error::Context { source, .. } => Some(&**source),
            Error::Lower(e) => e.source(),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(source: std::io::Error) -> Error {
        Error::Io { context: None, source }
    }
}

/// The errors of the crates below that reach the library's callers.
macro_rules! lower {
    ($($t:ty),* $(,)?) => {
        $(impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error::Lower(Box::new(e))
            }
        })*
    };
}

lower!(
    store::StoreError,
    executor::build::BuildError,
    executor::evaluate::EvaluateError,
    executor::explain::ExplainError,
    executor::machine::MachineError,
    executor::runtime::DumpError,
    executor::pipeline::Failure,
    codegen::CodegenError,
    model::isl::IslError,
    model::scop::ScopError,
    space::clay::ApplyError,
    space::schedule::ScheduleError,
    space::fusion::FusionError,
    vocab::knobs::KnobError,
    serde_json::Error,
    toml::de::Error,
);

/// What was being done when an error happened, added at the call:
/// `read(path).with_context(|| format!("{}: cannot read", path.display()))?`.
pub trait Context<T> {
    fn context(self, context: impl Into<String>) -> Result<T>;
    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.into().with_context(context))
    }

    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|e| e.into().with_context(context()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{}` is the outermost message, `{:#}` the chain, as `anyhow` prints them.
    #[test]
    fn an_error_prints_its_context_and_with_the_alternate_flag_its_causes() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let e: Result<()> = Err(io).context("a.toml: cannot read");
        let e = e.context("the build description").unwrap_err();
        assert_eq!(e.to_string(), "the build description");
        assert_eq!(format!("{e:#}"), "the build description: a.toml: cannot read: No such file or directory");
        let bare = Error::from(std::io::Error::other("disk full"));
        assert_eq!(format!("{bare:#}"), "disk full");
        assert_eq!(Error::input_at("f.c", "is a directory").to_string(), "f.c: is a directory");
    }

    /// The kind of failure is seen through every context (exit codes read it).
    #[test]
    fn the_kind_of_failure_is_read_under_its_contexts() {
        let e = Error::NoResult("no verified variant".into()).with_context("gemm");
        assert!(e.is_no_result() && !e.is_interrupted());
        assert_eq!(format!("{e:#}"), "gemm: no verified variant");
        assert!(!Error::failed("sbatch refused the job").is_no_result());
    }
}
