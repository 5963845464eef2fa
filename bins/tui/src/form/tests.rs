use super::*;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

fn press(form: &mut Form, code: KeyCode) -> Outcome {
    form.key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn typed(form: &mut Form, text: &str) {
    for c in text.chars() {
        press(form, KeyCode::Char(c));
    }
}

/// The reference server's form, cut down to one field of each kind.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "check": {"type": "boolean", "title": "Agree"},
            "name": {"type": "string", "title": "Name", "description": "Your full name"},
            "email": {"type": "string", "format": "email"},
            "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "hero": {"type": "string", "oneOf": [
                {"const": "hero-1", "title": "Superman"},
                {"const": "hero-2", "title": "Green Lantern"}
            ], "default": "hero-1"},
            "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]},
            "fish": {"type": "array", "minItems": 1, "maxItems": 2,
                "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}]},
                "default": ["f1"]},
            "nested": {"type": "object"}
        },
        "required": ["name"]
    })
}

#[test]
fn a_filled_form_sends_each_field_as_its_schema_types_it() {
    let mut form = Form::new("elicit-1", "every", "Please fill in", &schema());
    // The required field comes first.
    typed(&mut form, "Ada");
    press(&mut form, KeyCode::Down); // check
    press(&mut form, KeyCode::Char(' '));
    press(&mut form, KeyCode::Down); // email: left empty
    press(&mut form, KeyCode::Down); // integer 42 → 7
    press(&mut form, KeyCode::Backspace);
    press(&mut form, KeyCode::Backspace);
    typed(&mut form, "7");
    press(&mut form, KeyCode::Down); // hero → Green Lantern
    press(&mut form, KeyCode::Right);
    press(&mut form, KeyCode::Down); // pet: first
    press(&mut form, KeyCode::Down); // fish: tick Trout too
    press(&mut form, KeyCode::Right);
    press(&mut form, KeyCode::Char(' '));
    let Outcome::Answered(ElicitAnswer::Accept { content }) = press(&mut form, KeyCode::Enter)
    else {
        panic!("the form was not sent: {:?}", form.error);
    };
    assert_eq!(
        Value::Object(content),
        json!({"name": "Ada", "check": true, "integer": 7, "hero": "hero-2", "pet": "pet-1",
               "fish": ["f1", "f2"]})
    );
}

#[test]
fn a_form_that_does_not_fit_stays_open_and_says_why() {
    let mut form = Form::new("elicit-1", "every", "m", &schema());
    assert_eq!(press(&mut form, KeyCode::Enter), Outcome::Open);
    assert_eq!(form.error.as_deref(), Some("Name is required"));
    typed(&mut form, "Ada");
    press(&mut form, KeyCode::Down);
    press(&mut form, KeyCode::Down);
    typed(&mut form, "not an address");
    assert_eq!(press(&mut form, KeyCode::Enter), Outcome::Open);
    assert_eq!(
        form.error.as_deref(),
        Some("email must be an email address")
    );
    for _ in 0.."not an address".len() {
        press(&mut form, KeyCode::Backspace);
    }
    press(&mut form, KeyCode::Down);
    typed(&mut form, "0"); // 420
    assert_eq!(press(&mut form, KeyCode::Enter), Outcome::Open);
    assert_eq!(form.error.as_deref(), Some("integer must be within 1–100"));
}

#[test]
fn esc_declines_and_a_required_field_it_cannot_show_only_declines() {
    let mut form = Form::new("elicit-1", "every", "m", &schema());
    assert_eq!(
        press(&mut form, KeyCode::Esc),
        Outcome::Answered(ElicitAnswer::Decline)
    );
    let odd =
        json!({"type": "object", "properties": {"deep": {"type": "object"}}, "required": ["deep"]});
    let mut form = Form::new("elicit-2", "every", "m", &odd);
    assert_eq!(press(&mut form, KeyCode::Enter), Outcome::Open);
    assert!(
        form.error
            .as_deref()
            .is_some_and(|e| e.contains("cannot show field(s) deep"))
    );
}

#[test]
fn what_the_server_wrote_is_sanitised_in_the_form() {
    let schema =
        json!({"type": "object", "properties": {"x": {"type": "string", "title": "A\u{1b}[31mB"}}});
    let form = Form::new(
        "elicit-1",
        "ev\u{1b}]0;t\u{7}il",
        "hi\u{202e}there",
        &schema,
    );
    let drawn: String = form
        .lines(80)
        .iter()
        .flat_map(|l| l.spans.iter().map(|s| s.content.to_string()))
        .collect();
    assert!(
        !drawn.contains('\u{1b}') && !drawn.contains('\u{202e}'),
        "{drawn:?}"
    );
}
