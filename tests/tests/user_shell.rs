//! `! cmd` (`Submission::Shell`) through the real session with the
//! scripted model and the process sandbox: the command runs between turns
//! in the work folder, a deny rule refuses it, a line the rules cannot
//! check under a deny rule is refused rather than run, and what ran (and
//! what was refused) reaches the model with the next prompt, once.

use cox_protocol::config::PermissionsConfig;
use cox_protocol::provider::ContentBlock;
use cox_protocol::types::{Event, Submission};
use cox_tests::{Options, run};

fn shell(command: &str) -> Submission {
    Submission::Shell {
        command: command.into(),
    }
}

#[test]
fn a_users_command_runs_between_turns_and_reaches_the_next_prompt() {
    let run = run(
        "two_turns",
        Options {
            prompt: "first".into(),
            then: vec![
                shell("echo made > made.txt; echo printed"),
                shell("rm -rf made.txt"),
                shell("$(echo rm) made.txt"),
                Submission::UserTurn {
                    text: "and now the second".into(),
                    images: Vec::new(),
                },
            ],
            permissions: Some(PermissionsConfig {
                deny: vec!["Bash(rm:*)".into()],
                ..PermissionsConfig::default()
            }),
            ..Options::default()
        },
    );
    let ran: Vec<(&String, &cox_protocol::types::ToolResult)> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::UserShell { command, result } => Some((command, result)),
            _ => None,
        })
        .collect();
    assert_eq!(ran.len(), 3);
    assert!(ran[0].1.ok, "{:?}", ran[0].1);
    assert_eq!(ran[0].1.visible, "printed\n");
    assert!(ran[1].1.denied && ran[1].1.visible.contains("Bash(rm:*)"));
    assert!(
        ran[2].1.denied,
        "a dynamic command under a deny rule: {:?}",
        ran[2].1
    );
    assert_eq!(
        std::fs::read_to_string(run.workdir.path().join("made.txt")).unwrap(),
        "made\n",
        "it ran in the work folder, and the rm never did"
    );
    // The second request carries the prompt and, after it, what was run.
    let last = run.requests.last().unwrap();
    let prompt = last.messages.last().unwrap();
    let texts: Vec<&str> = prompt
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts[0], "and now the second");
    assert_eq!(
        texts[1],
        "[the user ran a shell command, which ran]\n$ echo made > made.txt; echo printed\nprinted\n"
    );
    assert!(
        texts[2]
            .starts_with("[the user ran a shell command, which was refused]\n$ rm -rf made.txt")
    );
    assert_eq!(texts.len(), 4);
    // Once: the first request knew nothing of them.
    assert!(!format!("{:?}", run.requests[0].messages).contains("the user ran"));
}
