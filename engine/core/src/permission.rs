//! The permission engine, as the core uses it: `cox_core::permission` is
//! `cox_permission` re-exported, so both paths name the same types.
//!
//! ```
//! use std::path::Path;
//! use cox_core::permission::{Engine, Outcome};
//! use cox_protocol::{CallId, config::PermissionsConfig, types::*};
//! use serde_json::json;
//!
//! let home = Path::new("/home/alice");
//! let engine = Engine::compile(&PermissionsConfig::default(), Some(home), Path::new("/repo"))
//!     .expect("default rules compile");
//! let ssh = ToolCall {
//!     id: CallId::new(), name: "read".into(),
//!     input: json!({"path": "/home/alice/.ssh/id_ed25519"}),
//!     risk: Risk::ReadOnly, subject: "/home/alice/.ssh/id_ed25519".into(),
//!     segments: None, // only `bash` fills it
//!     writes: Vec::new(),
//! };
//! // The default config denies this, despite the ReadOnly risk:
//! assert!(matches!(
//!     engine.decide(&ssh, PermissionMode::Default, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite, &[]),
//!     Outcome::Deny { .. }
//! ));
//! ```

pub use cox_permission::*;
