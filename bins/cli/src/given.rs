//! A setting typed as a flag or read from its `COX_*` variable, told apart.
//!
//! The `COX_*` variables that stand for a flag (`COX_MODEL` for `--model`,
//! `COX_PERMISSION_MODE` for `--permission-mode`, …) are read by clap, on
//! the flag's own argument (`env = "COX_MODEL"`), and nowhere else. clap
//! reads a variable only when the flag was not typed, so a flag beats its
//! variable; the config files come under both.
//!
//! A value from the environment is not one the person typed, and three
//! things depend on that. A flag's value is checked by clap (a bad one is a
//! usage error), while a variable's is kept as text and checked by the code
//! that uses it, so a bad variable fails only the commands that read it,
//! with one line naming the variable. A variable never counts as a flag
//! given before the subcommand, nor as the same flag given twice around
//! `run`. And only a flag overrides what a resumed session switched to.
//! [`FlagOrEnv`] is the value parser that keeps the two apart, by the
//! source clap reports; [`Given`] is what it yields.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::parser::ValueSource;

/// Where a setting's value came from, and the value.
#[derive(Clone, Debug, PartialEq)]
pub enum Given<T> {
    /// Typed on the command line, and parsed there.
    Flag(T),
    /// The setting's variable, as text, unparsed. A variable that is empty
    /// or not UTF-8 is here as `""`, which [`Given::env`] reads as unset.
    Env(String),
}

impl<T> Given<T> {
    /// The value, if it was typed.
    #[must_use]
    pub fn flag(&self) -> Option<&T> {
        match self {
            Given::Flag(value) => Some(value),
            Given::Env(_) => None,
        }
    }

    /// The variable's text, if it came from a variable that is set and not
    /// empty.
    #[must_use]
    pub fn env(&self) -> Option<&str> {
        match self {
            Given::Env(text) if !text.is_empty() => Some(text),
            _ => None,
        }
    }

    /// Whether it was typed.
    #[must_use]
    pub fn is_flag(&self) -> bool {
        matches!(self, Given::Flag(_))
    }
}

impl Given<String> {
    /// The text, typed or from a set, non-empty variable.
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        match self {
            Given::Flag(value) => Some(value),
            Given::Env(_) => self.env(),
        }
    }
}

/// A value parser for a flag that also reads a variable: `P` parses what
/// was typed (its errors are clap's usage errors, as without a variable);
/// a variable's value is kept as text.
#[derive(Clone, Debug)]
pub struct FlagOrEnv<P>(pub P);

impl<P> TypedValueParser for FlagOrEnv<P>
where
    P: TypedValueParser,
    P::Value: 'static,
{
    type Value = Given<P::Value>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.0.parse_ref(cmd, arg, value).map(Given::Flag)
    }

    fn parse_ref_(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
        source: ValueSource,
    ) -> Result<Self::Value, clap::Error> {
        if source == ValueSource::EnvVariable {
            // As `std::env::var` reads it: not UTF-8 is as good as unset.
            return Ok(Given::Env(value.to_str().unwrap_or_default().to_owned()));
        }
        self.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        self.0.possible_values()
    }
}

/// The typed value of an optional setting, if it was typed.
#[must_use]
pub fn flag<T>(given: Option<&Given<T>>) -> Option<&T> {
    given.and_then(Given::flag)
}

/// The variable's text of an optional setting, if it came from a set,
/// non-empty variable.
#[must_use]
pub fn env<T>(given: Option<&Given<T>>) -> Option<&str> {
    given.and_then(Given::env)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn parse_level(s: &str) -> Result<u8, String> {
        s.parse().map_err(|_| format!("`{s}` is not a level"))
    }

    #[derive(Parser, Debug)]
    struct Cli {
        #[arg(long, env = "COX_GIVEN_TEST_LEVEL", value_parser = FlagOrEnv(parse_level))]
        level: Option<Given<u8>>,
    }

    fn cli(argv: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("t").chain(argv.iter().copied()))
    }

    #[test]
    fn a_typed_value_is_parsed_and_a_bad_one_is_clap_s_error() {
        let typed = cli(&["--level", "3"]).expect("valid");
        assert_eq!(typed.level, Some(Given::Flag(3)));
        assert_eq!(flag(typed.level.as_ref()), Some(&3));
        assert_eq!(env(typed.level.as_ref()), None);
        let err = cli(&["--level", "loud"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
        assert!(err.to_string().contains("`loud` is not a level"), "{err}");
    }

    #[test]
    fn a_variable_is_kept_as_text_and_empty_reads_as_unset() {
        let parser = FlagOrEnv(parse_level);
        let cmd = clap::Command::new("t");
        let from_env = |text: &str| {
            parser
                .parse_ref_(&cmd, None, OsStr::new(text), ValueSource::EnvVariable)
                .expect("a variable is never refused here")
        };
        assert_eq!(from_env("loud"), Given::Env("loud".into()));
        assert_eq!(from_env("loud").env(), Some("loud"));
        assert_eq!(from_env("").env(), None);
        assert_eq!(from_env("3").flag(), None);
        let typed = parser
            .parse_ref_(&cmd, None, OsStr::new("3"), ValueSource::CommandLine)
            .expect("valid");
        assert_eq!(typed, Given::Flag(3));
        assert!(
            parser
                .parse_ref_(&cmd, None, OsStr::new("loud"), ValueSource::CommandLine)
                .is_err()
        );
    }
}
