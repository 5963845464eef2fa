//! `/shells`: the background shells the model started, and stopping one.
//!
//! The list is read from the session's shells each time it is asked for;
//! nothing here keeps state. A kill asks the shell to stop and says so;
//! the next `/shells` shows it ended.

use crate::app::BackgroundShells;

/// What `/shells [arg]` shows.
pub fn lines(shells: Option<&dyn BackgroundShells>, arg: Option<&str>) -> Vec<String> {
    let Some(shells) = shells else {
        return vec!["this session has no background shells".into()];
    };
    match arg.map(str::trim).filter(|a| !a.is_empty()) {
        None => {
            let lines = shells.lines();
            if lines.is_empty() {
                vec!["no background shell was started in this session".into()]
            } else {
                lines
            }
        }
        Some(arg) => match arg.strip_prefix("kill").map(str::trim) {
            Some(id) if !id.is_empty() => vec![shells.stop(id).unwrap_or_else(|why| why)],
            _ => vec![format!("/shells {arg}: use /shells, or /shells kill <id>")],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Two;

    impl BackgroundShells for Two {
        fn lines(&self) -> Vec<String> {
            vec!["bash_1  running 3 s".into(), "bash_2  was killed".into()]
        }
        fn stop(&self, id: &str) -> Result<String, String> {
            match id {
                "bash_1" => Ok("stopping bash_1".into()),
                other => Err(format!("no background shell {other}")),
            }
        }
    }

    #[test]
    fn lists_kills_and_says_what_it_cannot_do() {
        assert_eq!(lines(Some(&Two), None).len(), 2);
        assert_eq!(lines(Some(&Two), Some("kill bash_1")), ["stopping bash_1"]);
        assert_eq!(
            lines(Some(&Two), Some("kill bash_5")),
            ["no background shell bash_5"]
        );
        assert!(lines(Some(&Two), Some("frob"))[0].contains("/shells kill <id>"));
        assert!(lines(None, None)[0].contains("no background shells"));
    }
}
