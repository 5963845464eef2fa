//! Config typos are errors (issue 12, item 2), through the real binary: an
//! unknown table or key in the user's or the project's config stops `cox
//! run`, `cox config show` and `cox doctor` with one line naming the file,
//! the line and the nearest known name (a misspelt `[tools]` switch
//! too); `cox config show` lists no key without effect; and
//! `core.log_level` filters the log file.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{Env, assert_one_line_error, scenario, stderr};
use tempfile::TempDir;

/// A temporary `COX_HOME`, work folder and `HOME`.
struct Setup {
    env: Env,
    home_dir: TempDir,
}

impl Setup {
    fn new() -> Self {
        Self {
            env: Env::new(),
            home_dir: tempfile::tempdir().unwrap(),
        }
    }

    fn cox(&self) -> Command {
        let mut cmd = self.env.cox();
        cmd.env("HOME", self.home_dir.path());
        cmd
    }

    /// `cox run` of the hello scenario.
    fn run(&self) -> Output {
        self.cox()
            .env("COX_PROVIDER", "scripted")
            .env("COX_SCENARIO", scenario("hello"))
            .args(["run", "-p", "x", "--permission-mode", "acceptEdits"])
            .output()
            .unwrap()
    }

    fn user_config(&self, text: &str) -> PathBuf {
        let path = self.env.home.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn project_config(&self, text: &str) -> PathBuf {
        let dir = self.env.work.path().join(".cox");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), text).unwrap();
        std::fs::canonicalize(self.env.work.path())
            .unwrap()
            .join(".cox/config.toml")
    }

    fn log(&self) -> String {
        self.env.log()
    }
}

#[test]
fn a_misspelt_table_in_the_user_config_stops_the_run_in_one_line() {
    let s = Setup::new();
    let path = s.user_config("[core]\neffort = \"high\"\n\n[permision]\nallow = [\"Bash(ls)\"]\n");
    let out = s.run();
    assert_one_line_error(
        &out,
        &format!(
            "{}:4: unknown table `[permision]`, did you mean `[permissions]`?",
            path.display()
        ),
    );
    assert!(s.env.rollouts().is_empty(), "no session started");
}

#[test]
fn a_misspelt_table_in_the_project_config_is_refused_the_same_way() {
    let s = Setup::new();
    let path =
        s.project_config("[permissions]\ndeny = [\"Bash(rm:*)\"]\n[budgets]\nsession_usd = 1.0\n");
    let out = s.run();
    assert_one_line_error(
        &out,
        &format!(
            "{}:3: unknown table `[budgets]`, did you mean `[budget]`?",
            path.display()
        ),
    );
    assert!(s.env.rollouts().is_empty());
}

#[test]
fn unknown_keys_name_their_table_or_where_they_belong() {
    let cases: &[(&str, &str)] = &[
        (
            "[core]\nmodle = \"editor\"\n",
            ":2: unknown key `modle` in `[core]`, did you mean `mode`?",
        ),
        (
            "# mine\nmodel = \"claude-opus-4-5\"\n",
            ":2: unknown key `model` at the top level, did you mean `[tiers.code] model`?",
        ),
        (
            "[tiers.cdoe]\nmodel = \"m\"\n",
            ":1: unknown tier `[tiers.cdoe]`, did you mean `[tiers.code]`?",
        ),
        (
            "[providers.anthropic]\nmax_attempts = 2\nretry_ms = 5\n",
            ":3: unknown key `retry_ms` in `[providers.anthropic]`",
        ),
    ];
    for (text, needle) in cases {
        for project in [false, true] {
            let s = Setup::new();
            let path = if project {
                s.project_config(text)
            } else {
                s.user_config(text)
            };
            let out = s.run();
            assert_one_line_error(&out, &format!("{}{needle}", path.display()));
        }
    }
}

#[test]
fn a_misspelt_tool_switch_is_refused_not_ignored() {
    for (text, needle) in [
        (
            "[tools]\nweb_serch = true\n",
            ":2: unknown key `web_serch` in `[tools]`, did you mean `web_search`?".to_owned(),
        ),
        (
            "[budget]\nsession_usd = 3.0\n\n[tools]\nwebfetch = true\n",
            ":5: unknown key `webfetch` in `[tools]`".to_owned(),
        ),
    ] {
        for project in [false, true] {
            let s = Setup::new();
            let path = if project {
                s.project_config(text)
            } else {
                s.user_config(text)
            };
            assert_one_line_error(&s.run(), &format!("{}{needle}", path.display()));
        }
    }
}

#[test]
fn doctor_fails_on_a_typo_and_shows_the_row() {
    for project in [false, true] {
        let s = Setup::new();
        let path = if project {
            s.project_config("[permissions]\n[permissions.rules]\n")
        } else {
            s.user_config("[core]\nlog-level = \"debug\"\n")
        };
        let out = s.cox().arg("doctor").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
        let row = text
            .lines()
            .find(|l| l.contains(" config "))
            .unwrap_or_else(|| panic!("no config row: {text}"));
        let expected = if project {
            format!(
                "{}:2: unknown table `[permissions.rules]` (known: allow, ask, deny, mode)",
                path.display()
            )
        } else {
            format!(
                "{}:2: unknown key `log-level` in `[core]`, did you mean `log_level`?",
                path.display()
            )
        };
        assert!(row.starts_with("fail"), "{row}");
        assert!(
            row.ends_with(&expected),
            "{row}\nshould end with {expected}"
        );
    }
}

