use super::{COMMANDS, Command, ModeArg, complete, distance, help, known_model, parse};

fn ok(input: &str) -> Command {
    match parse(input) {
        Some(Ok(command)) => command,
        other => panic!("{input:?} gave {other:?}"),
    }
}

fn err(input: &str) -> String {
    match parse(input) {
        Some(Err(message)) => message,
        other => panic!("{input:?} gave {other:?}"),
    }
}

#[test]
fn commands_without_arguments() {
    assert_eq!(ok("/permissions"), Command::Permissions);
    assert_eq!(ok("/cost"), Command::Cost);
    assert_eq!(ok("/agents"), Command::Agents(None));
    assert_eq!(ok("/agents 2"), Command::Agents(Some("2".into())));
    assert_eq!(
        ok("/shells kill bash_2"),
        Command::Shells(Some("kill bash_2".into()))
    );
    assert_eq!(ok("/clear"), Command::Clear);
    assert_eq!(ok("/help"), Command::Help);
    assert_eq!(ok("/quit"), Command::Quit);
    assert_eq!(ok("/exit"), Command::Quit);
    assert_eq!(
        ok("/COST  \n"),
        Command::Cost,
        "names are case insensitive, trailing space is ignored"
    );
}

#[test]
fn commands_without_arguments_refuse_one() {
    assert_eq!(err("/cost now"), "/cost takes no argument");
    assert_eq!(err("/exit please"), "/quit takes no argument");
}

#[test]
fn mode_takes_architect_or_editor() {
    assert_eq!(ok("/mode architect"), Command::Mode(ModeArg::Architect));
    assert_eq!(ok("/mode   Editor "), Command::Mode(ModeArg::Editor));
    assert_eq!(ModeArg::Architect.as_str(), "architect");
    assert_eq!(ModeArg::Editor.as_str(), "editor");
}

#[test]
fn mode_errors_name_the_choices() {
    assert_eq!(err("/mode"), "/mode needs an argument: architect or editor");
    assert_eq!(
        err("/mode architect editor"),
        "/mode takes one argument: architect or editor"
    );
    assert_eq!(
        err("/mode archtect"),
        "unknown mode archtect for /mode; did you mean architect?"
    );
    assert_eq!(
        err("/mode ed"),
        "unknown mode ed for /mode; did you mean editor?"
    );
    assert_eq!(
        err("/mode plan"),
        "unknown mode plan for /mode; choose architect or editor"
    );
}

#[test]
fn compact_takes_an_optional_focus() {
    assert_eq!(ok("/compact"), Command::Compact(None));
    assert_eq!(ok("/compact   "), Command::Compact(None));
    assert_eq!(
        ok("/compact the parser, and its tests"),
        Command::Compact(Some("the parser, and its tests".to_owned()))
    );
    assert_eq!(
        ok("/compact keep\nthe plan"),
        Command::Compact(Some("keep\nthe plan".to_owned()))
    );
}

#[test]
fn model_and_resume_take_an_optional_word() {
    assert_eq!(ok("/model"), Command::Model(None));
    assert_eq!(
        ok("/model claude-sonnet-5"),
        Command::Model(Some("claude-sonnet-5".to_owned()))
    );
    assert_eq!(ok("/resume"), Command::Resume(None));
    assert_eq!(
        ok("/resume 01J9ZX"),
        Command::Resume(Some("01J9ZX".to_owned())),
        "the argument keeps its case"
    );
    assert_eq!(
        err("/model gpt 5"),
        "/model takes one argument: a model name"
    );
    assert_eq!(
        err("/resume a b"),
        "/resume takes one argument: a session id"
    );
}

#[test]
fn text_that_is_not_a_command_is_none() {
    assert_eq!(parse("fix /mode"), None);
    assert_eq!(
        parse(" /mode architect"),
        None,
        "a leading space sends it as a prompt"
    );
    assert_eq!(
        parse("/etc/hosts has a typo"),
        None,
        "a path is not a command"
    );
    assert_eq!(parse("//help"), None);
    assert_eq!(parse(""), None);
}

#[test]
fn a_bare_slash_lists_the_commands() {
    assert_eq!(
        err("/"),
        "type a command after /: /mode, /compact, /model, /permissions, /memory, /cost, /agents, /shells, /resume, /rewind, /clear, /mcp, /help, /quit"
    );
    assert_eq!(err("/ cost"), err("/"));
}

#[test]
fn unknown_commands_suggest_the_nearest() {
    assert_eq!(err("/modee"), "unknown command /modee; did you mean /mode?");
    assert_eq!(
        err("/hlep"),
        "unknown command /hlep; did you mean /help?",
        "a swap is one edit"
    );
    assert_eq!(err("/exti"), "unknown command /exti; did you mean /exit?");
    assert_eq!(
        err("/co"),
        "unknown command /co; did you mean /compact or /cost?",
        "a prefix names all it fits"
    );
    assert_eq!(
        err("/mod x"),
        "unknown command /mod; did you mean /mode or /model?"
    );
    assert_eq!(err("/Cots"), "unknown command /cots; did you mean /cost?");
}

#[test]
fn unknown_commands_far_from_any_list_them_all() {
    assert_eq!(
        err("/deploy"),
        "unknown command /deploy; commands: /mode, /compact, /model, /permissions, /memory, /cost, /agents, /shells, /resume, /rewind, /clear, /mcp, /help, /quit"
    );
}

