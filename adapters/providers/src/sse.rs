//! Server-sent events, decoded incrementally.
//!
//! Bytes arrive in whatever pieces the network cuts; [`SseDecoder::push`]
//! takes each piece and returns the events completed by it. Lines end in
//! `\n`, `\r\n` or `\r`; `data:` lines of one event are joined with `\n`;
//! a line starting with `:` is a comment (Anthropic's keep-alives); `id:`
//! and `retry:` are ignored. An event is dispatched at a blank line. Text is
//! decoded as UTF-8 per whole line, so a character cut between two pieces
//! survives.

/// One decoded event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty when the event had none.
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental decoder; keeps an incomplete line between pushes.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    /// The previous piece ended in `\r`: a `\n` starting the next one is
    /// the same line ending.
    after_cr: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next piece of the stream; returns the events it completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = bytes;
        if self.after_cr && rest.first() == Some(&b'\n') {
            rest = &rest[1..];
        }
        self.after_cr = false;
        while let Some(end) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.line.extend_from_slice(&rest[..end]);
            let crlf = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if crlf {
                if rest.first() == Some(&b'\n') {
                    rest = &rest[1..];
                } else if rest.is_empty() {
                    self.after_cr = true;
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.take_line(&line) {
                out.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        out
    }

    /// Ends the stream: an event not closed by a blank line is dropped, as
    /// the SSE rules say. Returns whether such a partial event was pending.
    pub fn finish(&mut self) -> bool {
        let pending = self.has_data || !self.line.is_empty();
        *self = Self::default();
        pending
    }

    fn take_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            if !self.has_data {
                self.event.clear();
                return None;
            }
            self.has_data = false;
            return Some(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
        }
        if line[0] == b':' {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*text, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(pieces: &[&[u8]]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new();
        pieces.iter().flat_map(|p| decoder.push(p)).collect()
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_lines_and_comments() {
        let text = b": keep-alive\nevent: ping\ndata: {}\n\nevent: a\ndata: 1\ndata: 2\nid: 7\n\n";
        assert_eq!(all(&[text]), [ev("ping", "{}"), ev("a", "1\n2")]);
    }

    #[test]
    fn every_line_ending_and_any_cut() {
        let text = "event: x\r\ndata: é\r\n\r\nevent: y\rdata: z\r\rdata:no-space\n\n";
        let want = [ev("x", "é"), ev("y", "z"), ev("", "no-space")];
        assert_eq!(all(&[text.as_bytes()]), want);
        for cut in 1..text.len() {
            let (a, b) = text.as_bytes().split_at(cut);
            assert_eq!(all(&[a, b]), want, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = text.as_bytes().chunks(1).collect();
        assert_eq!(all(&bytes), want);
    }

    #[test]
    fn an_unfinished_event_is_reported_at_the_end() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push(b"event: a\ndata: 1\n").is_empty());
        assert!(decoder.finish());
        assert!(!decoder.finish());
    }
}
