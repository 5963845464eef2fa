//! The `skill` tool: the model loads a skill the index (in `system[2]`)
//! told it of, as Claude Code's `Skill` tool does.
//!
//! `skill { skill, args? }` answers the skill's folder, its `SKILL.md`
//! without the frontmatter, the arguments, and the other files of its
//! folder (which the model reads with `read` when the steps call for
//! them). Loading instructions changes nothing, so the call is read-only;
//! its subject is the `SKILL.md` it reads. The tool is offered only when
//! the session has skills, so a session without any pays nothing for its
//! schema.

use cox_protocol::provider::{BoxFuture, ToolSpec};
use cox_protocol::tool::{Classified, Tool, ToolContext, Workspace};
use cox_protocol::types::{Risk, ToolResult};
use serde_json::{Value, json};

use crate::instructions::skills::Skill;

/// The tool's name.
pub const NAME: &str = "skill";

/// The session's skills, loaded on demand.
#[derive(Debug)]
pub struct SkillTool {
    skills: Vec<Skill>,
}

impl SkillTool {
    /// A tool over `skills`; `None` when there are none.
    #[must_use]
    pub fn over(skills: Vec<Skill>) -> Option<SkillTool> {
        (!skills.is_empty()).then_some(SkillTool { skills })
    }

    fn find(&self, input: &Value) -> Result<&Skill, String> {
        let Some(name) = input.get("skill").and_then(Value::as_str) else {
            return Err("`skill` needs the skill's name, as the index gives it".to_owned());
        };
        let name = name.trim().trim_start_matches('/');
        self.skills.iter().find(|s| s.name == name).ok_or_else(|| {
            let known: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            format!(
                "no skill is called `{name}`; the skills are: {}",
                known.join(", ")
            )
        })
    }
}

impl Tool for SkillTool {
    fn name(&self) -> &str {
        NAME
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Load a skill from the skills index: its instructions, and the files \
                          of its folder. Load one when a task matches its description, before \
                          you start, and follow it."
                .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "skill": {"type": "string", "description": "The skill's name, as the index gives it."},
                    "args": {"type": "string", "description": "Arguments for the skill, if it takes any."}
                },
                "required": ["skill"],
                "additionalProperties": false
            }),
        }
    }

    fn classify(&self, input: &Value, _workspace: &Workspace) -> Classified {
        let subject = match self.find(input) {
            Ok(skill) => skill.file.display().to_string(),
            Err(_) => input
                .get("skill")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        };
        Classified {
            risk: Risk::ReadOnly,
            subject,
            segments: None,
            writes: Vec::new(),
        }
    }

    fn run<'a>(&'a self, input: Value, _cx: ToolContext<'a>) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let skill = match self.find(&input) {
                Ok(skill) => skill,
                Err(why) => return ToolResult::error(why),
            };
            let args = input
                .get("args")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match super::commands::load_skill(skill, args.trim()) {
                Ok(text) => {
                    let bytes = text.len() as u64;
                    ToolResult::ok(text).with_bytes(bytes)
                }
                Err(why) => ToolResult::error(why),
            }
        })
    }
}