#[test]
fn completion_lists_commands_by_prefix() {
    let names = |prefix: &str| {
        complete(prefix)
            .into_iter()
            .map(|(name, _)| name)
            .collect::<Vec<_>>()
    };
    assert_eq!(names("/co"), ["/compact", "/cost"]);
    assert_eq!(names("/mode"), ["/mode", "/model"]);
    assert_eq!(names("/Q"), ["/quit"]);
    assert_eq!(names("/").len(), COMMANDS.len());
    assert_eq!(names("/x"), Vec::<&str>::new());
    assert_eq!(names("co"), Vec::<&str>::new());
    assert_eq!(names("/etc/ho"), Vec::<&str>::new());
    assert_eq!(
        complete("/cost"),
        [("/cost", "show this session's tokens and cost")]
    );
}

#[test]
fn completion_offers_the_modes_after_mode() {
    let modes = |prefix: &str| {
        complete(prefix)
            .into_iter()
            .map(|(name, _)| name)
            .collect::<Vec<_>>()
    };
    assert_eq!(modes("/mode "), ["architect", "editor"]);
    assert_eq!(modes("/mode  a"), ["architect"]);
    assert_eq!(modes("/MODE E"), ["editor"]);
    assert_eq!(modes("/mode architect "), Vec::<&str>::new());
    assert_eq!(modes("/mode x"), Vec::<&str>::new());
    assert_eq!(
        modes("/model "),
        Vec::<&str>::new(),
        "model names are not known here"
    );
    assert_eq!(modes("/compact "), Vec::<&str>::new());
    assert!(complete("/mode ").iter().all(|(_, help)| !help.is_empty()));
}

#[test]
fn help_has_a_line_for_every_command() {
    let help = help();
    assert_eq!(help.len(), COMMANDS.len());
    let usages: Vec<&str> = help.iter().map(|(usage, _)| *usage).collect();
    assert_eq!(
        usages,
        [
            "/mode architect|editor",
            "/compact [focus]",
            "/model [name]",
            "/permissions",
            "/memory [list | add <text> | forget <id>]",
            "/cost",
            "/agents [n]",
            "/shells [kill <id>]",
            "/resume [id]",
            "/rewind",
            "/clear",
            "/mcp [login <server> | trust <server> | retry]",
            "/help",
            "/quit"
        ]
    );
    for (usage, line) in help {
        assert!(!line.is_empty() && !line.contains('\n'), "{usage}");
    }
}

#[test]
fn every_listed_command_parses() {
    for spec in COMMANDS {
        let input = if spec.name == "/mode" {
            "/mode editor".to_owned()
        } else if spec.name == "/mcp" {
            "/mcp login docs".to_owned()
        } else {
            spec.name.to_owned()
        };
        assert!(matches!(parse(&input), Some(Ok(_))), "{input}");
    }
}

#[test]
fn distance_counts_edits_and_swaps() {
    assert_eq!(distance("mode", "mode"), 0);
    assert_eq!(distance("mode", "model"), 1);
    assert_eq!(distance("hlep", "help"), 1);
    assert_eq!(distance("", "cost"), 4);
    assert_eq!(distance("modee", "model"), 2, "a substitution costs two");
    assert_eq!(distance("kitten", "sitting"), 5);
    assert_eq!(distance("日本", "日本語"), 1);
}

#[test]
fn a_model_must_be_known_to_switch_to() {
    let known = ["claude-sonnet-5", "claude-opus-4-5", "gpt-5", "gpt-5-mini"];
    assert_eq!(known_model("gpt-5", &known), Ok("gpt-5"));
    assert_eq!(known_model("GPT-5-Mini", &known), Ok("gpt-5-mini"));
    assert_eq!(
        known_model("claude-sonet-5", &known),
        Err(
            "unknown model claude-sonet-5: neither in the catalog nor in your config; \
             did you mean claude-sonnet-5?"
                .into()
        )
    );
    // A prefix of several: all of them.
    assert_eq!(
        known_model("gpt", &known).unwrap_err(),
        "unknown model gpt: neither in the catalog nor in your config; \
         did you mean gpt-5 or gpt-5-mini?"
    );
    assert_eq!(
        known_model("llama-3", &known).unwrap_err(),
        "unknown model llama-3: neither in the catalog nor in your config"
    );
    assert!(known_model("x", &[]).is_err());
}

#[test]
fn mcp_lists_and_its_login_and_trust_name_one_server() {
    assert_eq!(parse("/mcp"), Some(Ok(Command::Mcp)));
    assert_eq!(parse("/mcp retry"), Some(Ok(Command::McpRetry)));
    assert_eq!(
        parse("/mcp login docs"),
        Some(Ok(Command::McpLogin("docs".into())))
    );
    assert_eq!(
        parse("/MCP LOGIN docs"),
        Some(Ok(Command::McpLogin("docs".into())))
    );
    assert_eq!(
        parse("/mcp trust proj"),
        Some(Ok(Command::McpTrust("proj".into())))
    );
    for bad in [
        "/mcp login",
        "/mcp logout docs",
        "/mcp login a b",
        "/mcp trust",
        "/mcp retry now",
    ] {
        assert_eq!(
            parse(bad),
            Some(Err(
                "usage: /mcp [login <server> | trust <server> | retry]".into()
            )),
            "{bad}"
        );
    }
}
