//! One frame of the TUI while a long answer streams (issue 7's figure: no
//! frame over 16 ms at 10,000 tokens/s): the transcript holds a prompt, a
//! few tool calls and an answer of N tokens (about 4 characters each, with
//! markdown), drawn into a 120×40 test backend.

use std::hint::black_box;

use cox_protocol::types::{Event, PermissionMode};
use cox_tui::app::{App, Facts};
use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn app_with_answer(tokens: usize) -> App {
    let mut app = App::new(
        Facts {
            sandbox: "sandboxed".into(),
            base_mode: PermissionMode::Default,
            ..Facts::default()
        },
        Vec::new(),
    );
    app.on_event(&Event::TurnStarted {
        turn: 1,
        text: "explain the module".into(),
    });
    let words = [
        "The ",
        "**parser** ",
        "reads ",
        "`tokens` ",
        "one ",
        "at ",
        "a ",
        "time, ",
        "and\n",
        "- ",
        "each ",
        "item ",
        "is ",
        "checked.\n",
    ];
    for i in 0..tokens {
        app.on_event(&Event::TextDelta {
            text: words[i % words.len()].into(),
        });
    }
    app
}

fn frame(c: &mut Criterion) {
    for tokens in [1_000, 10_000] {
        let app = app_with_answer(tokens);
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
        c.bench_function(&format!("frame with a {tokens}-token answer"), |b| {
            b.iter(|| {
                terminal
                    .draw(|f| cox_tui::view::draw(f, black_box(&app)))
                    .unwrap();
            });
        });
    }
}

criterion_group!(benches, frame);
criterion_main!(benches);