#[test]
fn config_show_refuses_a_typo_and_lists_no_key_without_effect() {
    let s = Setup::new();
    let user = s.user_config("[core]\nmodle = \"editor\"\n");
    let out = s.cox().args(["config", "show"]).output().unwrap();
    assert_one_line_error(&out, &format!("{}:2: unknown key `modle`", user.display()));

    // Every key a file may hold is shown only where it takes effect: a
    // project's [core] and [context] are listed as ignored, not as values.
    let user = s.user_config("[core]\nlog_level = \"warn\"\n[context]\nkeep_turns = 3\n");
    let project = s.project_config(
        "[core]\nlog_level = \"trace\"\n[context]\nkeep_turns = 9\n[permissions]\ndeny = [\"Bash(rm:*)\"]\n",
    );
    let out = s
        .cox()
        .args(["config", "show", "--sources"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    let value = |key: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no {key} in {text}"))
            .to_owned()
    };
    let log_level = value("core.log_level");
    assert!(
        log_level.contains("= warn") && log_level.ends_with(&format!("# {}:2", user.display())),
        "{log_level}"
    );
    assert!(value("context.keep_turns").contains("= 3"));
    for (key, line) in [("core.log_level", 2), ("context.keep_turns", 4)] {
        assert!(
            text.contains(&format!(
                "# ignored: {key} (from {}:{line}: a project config cannot set it)",
                project.display()
            )),
            "{text}"
        );
    }
    // And `cox run` says so rather than dropping them silently.
    let out = s.run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "cox: warning: ignoring [core] and [context] in project config {}",
            project.display()
        )),
        "{}",
        stderr(&out)
    );
}

/// The `level` of every line of the log.
fn levels(log: &str) -> Vec<String> {
    log.lines()
        .map(|l| {
            let line: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
            line["level"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn core_log_level_filters_the_log_file_and_cox_log_wins() {
    // The default: info lines, no debug.
    let s = Setup::new();
    assert_eq!(s.run().status.code(), Some(0));
    let default = levels(&s.log());
    assert!(default.iter().any(|l| l == "INFO"), "{default:?}");
    assert!(!default.iter().any(|l| l == "DEBUG"), "{default:?}");

    // `error`: a clean run writes nothing.
    let s = Setup::new();
    s.user_config("[core]\nlog_level = \"error\"\n");
    let out = s.run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(levels(&s.log()), Vec::<String>::new());

    // `debug`: more than the default, the config files read among them.
    let s = Setup::new();
    s.user_config("[core]\nlog_level = \"debug\"\n");
    assert_eq!(s.run().status.code(), Some(0));
    let log = s.log();
    let debug = levels(&log);
    assert!(debug.iter().any(|l| l == "DEBUG"), "{log}");
    assert!(debug.len() > default.len(), "{log}");
    assert!(log.contains("config read"), "{log}");

    // A directive list works as tracing reads it.
    let s = Setup::new();
    s.user_config("[core]\nlog_level = \"warn,cox_cli::config=debug\"\n");
    assert_eq!(s.run().status.code(), Some(0));
    let mixed = levels(&s.log());
    assert!(mixed.iter().any(|l| l == "DEBUG"), "{mixed:?}");
    assert!(!mixed.iter().any(|l| l == "INFO"), "{mixed:?}");

    // COX_LOG replaces the config's filter for one run.
    let s = Setup::new();
    s.user_config("[core]\nlog_level = \"error\"\n");
    let out = s
        .cox()
        .env("COX_LOG", "info")
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", scenario("hello"))
        .args(["run", "-p", "x", "--permission-mode", "acceptEdits"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(levels(&s.log()).iter().any(|l| l == "INFO"));
}

#[test]
fn a_misspelt_log_level_is_refused_with_the_nearest_level() {
    let s = Setup::new();
    let path = s.user_config("[core]\nmode = \"editor\"\nlog_level = \"inof\"\n");
    assert_one_line_error(
        &s.run(),
        &format!(
            "{}:3: [core] log_level: `inof` is not a level (off, error, warn, info, debug, \
             trace), did you mean `info`?",
            path.display()
        ),
    );
    let s = Setup::new();
    let out = s
        .cox()
        .env("COX_LOG", "verbose")
        .args(["run", "-p", "x"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "COX_LOG=verbose: `verbose` is not a level");
    let out = s
        .cox()
        .env("COX_LOG", "verbose")
        .args(["config", "show"])
        .output()
        .unwrap();
    assert_one_line_error(&out, "COX_LOG=verbose: `verbose` is not a level");
}

/// `[tui] status_line` is read from your config and shown by `cox config
/// show`; a project's is ignored with a warning (its command would run
/// whatever the repository says); an empty command or a misspelt key is an
/// error naming the file.
#[test]
fn the_status_line_is_yours_to_set() {
    let env = Env::new();
    let user = env.home.path().join("config.toml");
    std::fs::write(&user, "[tui]\nstatus_line = { command = \"echo hi\" }\n").unwrap();
    std::fs::create_dir_all(env.work.path().join(".cox")).unwrap();
    let project = env.work.path().join(".cox/config.toml");
    std::fs::write(&project, "[tui]\nstatus_line = { command = \"evil\" }\n").unwrap();
    let out = env.cox().args(["config", "show"]).output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        shown.contains("tui.status_line.command      = echo hi"),
        "{shown}"
    );
    assert!(
        shown.contains("# ignored: tui.status_line.command (from"),
        "{shown}"
    );
    let out = env.run("hello", &["--permission-mode", "acceptEdits"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ignoring [tui] in project config"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(&project).unwrap();

    std::fs::write(&user, "[tui]\nstatus_line = { command = \"  \" }\n").unwrap();
    assert_one_line_error(
        &env.run("hello", &[]),
        "config.toml: [tui] status_line.command is empty",
    );
    std::fs::write(&user, "[tui]\nstatus_line = { comand = \"x\" }\n").unwrap();
    assert_one_line_error(
        &env.run("hello", &[]),
        "config.toml:2: unknown key `comand`",
    );
}
