//! Making untrusted text safe to put on a terminal.
//!
//! Whatever a model or a tool wrote is untrusted, and a terminal obeys
//! control sequences found in the text it is given: they can recolour or
//! clear the screen, move the cursor over what the user already read, set
//! the window title, write the clipboard (OSC 52) or dress up a link
//! (OSC 8). Unicode bidi controls can reorder what is shown so that the
//! screen and the bytes disagree (the "Trojan source" attack). [`sanitize`]
//! is the one gate every such string passes before it is drawn.
//!
//! What it removes:
//! - every escape sequence, 7-bit or 8-bit: CSI (`ESC [` or U+009B, up to
//!   its final byte), the control strings OSC, DCS, SOS, PM and APC (up to
//!   BEL, ST, CAN or SUB), `ESC` with intermediates (`ESC ( B`, `ESC # 8`)
//!   and two-character escapes (`ESC c`, `ESC 7`); a sequence cut off by the
//!   end of the text is removed too;
//! - the other C1 controls (U+0080–U+009F) and C0 controls except `\n` and
//!   `\t`, and DEL: a carriage return is dropped, so `\r\n` becomes `\n`;
//! - the bidi controls U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069.
//!
//! What it keeps: everything else, notably zero-width joiners and
//! variation selectors (they build emoji; they are not controls), CJK and
//! emoji.
//!
//! Decisions:
//! - Tabs are expanded to spaces up to the next multiple of [`TAB_WIDTH`]
//!   display columns, counted from the start of the line: a terminal cell
//!   holds no tab, and every renderer downstream measures widths.
//! - Inside a CSI, C0 controls act as they would on a terminal (a `\n`
//!   is kept, the sequence goes on). A control string, unlike on a
//!   terminal, also ends at a `\n` (which is kept): a truncated or
//!   malformed string hides at most the rest of its line, never the rest
//!   of a tool's output.
//!
//! Invariants: the output holds no ESC, no C0 control but `\n`, no DEL, no
//! C1 control and no bidi control; `sanitize(sanitize(x)) == sanitize(x)`;
//! the result borrows the input when nothing had to change. Sanitize whole
//! texts, not stream deltas: a sequence split across two calls leaves its
//! tail behind as plain (harmless) text.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

/// Tab stops every this many display columns.
pub const TAB_WIDTH: usize = 4;

const ESC: char = '\u{1b}';
const BEL: char = '\u{07}';
const CAN: char = '\u{18}';
const SUB: char = '\u{1a}';
const DEL: char = '\u{7f}';
/// The 8-bit forms of CSI and String Terminator.
const C1_CSI: char = '\u{9b}';
const C1_ST: char = '\u{9c}';

/// Returns `text` without escape sequences, control characters or bidi
/// controls, tabs expanded; borrowed when `text` was already clean.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    let Some(start) = text.find(needs_work) else {
        return Cow::Borrowed(text);
    };
    let (clean, rest) = text.split_at(start);
    let line_start = clean.rfind('\n').map_or(0, |i| i + 1);
    let mut filter = Filter {
        out: String::with_capacity(text.len()),
        column: column_width(&clean[line_start..]),
        state: State::Ground,
    };
    filter.out.push_str(clean);
    for c in rest.chars() {
        filter.push(c);
    }
    Cow::Owned(filter.out)
}

/// Whether `c` would not be copied as is by the ground state.
fn needs_work(c: char) -> bool {
    (c < ' ' && c != '\n') || c == DEL || is_c1(c) || is_bidi_control(c)
}

fn is_c1(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c)
}

/// The Unicode bidi formatting controls: embeddings and overrides
/// (U+202A–U+202E), isolates (U+2066–U+2069) and the implicit marks.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

fn column_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Where the parser is, after the VT500 parser's states (reduced to what
/// deciding "drop or keep" needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Plain text.
    Ground,
    /// After `ESC`.
    Escape,
    /// After `ESC` and one or more intermediate bytes (0x20–0x2F).
    EscapeIntermediate,
    /// Inside a CSI, before its final byte.
    Csi,
    /// Inside an OSC, DCS, SOS, PM or APC string.
    ControlString,
}

struct Filter {
    out: String,
    /// Display column on the current output line, for tab stops.
    column: usize,
    state: State,
}

impl Filter {
    fn push(&mut self, c: char) {
        match self.state {
            State::Ground => self.ground(c),
            State::Escape => match c {
                '[' => self.state = State::Csi,
                ']' | 'P' | 'X' | '^' | '_' => self.state = State::ControlString,
                ' '..='/' => self.state = State::EscapeIntermediate,
                '0'..='~' => self.state = State::Ground,
                _ => self.in_sequence(c),
            },
            State::EscapeIntermediate => match c {
                ' '..='/' => {}
                '0'..='~' => self.state = State::Ground,
                _ => self.in_sequence(c),
            },
            State::Csi => match c {
                ' '..='?' => {}
                '@'..='~' => self.state = State::Ground,
                _ => self.in_sequence(c),
            },
            State::ControlString => match c {
                BEL | CAN | SUB | C1_ST => self.state = State::Ground,
                ESC => self.state = State::Escape,
                '\n' => {
                    self.state = State::Ground;
                    self.ground(c);
                }
                _ => {}
            },
        }
    }

