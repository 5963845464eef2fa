//! What goes to stdout: whole lines, one writer at a time, each frame
//! scrubbed of secrets and fitted under the SDK's line limit.

use super::*;

/// Writes whole lines to stdout, one writer at a time.
#[derive(Clone)]
pub(super) struct Out(pub(super) Arc<Mutex<std::io::Stdout>>);

impl Out {
    /// A frame of the session's stream: scrubbed of secrets, and fitted
    /// under the SDK's line limit.
    pub(super) fn line(&self, mut frame: Value) {
        crate::output::scrub_strings(&mut frame);
        self.raw(frame);
    }

    /// A frame as it is, fitted under the SDK's line limit (see
    /// [`fitted`]); one that cannot be is said in an error frame instead.
    pub(super) fn raw(&self, frame: Value) {
        match fitted(frame) {
            Ok((frame, _)) => self.write(&frame),
            Err(len) => self.write(&error_frame(&format!(
                "a frame of {len} bytes did not fit the SDK's line and was left out"
            ))),
        }
    }

    /// Writes `frame` as one line, as it is.
    pub(super) fn write(&self, frame: &Value) {
        let mut text = frame.to_string();
        text.push('\n');
        let out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut lock = out.lock();
        // A closed stdout (the SDK went away) ends nothing here: the
        // session finishes its turn and the record stays whole.
        let _ = lock.write_all(text.as_bytes()).and_then(|()| lock.flush());
    }
}

/// `frame` under the SDK's line limit: as it is, or cut (its longest
/// strings, else lists, saying so; `true` then). `Err` (its length) when
/// nothing is left to cut (a huge object of small fields): a control
/// request that cannot be shown whole enough is not sent at all.
pub(super) fn fitted(mut frame: Value) -> Result<(Value, bool), usize> {
    let mut len = frame.to_string().len();
    let mut cut = false;
    while len > frames::MAX_LINE && shorten_longest(&mut frame) {
        cut = true;
        len = frame.to_string().len();
    }
    if len > frames::MAX_LINE {
        return Err(len);
    }
    Ok((frame, cut))
}

/// Halves the longest string in `value`, or else its longest list (saying
/// so); false when nothing is left worth cutting.
pub(super) fn shorten_longest(value: &mut Value) -> bool {
    fn longest(value: &mut Value) -> Option<&mut String> {
        match value {
            Value::String(s) => Some(s),
            Value::Array(items) => items.iter_mut().filter_map(longest).max_by_key(|s| s.len()),
            Value::Object(map) => map.values_mut().filter_map(longest).max_by_key(|s| s.len()),
            _ => None,
        }
    }
    /// The length of the longest list in `value`.
    fn most(value: &Value) -> usize {
        match value {
            Value::Array(items) => items.iter().map(most).max().unwrap_or(0).max(items.len()),
            Value::Object(map) => map.values().map(most).max().unwrap_or(0),
            _ => 0,
        }
    }
    fn list_of(value: &mut Value, len: usize) -> Option<&mut Vec<Value>> {
        if value.as_array().is_some_and(|items| items.len() == len) {
            return value.as_array_mut();
        }
        match value {
            Value::Array(items) => items.iter_mut().find_map(|v| list_of(v, len)),
            Value::Object(map) => map.values_mut().find_map(|v| list_of(v, len)),
            _ => None,
        }
    }
    if let Some(text) = longest(value).filter(|t| t.len() >= 1024) {
        let mut cut = text.len() / 2;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(" [cut here to fit the frame]");
        return true;
    }
    let len = most(value);
    match list_of(value, len).filter(|l| l.len() >= 4) {
        Some(list) => {
            let cut = list.len() - list.len() / 2;
            list.truncate(list.len() / 2);
            list.push(Value::String(format!(
                "[{cut} more items cut to fit the frame]"
            )));
            true
        }
        None => replace_biggest_object(value),
    }
}

/// Replaces the biggest object inside `value` (not `value` itself) by a
/// line saying so; false when none is big enough to be worth it.
pub(super) fn replace_biggest_object(value: &mut Value) -> bool {
    fn size(value: &Value) -> usize {
        value.to_string().len()
    }
    /// The size of the biggest object below `value`.
    fn biggest(value: &Value) -> usize {
        let inner: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => return 0,
        };
        inner
            .map(|v| {
                if v.is_object() {
                    size(v).max(biggest(v))
                } else {
                    biggest(v)
                }
            })
            .max()
            .unwrap_or(0)
    }
    fn replace(value: &mut Value, target: usize) -> bool {
        let inner: Box<dyn Iterator<Item = &mut Value>> = match value {
            Value::Array(items) => Box::new(items.iter_mut()),
            Value::Object(map) => Box::new(map.values_mut()),
            _ => return false,
        };
        for v in inner {
            if v.is_object() && size(v) == target {
                *v = Value::String(format!(
                    "[an object of {target} bytes cut to fit the frame]"
                ));
                return true;
            }
            if replace(v, target) {
                return true;
            }
        }
        false
    }
    let target = biggest(value);
    target >= 1024 && replace(value, target)
}
