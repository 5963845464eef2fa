//! Tool input schemas, derived with `schemars` from the structs the tools
//! deserialise their input into, so the schema cannot drift from what is
//! accepted: a field, its type, whether it is required (serde's `default`
//! and `Option`) and `additionalProperties: false` (serde's
//! `deny_unknown_fields`) all come from the struct. A field's doc comment
//! is its description, so only a field whose name does not say it all has
//! one.
//!
//! The schema is sent on every request, so [`Terse`] keeps it to what the
//! model uses, in a fixed key order; the bytes are pinned by the golden
//! request bodies (`schema_tests` compares them):
//! - no `$schema`, no `title` (a Rust type's name), no `default`;
//! - an optional field is one left out of `required`, not a `null` type;
//! - an unsigned integer is an `integer`, without its format and the
//!   minimum 0 the format implies;
//! - keys go `type`, `enum`, `description`, `properties`, `required`,
//!   `additionalProperties`, then any other in the order generated.
//!
//! A closed set of names (an enum of unit variants) opts into [`names_only`]:
//! the model is given the names; what each means is for the Rust reader.

use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema, generate::SchemaSettings};
use serde_json::{Map, Value};

/// The order of the keys a schema object is written with.
const ORDER: [&str; 6] = [
    "type",
    "enum",
    "description",
    "properties",
    "required",
    "additionalProperties",
];

/// The input schema of a tool whose input deserialises into `T`.
pub(crate) fn input_schema<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12().with_transform(Terse);
    settings.meta_schema = None;
    settings.inline_subschemas = true;
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Keeps a schema and its subschemas to what the model reads (see the
/// module doc).
#[derive(Clone, Copy, Debug)]
struct Terse;

impl Transform for Terse {
    fn transform(&mut self, schema: &mut Schema) {
        transform_subschemas(self, schema);
        let Some(object) = schema.as_object_mut() else {
            return;
        };
        for key in ["$schema", "title", "default"] {
            object.shift_remove(key);
        }
        if let Some(Value::Array(types)) = object.get_mut("type") {
            types.retain(|t| t != "null");
            if let [only] = types.as_mut_slice() {
                let only = only.take();
                object.insert("type".into(), only);
            }
        }
        let unsigned = object
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|f| f.starts_with("uint"));
        if unsigned {
            object.shift_remove("format");
            if object.get("minimum") == Some(&Value::from(0)) {
                object.shift_remove("minimum");
            }
        }
        let mut rest = std::mem::take(object);
        for key in ORDER {
            if let Some(value) = rest.shift_remove(key) {
                object.insert(key.into(), value);
            }
        }
        object.extend(rest);
    }
}

/// For `#[schemars(transform = ...)]` on an enum of unit variants: its
/// schema becomes `{"enum": [names]}`, whether `schemars` wrote the names
/// as an `enum` or (for variants with doc comments) as a `oneOf` of
/// `const`s.
pub(crate) fn names_only(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let names: Vec<Value> = match (object.get("enum"), object.get("oneOf")) {
        (Some(Value::Array(names)), _) => names.clone(),
        (None, Some(Value::Array(variants))) => {
            let names: Option<Vec<Value>> =
                variants.iter().map(|v| v.get("const").cloned()).collect();
            // A variant that is not a plain name keeps the schema as it is.
            let Some(names) = names else { return };
            names
        }
        _ => return,
    };
    let mut only = Map::new();
    only.insert("enum".into(), Value::Array(names));
    *object = only;
}
