use super::*;
use proptest::prelude::*;
use unicode_width::UnicodeWidthStr;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|line| line.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// The style of the first span whose text contains `needle`.
fn style_of(lines: &[Line<'_>], needle: &str) -> Style {
    lines
        .iter()
        .flat_map(|line| &line.spans)
        .find(|span| span.content.contains(needle))
        .map(|span| span.style)
        .unwrap_or_else(|| panic!("no span contains {needle:?} in {:?}", texts(lines)))
}

/// Every line fits in `width` (0 counting as 1), but for a character wider
/// than the room left for it: a line overflows by less than its widest
/// character (with its zero-width followers).
fn assert_fits(lines: &[Line<'_>], width: u16) {
    let limit = usize::from(width).max(1);
    for line in lines {
        let text = texts(std::slice::from_ref(line)).concat();
        let mut widest = 1;
        let mut atom = String::new();
        for c in text.chars() {
            if wrap::starts_atom(c) {
                widest = widest.max(atom.width());
                atom.clear();
            }
            atom.push(c);
        }
        widest = widest.max(atom.width());
        assert!(
            line.width() < limit + widest,
            "{text:?} is {} wide at width {width}",
            line.width()
        );
    }
}

const LOREM: &str = "The quick brown fox jumps over the lazy dog while the \
    compiler checks every borrow and the tests run green.";

#[test]
fn headings_are_bold_coloured_without_markers() {
    let lines = render("# Title\n## Section ##\n###### Deep", 40);
    assert_eq!(texts(&lines), ["Title", "Section", "Deep"]);
    assert_eq!(
        style_of(&lines, "Title"),
        HEADING.add_modifier(Modifier::UNDERLINED)
    );
    assert_eq!(style_of(&lines, "Section"), HEADING);
    assert_eq!(style_of(&lines, "Deep"), HEADING);
}

#[test]
fn not_headings() {
    let lines = render("#hashtag\n####### seven", 40);
    assert_eq!(texts(&lines), ["#hashtag", "####### seven"]);
    assert_eq!(style_of(&lines, "#hashtag"), Style::new());
}

#[test]
fn paragraph_wraps_at_width_40() {
    let lines = render(LOREM, 40);
    assert_eq!(
        texts(&lines),
        [
            "The quick brown fox jumps over the lazy",
            "dog while the compiler checks every",
            "borrow and the tests run green.",
        ]
    );
    assert_fits(&lines, 40);
}

#[test]
fn paragraph_wraps_at_width_10_breaking_long_words() {
    let lines = render("a supercalifragilistic word", 10);
    assert_eq!(texts(&lines), ["a", "supercalif", "ragilistic", "word"]);
    let lines = render(LOREM, 10);
    assert_fits(&lines, 10);
    let words: Vec<String> = texts(&lines)
        .join(" ")
        .split_whitespace()
        .map(String::from)
        .collect();
    let expected: Vec<String> = LOREM.split_whitespace().map(String::from).collect();
    assert_eq!(words, expected);
}

#[test]
fn widths_zero_and_one_terminate_and_keep_every_character() {
    let text = "# Head\n- item one\n> quote\n```rs\nfn x() {}\n```\n---\n漢字 **b** `c`";
    for width in [0, 1] {
        let lines = render(text, width);
        assert_fits(&lines, width);
        let shown: String = texts(&lines)
            .concat()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        for expected in [
            "Head", "item", "one", "quote", "rs", "fnx(){}", "漢字", "b", "c",
        ] {
            assert!(
                shown.contains(expected),
                "{expected:?} missing at {width}: {shown:?}"
            );
        }
    }
}

#[test]
fn bold_italic_and_code_spans() {
    let lines = render("a **bold** b *it* c _it2_ d `co*de*` e ***both***", 80);
    assert_eq!(texts(&lines), ["a bold b it c it2 d co*de* e both"]);
    assert_eq!(
        style_of(&lines, "bold"),
        Style::new().add_modifier(Modifier::BOLD)
    );
    assert_eq!(
        style_of(&lines, "it2"),
        Style::new().add_modifier(Modifier::ITALIC)
    );
    assert_eq!(style_of(&lines, "co*de*"), CODE);
    assert_eq!(
        style_of(&lines, "both"),
        Style::new().add_modifier(Modifier::BOLD | Modifier::ITALIC)
    );
    assert_eq!(style_of(&lines, "a "), Style::new());
}

#[test]
fn emphasis_nests() {
    let lines = render("**bold *both* bold** and `` a`b ``", 80);
    assert_eq!(texts(&lines), ["bold both bold and a`b"]);
    assert_eq!(
        style_of(&lines, "both"),
        Style::new().add_modifier(Modifier::BOLD | Modifier::ITALIC)
    );
    assert_eq!(style_of(&lines, "a`b"), CODE);
}

#[test]
fn underscores_inside_words_and_escapes_are_literal() {
    let lines = render(r"call snake_case_name and 2 * 3 * 4 or \*not\*", 80);
    assert_eq!(
        texts(&lines),
        ["call snake_case_name and 2 * 3 * 4 or *not*"]
    );
    assert_eq!(lines[0].spans.len(), 1, "{:?}", lines[0]);
}

#[test]
fn unclosed_delimiters_render_literally() {
    for (input, shown) in [
        ("so **bold", "so **bold"),
        ("so *it", "so *it"),
        ("so `code", "so `code"),
        ("**a*", "**a*"),
        ("x ** y **", "x ** y **"),
    ] {
        let lines = render(input, 80);
        assert_eq!(texts(&lines), [shown], "{input:?}");
        assert_eq!(lines[0].spans.len(), 1, "{input:?}");
    }
}

#[test]
fn bullet_lists_have_a_hanging_indent() {
    let lines = render(
        "- first item that is long enough to wrap\n* second\n+ third",
        20,
    );
    assert_eq!(
        texts(&lines),
        [
            "• first item that is",
            "  long enough to",
            "  wrap",
            "• second",
            "• third"
        ]
    );
    assert_fits(&lines, 20);
}

#[test]
fn nested_lists_indent_and_change_bullets() {
    let lines = render("- top\n  - nested\n    - deeper", 40);
    assert_eq!(texts(&lines), ["• top", "  ◦ nested", "    ▪ deeper"]);
}

#[test]
fn numbered_lists_keep_their_numbers() {
    let lines = render("1. one\n2) two and more words here\n10. ten", 16);
    assert_eq!(
        texts(&lines),
        ["1. one", "2) two and more", "   words here", "10. ten"]
    );
    // A year ending a sentence is not a list.
    assert_eq!(texts(&render("2024. A year.", 40)), ["2024. A year."]);
}

#[test]
fn continuation_lines_keep_their_indent() {
    let lines = render("- item\n  more of the item text", 16);
    assert_eq!(texts(&lines), ["• item", "  more of the", "  item text"]);
}

#[test]
fn quotes_have_a_bar_and_italic_text() {
    let lines = render("> quoted words that wrap\n> > nested", 16);
    assert_eq!(
        texts(&lines),
        ["│ quoted words", "│ that wrap", "│ │ nested"]
    );
    assert_eq!(style_of(&lines, "│"), QUOTE_BAR);
    assert_eq!(
        style_of(&lines, "quoted"),
        Style::new().add_modifier(Modifier::ITALIC)
    );
    let lines = render("> - item **b**", 40);
    assert_eq!(texts(&lines), ["│ • item b"]);
    assert_eq!(
        style_of(&lines, "b"),
        Style::new().add_modifier(Modifier::ITALIC | Modifier::BOLD)
    );
}

#[test]
fn fenced_code_with_a_language() {
    let text = "Look:\n```rust\nfn main() {\n    let x = **y**;\n}\n```\nDone.";
    let lines = render(text, 40);
    assert_eq!(
        texts(&lines),
        [
            "Look:",
            "rust",
            "fn main() {",
            "    let x = **y**;",
            "}",
            "Done."
        ]
    );
    assert_eq!(style_of(&lines, "rust"), DIM);
    assert_eq!(style_of(&lines, "**y**"), CODE);
    assert_eq!(style_of(&lines, "Done."), Style::new());
}

#[test]
fn fenced_code_without_a_language_keeps_blank_lines() {
    let lines = render("~~~~\na\n\n\nb\n~~~~\nafter", 40);
    assert_eq!(texts(&lines), ["a", "", "", "b", "after"]);
    assert_eq!(style_of(&lines, "a"), CODE);
    // A shorter fence does not close a longer one.
    let lines = render("````\n```\nstill code\n````", 40);
    assert_eq!(texts(&lines), ["```", "still code"]);
}

#[test]
fn indented_fences_strip_their_indent() {
    let lines = render("1. step\n   ```sh\n   cargo test\n     -p x\n   ```", 40);
    assert_eq!(texts(&lines), ["1. step", "sh", "cargo test", "  -p x"]);
}

#[test]
fn an_unclosed_fence_renders_the_rest_as_code() {
    let lines = render("Here:\n```python\ndef f():\n    return **x", 40);
    assert_eq!(
        texts(&lines),
        ["Here:", "python", "def f():", "    return **x"]
    );
    assert_eq!(style_of(&lines, "return"), CODE);
}

#[test]
fn code_lines_wrap_by_character() {
    let lines = render("```\nabcdefghijkl\n```", 5);
    assert_eq!(texts(&lines), ["abcde", "fghij", "kl"]);
}

#[test]
fn horizontal_rules_span_the_width() {
    for rule in ["---", "***", "_ _ _", "-----"] {
        let lines = render(rule, 12);
        assert_eq!(texts(&lines), ["─".repeat(12)], "{rule:?}");
        assert_eq!(style_of(&lines, "─"), RULE);
    }
    assert_eq!(texts(&render("> ---", 6)), ["│ ────"]);
}

#[test]
fn blank_lines_collapse_and_never_lead_or_trail() {
    let lines = render("\n\none\n\n\n\ntwo\n\n", 40);
    assert_eq!(texts(&lines), ["one", "", "two"]);
}

#[test]
fn cjk_and_emoji_wrap_by_display_width() {
    let lines = render("漢字仮名交じり文", 6);
    assert_eq!(texts(&lines), ["漢字仮", "名交じ", "り文"]);
    assert_fits(&lines, 6);
    // A wide char never straddles the edge.
    let lines = render("a漢字", 2);
    assert_eq!(texts(&lines), ["a", "漢", "字"]);
    let lines = render("🎉🎉🎉 ok", 4);
    assert_eq!(texts(&lines), ["🎉🎉", "🎉", "ok"]);
}

#[test]
fn zero_width_characters_stay_with_their_base() {
    // e + combining acute, and a variation selector.
    let lines = render("e\u{301}e\u{301}e\u{301}❤\u{fe0f}", 2);
    assert_eq!(texts(&lines), ["e\u{301}e\u{301}", "e\u{301}", "❤\u{fe0f}"]);
    assert_fits(&lines, 2);
}

#[test]
fn prefixes_are_dropped_when_nothing_would_fit() {
    let lines = render("- item", 3);
    assert_eq!(texts(&lines), ["ite", "m"]);
    let lines = render("> quote", 4);
    assert_eq!(texts(&lines), ["│ qu", "│ ot", "│ e"]);
}

const SAMPLE: &str = "# Plan\n\nI'll fix the **borrow** error in `src/lib.rs`:\n\n\
    1. Read the file\n2. Change *one* line:\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n\
    > Note: _tests_ may fail.\n\n- done\n  - nested ✓ 漢字\n\n---\nThat's it.";

#[test]
fn the_sample_answer_renders() {
    let lines = render(SAMPLE, 40);
    assert_eq!(
        texts(&lines),
        [
            "Plan",
            "",
            "I'll fix the borrow error in src/lib.rs:",
            "",
            "1. Read the file",
            "2. Change one line:",
            "",
            "rust",
            "fn main() {",
            "    let x = 1;",
            "}",
            "",
            "│ Note: tests may fail.",
            "",
            "• done",
            "  ◦ nested ✓ 漢字",
            "",
            &"─".repeat(40),
            "That's it.",
        ]
    );
}

fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "#",
        "# ",
        "## ",
        "*",
        "**",
        "***",
        "_",
        "__",
        "`",
        "```",
        "```rust",
        "~~~",
        "> ",
        "- ",
        "1. ",
        "  ",
        " ",
        "\n",
        "\n\n",
        "---",
        "\\",
        "word",
        "longerword",
        "supercalifragilistic",
        "漢字",
        "🎉",
        "e\u{301}",
        "❤\u{fe0f}",
        "\u{200d}",
        "\t",
    ]);
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn streaming_prefixes_of_the_sample_fit(cut in 0..=SAMPLE.len(), width in 0u16..=90) {
        let cut = (0..=cut).rev().find(|&i| SAMPLE.is_char_boundary(i)).unwrap_or(0);
        let lines = render(&SAMPLE[..cut], width);
        assert_fits(&lines, width);
        prop_assert!(lines.len() <= SAMPLE.len().max(1) * 2 + 20);
    }

    #[test]
    fn random_markdown_fits(text in markdownish(), width in 0u16..=50) {
        let lines = render(&text, width);
        assert_fits(&lines, width);
    }

    #[test]
    fn any_text_fits(text in any::<String>(), width in 0u16..=30) {
        let lines = render(&crate::sanitize::sanitize(&text), width);
        assert_fits(&lines, width);
    }

    #[test]
    fn plain_words_survive_wrapping(words in prop::collection::vec("[a-z漢字]{1,12}", 1..30), width in 1u16..=40) {
        let text = words.join(" ");
        let lines = render(&text, width);
        assert_fits(&lines, width);
        let shown: String = texts(&lines).concat().chars().filter(|c| *c != ' ').collect();
        prop_assert_eq!(shown, text.replace(' ', ""));
    }
}

#[test]
fn emphasis_deeper_than_the_limit_is_literal() {
    let lines = render("*a **b _c __d ***e*** d__ c_ b** a*", 80);
    assert_eq!(texts(&lines), ["a b c d ***e*** d c b a"]);
    let all = Modifier::ITALIC | Modifier::BOLD;
    assert_eq!(style_of(&lines, "***e***"), Style::new().add_modifier(all));
}

#[test]
fn unmatched_delimiters_in_a_long_line_stay_literal() {
    // Every opener is unmatched; each kind is searched for once, so this
    // is linear, not quadratic, in the line's length.
    let text = format!("{}`x ``y", "*a _b **c ***d ".repeat(10_000));
    let lines = render(&text, 80);
    let shown = texts(&lines).join(" ");
    assert!(
        shown == text,
        "{} bytes shown of {}",
        shown.len(),
        text.len()
    );
    assert!(lines.iter().all(|line| line.spans.len() == 1));
}
