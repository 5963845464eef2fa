use serde::Deserialize;
use serde::de::{Error as _, Visitor};

use super::*;

/// The message and line of the first refused name in `text`.
fn refused(text: &str) -> Option<(usize, String)> {
    let doc = DeTable::parse(text).unwrap();
    check(doc.get_ref()).map(|r| (super::super::line_at(text, r.at), r.message))
}

#[test]
fn a_misspelt_table_names_its_line_and_the_nearest_table() {
    assert_eq!(
        refused("[core]\nmode = \"editor\"\n\n[permision]\nallow = []\n"),
        Some((
            4,
            "unknown table `[permision]`, did you mean `[permissions]`?".into()
        ))
    );
    assert_eq!(
        refused("[budgets]\nsession_usd = 1.0\n").unwrap().1,
        "unknown table `[budgets]`, did you mean `[budget]`?"
    );
    assert_eq!(
        refused("[Permissions]\n").unwrap().1,
        "unknown table `[Permissions]`, did you mean `[permissions]`?"
    );
    assert_eq!(
        refused("[settings]\n").unwrap().1,
        "unknown table `[settings]` (known: [permissions], [core], [tiers], [providers], \
         [models], [budget], [context], [mcp_servers], [hooks], [sandbox], [telemetry], [agents], [tools], [tui])"
    );
}

#[test]
fn a_key_outside_its_table_points_where_it_belongs() {
    assert_eq!(
        refused("model = \"claude-opus-4-5\"\n[core]\n"),
        Some((
            1,
            "unknown key `model` at the top level, did you mean `[tiers.code] model`?".into()
        ))
    );
    assert_eq!(
        refused("\n\nmode = \"plan\"\n").unwrap(),
        (
            3,
            "unknown key `mode` at the top level, did you mean `[permissions] mode` or \
             `[core] mode` or `[sandbox] mode`?"
                .into()
        )
    );
    assert_eq!(
        refused("[core]\nmodel = \"x\"\n").unwrap().1,
        "unknown key `model` in `[core]`, did you mean `mode` or `[tiers.code] model`?"
    );
}

#[test]
fn a_misspelt_key_in_a_known_table_is_refused_on_its_line() {
    assert_eq!(
        refused("[core]\neffort = \"high\"\nmodle = \"editor\"\n"),
        Some((
            3,
            "unknown key `modle` in `[core]`, did you mean `mode`?".into()
        ))
    );
    assert_eq!(
        refused("[providers.anthropic]\nbase_url = \"http://x\"\napi_key = \"k\"\n").unwrap(),
        (
            3,
            "unknown key `api_key` in `[providers.anthropic]` (known: base_url, api_key_env, \
             max_attempts, retry_base_ms, idle_timeout_ms)"
                .into()
        )
    );
    assert_eq!(
        refused("[models.\"qwen3:30b\"]\nprovider = \"openai\"\nprices = { inptu = 1.0 }\n")
            .unwrap(),
        (
            3,
            "unknown key `inptu` in `[models.\"qwen3:30b\".prices]`, did you mean `input`?".into()
        )
    );
    // The table's key is the id; an `id` inside it would be dropped.
    assert!(
        refused("[models.m]\nid = \"other\"\n")
            .unwrap()
            .1
            .starts_with("unknown key `id` in `[models.m]`")
    );
    // Inline and dotted spellings are read the same way.
    assert_eq!(
        refused("core = { efort = \"low\" }\n").unwrap().1,
        "unknown key `efort` in `[core]`, did you mean `effort`?"
    );
    assert_eq!(
        refused("permissions.alow = []\n").unwrap().1,
        "unknown key `alow` in `[permissions]`, did you mean `allow`?"
    );
}

#[test]
fn entries_come_from_their_list() {
    assert_eq!(
        refused("[tiers.cdoe]\nmodel = \"m\"\n").unwrap(),
        (
            1,
            "unknown tier `[tiers.cdoe]`, did you mean `[tiers.code]`?".into()
        )
    );
    assert_eq!(
        refused("[providers.scripted]\n").unwrap().1,
        "unknown provider `[providers.scripted]` (known: anthropic, openai)"
    );
    assert_eq!(
        refused("[models.\"anything-at-all\"]\nprovider = \"x\"\n"),
        None
    );
}

#[test]
fn tools_take_their_two_switches_and_refuse_a_typo() {
    assert_eq!(
        refused("[tools]\nweb_fetch = false\nweb_search = true\n"),
        None
    );
    let (line, message) = refused("[tools]\nweb_serch = true\n").unwrap();
    assert_eq!(line, 2);
    assert!(message.contains("did you mean `web_search`"), "{message}");
}

#[test]
fn mcp_servers_take_their_keys_and_refuse_a_typo() {
    assert_eq!(
        refused(
            "[mcp_servers.fs]\ncommand = \"x\"\nargs = [\"y\"]\nenv = { A = \"1\" }\n\
             sandbox = false\nnetwork = true\n[mcp_servers.web]\ntype = \"http\"\n\
             url = \"https://example.com\"\nheaders = { X = \"1\" }\n[context]\nmax_tools = 10\n"
        ),
        None
    );
    let (line, message) = refused("[mcp_servers.fs]\ncommand = \"x\"\nargz = []\n").unwrap();
    assert_eq!(line, 3);
    assert!(message.contains("unknown key `argz`"), "{message}");
}