    /// A character that is not part of the escape sequence being read.
    fn in_sequence(&mut self, c: char) {
        match c {
            ESC => self.state = State::Escape,
            CAN | SUB => self.state = State::Ground,
            DEL => {}
            // A terminal executes C0 controls met inside a sequence.
            c if c < ' ' => self.ground(c),
            // Anything else (text, C1) aborts the sequence and counts as
            // itself.
            c => {
                self.state = State::Ground;
                self.ground(c);
            }
        }
    }

    fn ground(&mut self, c: char) {
        match c {
            '\n' => {
                self.out.push('\n');
                self.column = 0;
            }
            '\t' => {
                let spaces = TAB_WIDTH - self.column % TAB_WIDTH;
                self.out.extend(std::iter::repeat_n(' ', spaces));
                self.column += spaces;
            }
            ESC => self.state = State::Escape,
            C1_CSI => self.state = State::Csi,
            // DCS, SOS, OSC, PM, APC.
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => {
                self.state = State::ControlString;
            }
            c if needs_work(c) => {}
            c => {
                self.out.push(c);
                self.column += c.width().unwrap_or(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn owned(s: &str) -> String {
        let out = sanitize(s);
        assert!(matches!(out, Cow::Owned(_)), "{s:?} should have changed");
        out.into_owned()
    }

    #[test]
    fn clean_text_is_borrowed_unchanged() {
        for s in [
            "",
            "plain ascii\nwith lines\n",
            "emoji 👩‍👩‍👧 and ❤️ and 🇫🇷",
            "CJK 漢字かなカナ 한국어",
            "combining e\u{301} and zero width\u{200b}space",
        ] {
            assert!(matches!(sanitize(s), Cow::Borrowed(b) if b == s), "{s:?}");
        }
    }

    #[test]
    fn strips_sgr_colour_codes() {
        assert_eq!(
            owned("\x1b[1;31merror\x1b[0m: \x1b[38;5;208mwarn\x1b[m done"),
            "error: warn done"
        );
        assert_eq!(
            owned("\x1b[38:2::255:0:0mtrue colour\x1b[39m"),
            "true colour"
        );
    }

    #[test]
    fn strips_cursor_movement_and_clear_screen() {
        assert_eq!(owned("a\x1b[2J\x1b[H\x1b[3;7Hb\x1b[1A\x1b[Kc"), "abc");
        assert_eq!(owned("x\x1b[?1049h\x1b[?25ly"), "xy");
        // Save/restore cursor, full reset, reverse index, DECALN.
        assert_eq!(owned("1\x1b72\x1b83\x1bc4\x1bM5\x1b#86"), "123456");
        // Charset designation with an intermediate byte.
        assert_eq!(owned("\x1b(0lqk\x1b(B"), "lqk");
    }

    #[test]
    fn strips_osc8_hyperlinks_keeping_the_label() {
        let link = "\x1b]8;;https://evil.example/\x1b\\click here\x1b]8;;\x1b\\ now";
        assert_eq!(owned(link), "click here now");
        let bel = "\x1b]8;id=1;http://x.test\x07label\x1b]8;;\x07";
        assert_eq!(owned(bel), "label");
    }

    #[test]
    fn strips_osc52_clipboard_writes_and_title_changes() {
        assert_eq!(
            owned("before\x1b]52;c;cm0gLXJmIH4=\x07after"),
            "beforeafter"
        );
        assert_eq!(owned("\x1b]0;pwned\x1b\\ok"), "ok");
        assert_eq!(owned("\x1b]2;title\x07ok"), "ok");
    }

    #[test]
    fn strips_dcs_pm_apc_and_sos_strings() {
        assert_eq!(owned("a\x1bP1$r0m\x1b\\b"), "ab");
        assert_eq!(owned("a\x1b^privacy\x1b\\b"), "ab");
        assert_eq!(owned("a\x1b_Gf=100;AAAA\x1b\\b"), "ab");
        assert_eq!(owned("a\x1bXstring\x1b\\b"), "ab");
        // CAN aborts a string.
        assert_eq!(owned("a\x1b]0;t\x18b"), "ab");
    }

    #[test]
    fn truncated_escapes_at_the_end_vanish() {
        assert_eq!(owned("text\x1b"), "text");
        assert_eq!(owned("text\x1b["), "text");
        assert_eq!(owned("text\x1b[38;5"), "text");
        assert_eq!(owned("text\x1b]52;c;AAAA"), "text");
        assert_eq!(owned("text\x1b("), "text");
        assert_eq!(owned("text\u{9b}1;2"), "text");
    }

    #[test]
    fn a_control_string_ends_at_a_line_break() {
        assert_eq!(owned("a\x1b]0;oops\nnext line"), "a\nnext line");
    }

    #[test]
    fn controls_inside_csi_execute_and_text_aborts_it() {
        assert_eq!(owned("a\x1b[1\n2mb"), "a\nb");
        assert_eq!(owned("a\x1b[1\r2mb"), "ab");
        assert_eq!(owned("a\x1b[1é"), "aé");
        assert_eq!(owned("a\x1b\x1b[31mb"), "ab");
        assert_eq!(owned("a\x1b\u{9b}31mb"), "ab");
    }

    #[test]
    fn strips_eight_bit_c1_controls() {
        assert_eq!(owned("a\u{9b}31mred\u{9b}0m b"), "ared b");
        assert_eq!(owned("a\u{9d}0;title\u{9c}b"), "ab");
        assert_eq!(owned("a\u{9d}52;c;AAAA\u{7}b"), "ab");
        assert_eq!(owned("a\u{90}dcs\u{9c}b\u{85}c\u{8d}d"), "abcd");
        assert_eq!(
            owned("a\u{9f}apc\u{9c}b\u{9e}pm\u{9c}c\u{98}sos\u{9c}d"),
            "abcd"
        );
    }

    #[test]
    fn c0_controls_carriage_returns_and_backspaces() {
        assert_eq!(owned("one\r\ntwo\r\n"), "one\ntwo\n");
        assert_eq!(owned("50%\r100%"), "50%100%");
        assert_eq!(owned("ab\x08\x08cd"), "abcd");
        assert_eq!(
            owned("bell\x07 nul\0 del\x7f vt\x0b ff\x0c"),
            "bell nul del vt ff"
        );
    }

    #[test]
    fn tabs_expand_to_the_next_stop() {
        assert_eq!(owned("\tx"), "    x");
        assert_eq!(owned("ab\tc\td"), "ab  c   d");
        assert_eq!(owned("line\nab\tc"), "line\nab  c");
        // Columns count display width: a CJK char is two columns.
        assert_eq!(owned("漢\tx"), "漢  x");
        // A prefix with no work still counts towards the first tab stop.
        assert_eq!(owned("abcde\tf"), "abcde   f");
        // Escapes take no columns.
        assert_eq!(owned("\x1b[31mab\x1b[0m\tc"), "ab  c");
    }

    #[test]
    fn strips_bidi_controls_trojan_source() {
        // The classic: a comment that visually ends before `return`.
        let trojan = "/*\u{202e} } \u{2066}if (isAdmin)\u{2069} \u{2066} begin admins only */";
        let out = owned(trojan);
        assert_eq!(out, "/* } if (isAdmin)  begin admins only */");
        assert_eq!(
            owned(
                "a\u{202a}b\u{202b}c\u{202c}d\u{202d}e\u{2067}f\u{2068}g\u{200e}h\u{200f}i\u{61c}j"
            ),
            "abcdefghij"
        );
    }

    #[test]
    fn keeps_zero_width_joiners_emoji_and_cjk() {
        let family = "👨\u{200d}👩\u{200d}👧";
        assert_eq!(owned(&format!("\x1b[1m{family}\x1b[0m")), family);
        assert_eq!(owned("\x1b[32m漢字 ✓ ❤\u{fe0f}\x1b[0m"), "漢字 ✓ ❤\u{fe0f}");
        assert_eq!(owned("क\u{94d}\u{200d}ष\x07"), "क\u{94d}\u{200d}ष");
    }

    fn hostile_char() -> impl Strategy<Value = char> {
        prop_oneof![
            4 => any::<char>(),
            4 => prop::sample::select(vec![
                '\x1b', '[', ']', '\\', '\x07', '\x18', '\x1a', '\r', '\n', '\t', '\x08',
                '\x7f', 'P', 'X', '^', '_', '(', '#', ';', '0', '1', 'm', 'H', 'a',
                '\u{9b}', '\u{9c}', '\u{9d}', '\u{90}', '\u{85}', '\u{9f}',
                '\u{202e}', '\u{2066}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{61c}',
                '\u{200d}', '漢', '👩',
            ]),
            1 => (0x80u32..=0x9f).prop_map(|u| char::from_u32(u).unwrap_or('?')),
        ]
    }

    fn hostile_text() -> impl Strategy<Value = String> {
        prop::collection::vec(hostile_char(), 0..80).prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #[test]
        fn output_has_no_controls_and_is_idempotent(s in hostile_text()) {
            let once = sanitize(&s);
            for c in once.chars() {
                prop_assert!(c == '\n' || !(c < ' ' || c == DEL), "C0 {c:?} in {once:?}");
                prop_assert!(!is_c1(c), "C1 {c:?} in {once:?}");
                prop_assert!(!is_bidi_control(c), "bidi {c:?} in {once:?}");
            }
            let twice = sanitize(&once);
            prop_assert!(matches!(twice, Cow::Borrowed(_)));
            prop_assert_eq!(twice.as_ref(), once.as_ref());
        }

        #[test]
        fn text_without_controls_passes_through(s in "[^\\x00-\\x1f\\x7f-\\x9f\u{61c}\u{200e}\u{200f}\u{202a}-\u{202e}\u{2066}-\u{2069}]*") {
            prop_assert!(matches!(sanitize(&s), Cow::Borrowed(b) if b == s));
        }
    }
}