#[test]
fn the_first_refusal_by_position_is_the_one_reported() {
    // Tables are kept sorted by name; the report follows the file.
    let text = "[zzz]\n[aaa]\n";
    assert_eq!(refused(text).unwrap().0, 1);
}

#[test]
fn every_known_name_passes() {
    let text = r#"
[permissions]
allow = []
ask = []
deny = []
mode = "default"
[core]
mode = "editor"
effort = "high"
log_level = "info"
[tiers.cheap]
provider = "anthropic"
model = "m"
effort = "low"
[tiers.code]
[tiers.think]
[providers.anthropic]
base_url = "http://x"
api_key_env = "K"
max_attempts = 1
retry_base_ms = 1
idle_timeout_ms = 1
[providers.openai]
[models."m"]
provider = "openai"
context_window = 1
max_output = 1
prices = { input = 1.0, output = 1.0, cache_read = 1.0, cache_write = 1.0 }
prices_as_of = "2026-01"
efforts = []
[budget]
session_usd = 1.0
monthly_usd = 1.0
[context]
dedup_window_turns = 1
microcompact_after_turns = 1
compact_at = 0.5
keep_turns = 1
"#;
    assert_eq!(refused(text), None);
    let file: super::super::ConfigFile = toml::from_str(text).unwrap();
    assert_eq!(file.core.log_level.as_deref(), Some("info"));
}

#[test]
fn near_names_are_slips_far_ones_are_not() {
    assert_eq!(distance("modle", "model"), 1);
    assert_eq!(distance("permision", "permissions"), 2);
    assert_eq!(distance("Budget", "budget"), 0);
    assert_eq!(nearest("ask", ["mode", "allow"].into_iter()), None);
    assert_eq!(
        nearest("log-level", ["mode", "log_level"].into_iter()),
        Some("log_level")
    );
}

/// Records the field (or variant) names a type asks serde for.
struct Probe<'a>(&'a mut Vec<&'static str>);

impl<'de> serde::Deserializer<'de> for Probe<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(Self::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend(fields);
        Err(Self::Error::custom("probed"))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend(variants);
        Err(Self::Error::custom("probed"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        identifier ignored_any
    }
}

fn fields_of<T: Deserialize<'static>>() -> Vec<&'static str> {
    let mut names = Vec::new();
    let _ = T::deserialize(Probe(&mut names));
    names.sort_unstable();
    names
}

/// The names of a schema table.
fn names_of(shape: &Shape) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = match shape {
        Table(fields) => fields.iter().map(|(n, _)| *n).collect(),
        Shape::Entries {
            names: Some(names), ..
        } => names.to_vec(),
        other => panic!("not a table: {other:?}"),
    };
    names.sort_unstable();
    names
}

fn child(shape: &'static Shape, name: &str) -> &'static Shape {
    match shape {
        Table(fields) => &fields.iter().find(|(n, _)| *n == name).unwrap().1,
        Shape::Entries { entry, .. } => entry,
        other => panic!("not a table: {other:?}"),
    }
}

#[test]
fn the_schema_is_the_structs_serde_fills() {
    use cox_protocol::catalog::{ModelInfo, Prices};
    use cox_protocol::config::{BudgetConfig, ContextConfig, PermissionsConfig};

    use super::super::{ConfigFile, CoreConfig, ProviderConfig, TierConfig, TierName};

    let root_known: Vec<&str> = match &ROOT {
        Table(fields) => {
            let mut names: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
            names.sort_unstable();
            names
        }
        _ => unreachable!(),
    };
    assert_eq!(root_known, fields_of::<ConfigFile>());
    let at = |name| child(&ROOT, name);
    assert_eq!(
        names_of(at("permissions")),
        fields_of::<PermissionsConfig>()
    );
    assert_eq!(names_of(at("core")), fields_of::<CoreConfig>());
    assert_eq!(names_of(at("tiers")), fields_of::<TierName>());
    assert_eq!(
        names_of(child(at("tiers"), "code")),
        fields_of::<TierConfig>()
    );
    assert_eq!(
        names_of(child(at("providers"), "anthropic")),
        fields_of::<ProviderConfig>()
    );
    let model = child(at("models"), "m");
    let mut with_id = names_of(model);
    with_id.push("id");
    with_id.sort_unstable();
    assert_eq!(with_id, fields_of::<ModelInfo>());
    assert_eq!(names_of(child(model, "prices")), fields_of::<Prices>());
    assert_eq!(names_of(at("budget")), fields_of::<BudgetConfig>());
    assert_eq!(names_of(at("context")), fields_of::<ContextConfig>());
    assert_eq!(
        names_of(at("sandbox")),
        fields_of::<crate::config::SandboxConfig>()
    );
    assert_eq!(
        names_of(at("tools")),
        fields_of::<crate::config::ToolsConfig>()
    );
}

#[test]
fn hooks_take_claude_codes_shape_and_their_entries_are_checked_elsewhere() {
    assert_eq!(
        refused(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n\
             hooks = [{ type = \"command\", command = \"./guard.sh\", timeout = 5 }]\n"
        ),
        None
    );
}
