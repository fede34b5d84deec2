//! Built-in tools: a skill's own files (progressive disclosure), the
//! workspace's files under grants, and every runnable skill as a tool.

use std::path::{Component, Path};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use serde_json::{Map, Value, json};

use super::{
    CallContext, Denied, MAX_DEPTH, Offer, SkillInvoker, Tool, ToolError, Toolbox, str_arg,
};
use crate::skill::{Capabilities, Skill};
use crate::types::{BoxFuture, FailureClass};

/// Largest file a tool reads or writes.
const MAX_FILE_BYTES: u64 = 1 << 20;
const MAX_LISTED_FILES: usize = 500;

/// A tool the host defines, as data: the face the model sees and the
/// policy asks about, and the functions that check and run a call. One
/// `Tool` impl serves every built-in tool; each is a constant.
#[derive(Clone, Copy)]
pub(super) struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the arguments object.
    pub parameters: fn() -> Value,
    /// See [`Tool::confined`].
    pub confined: bool,
    /// See [`Tool::offer`].
    pub offer: Offer,
    /// See [`Tool::authorize`]; given the tool's name, for its denials.
    pub authorize: fn(&str, &CallContext<'_>, &Value) -> Result<(), Denied>,
    pub call: for<'a> fn(
        &'a Toolbox,
        &'a CallContext<'a>,
        Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>>,
}

impl Tool for Builtin {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> String {
        self.description.to_owned()
    }
    fn parameters(&self) -> Value {
        (self.parameters)()
    }
    fn confined(&self) -> bool {
        self.confined
    }
    fn offer(&self) -> Offer {
        self.offer
    }
    fn authorize(&self, cx: &CallContext<'_>, args: &Value) -> Result<(), Denied> {
        (self.authorize)(self.name, cx, args)
    }
    fn call<'a>(
        &'a self,
        tools: &'a Toolbox,
        cx: &'a CallContext<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        (self.call)(tools, cx, args)
    }
}

/// The grant check of a tool whose calls need nothing from the grants.
pub(super) fn no_grant_needed(_: &str, _: &CallContext<'_>, _: &Value) -> Result<(), Denied> {
    Ok(())
}

/// The file tools (the skill's own and the workspace's), as `Tool`s.
pub(super) fn all() -> Vec<Arc<dyn Tool>> {
    [
        READ_SKILL_FILE,
        LIST_SKILL_FILES,
        READ_FILE,
        WRITE_FILE,
        super::find::FIND_FILES,
    ]
    .into_iter()
    .map(|t| Arc::new(t) as Arc<dyn Tool>)
    .collect()
}

/// The skill-file tools read the calling skill's own folder and nothing
/// else: that is what makes them safe to give an ungranted skill. A
/// `skill` argument is accepted only when it names the caller.
fn own_skill_only(tool: &str, cx: &CallContext<'_>, args: &Value) -> Result<(), Denied> {
    match args.get("skill") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(name)) if *name == cx.skill.name => Ok(()),
        Some(other) => Err(Denied::OtherSkill {
            tool: tool.to_owned(),
            skill: cx.skill.name.clone(),
            asked: other.clone(),
        }),
    }
}

fn file_error(e: crate::skill::SkillFileError) -> ToolError {
    ToolError::failed(FailureClass::FileError, e.to_string())
}

const READ_SKILL_FILE: Builtin = Builtin {
    name: "read_skill_file",
    description: "Read a file of the current skill (its SKILL.md, references, scripts), by path relative to the skill folder. Only this skill's own files.",
    parameters: || {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "Path inside the current skill's folder, e.g. SKILL.md or references/api.md" }
            },
            "required": ["path"]
        })
    },
    confined: true,
    offer: Offer::OwnFiles,
    authorize: own_skill_only,
    call: |_, cx, args| Box::pin(read_skill_file(cx, args)),
};

async fn read_skill_file(cx: &CallContext<'_>, args: Value) -> Result<Value, ToolError> {
    let path = str_arg(&args, "path")?;
    let bytes = cx
        .skill
        .read_content(path, MAX_FILE_BYTES)
        .map_err(file_error)?;
    Ok(Value::String(String::from_utf8_lossy(&bytes).into_owned()))
}

const LIST_SKILL_FILES: Builtin = Builtin {
    name: "list_skill_files",
    description: "List the files of the current skill's folder.",
    parameters: || json!({ "type": "object", "properties": {} }),
    confined: true,
    offer: Offer::OwnFiles,
    authorize: own_skill_only,
    call: |_, cx, _| Box::pin(list_skill_files(cx)),
};

async fn list_skill_files(cx: &CallContext<'_>) -> Result<Value, ToolError> {
    let files = cx.skill.list_files(MAX_LISTED_FILES).map_err(file_error)?;
    Ok(json!(files))
}

/// Whether the grants name a workspace folder to read (write implies read).
pub(super) fn reads_workspace(grants: &Capabilities) -> bool {
    let f = &grants.files;
    f.read
        .iter()
        .chain(&f.write)
        .any(|g| g.starts_with("workspace:"))
}

/// Whether the grants name a workspace folder to write.
fn writes_workspace(grants: &Capabilities) -> bool {
    grants
        .files
        .write
        .iter()
        .any(|g| g.starts_with("workspace:"))
}

/// A workspace path split into the granted folder it falls under and the
/// rest, or why it is refused. Write grants imply read.
pub(super) fn granted_workspace_path<'p>(
    path: &'p str,
    cx: &CallContext<'_>,
    write: bool,
) -> Result<(String, &'p Path), Denied> {
    let p = Path::new(path);
    if path.is_empty()
        || !p
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(Denied::NotRelative { path: path.into() });
    }
    let grants = &cx.grants.files;
    let lists: Vec<&Vec<String>> = if write {
        vec![&grants.write]
    } else {
        vec![&grants.read, &grants.write]
    };
    for granted in lists.into_iter().flatten() {
        let Some(dir) = granted.strip_prefix("workspace:") else {
            continue;
        };
        let dir = dir.trim_end_matches('/');
        // `workspace:.` is the whole workspace.
        let dir = if dir == "." { "" } else { dir };
        if let Ok(rest) = p.strip_prefix(dir) {
            return Ok((dir.to_owned(), rest));
        }
    }
    Err(Denied::NoFileGrant {
        skill: cx.skill.name.clone(),
        path: path.into(),
        write,
    })
}

/// Opens a granted workspace folder, unless it reaches one of the host's
/// own paths (its config, state, skills): no grant covers those.
pub(super) fn open_granted_dir(tools: &Toolbox, dir: &str, write: bool) -> Result<Dir, ToolError> {
    let host = tools.workspace.join(dir);
    let io = |e: std::io::Error| {
        ToolError::failed(FailureClass::FileError, format!("workspace:{dir}: {e}"))
    };
    let canonical = host.canonicalize().map_err(io)?;
    tools
        .control
        .check(&canonical, None, write)
        .map_err(|reason| Denied::ControlPath {
            dir: dir.to_owned(),
            reason,
        })?;
    Dir::open_ambient_dir(canonical, ambient_authority()).map_err(io)
}

const READ_FILE: Builtin = Builtin {
    name: "read_file",
    description: "Read a text file of the workspace (within the folders granted to the skill).",
    parameters: || {
        json!({
            "type": "object",
            "properties": { "path": { "type": "string", "description": "Path relative to the workspace" } },
            "required": ["path"]
        })
    },
    confined: false,
    offer: Offer::Granted(reads_workspace),
    authorize: |_, cx, args| granted_workspace_path(path_arg(args), cx, false).map(|_| ()),
    call: |tools, cx, args| Box::pin(read_file(tools, cx, args)),
};

async fn read_file(tools: &Toolbox, cx: &CallContext<'_>, args: Value) -> Result<Value, ToolError> {
    let path = str_arg(&args, "path")?;
    let (dir, rest) = granted_workspace_path(path, cx, false)?;
    let dir = open_granted_dir(tools, &dir, false)?;
    let meta = dir
        .metadata(rest)
        .map_err(|e| ToolError::failed(FailureClass::FileError, format!("{path}: {e}")))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::failed(
            FailureClass::FileTooLarge,
            format!(
                "{path} is {} bytes, the limit is {MAX_FILE_BYTES}",
                meta.len()
            ),
        ));
    }
    let text = dir
        .read_to_string(rest)
        .map_err(|e| ToolError::failed(FailureClass::FileError, format!("{path}: {e}")))?;
    Ok(Value::String(text))
}

const WRITE_FILE: Builtin = Builtin {
    name: "write_file",
    description: "Write a text file in the workspace (within the folders the skill may write).",
    parameters: || {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "Path relative to the workspace" },
                "content": { "type": "string" }
            },
            "required": ["path", "content"]
        })
    },
    confined: false,
    offer: Offer::Granted(writes_workspace),
    authorize: |_, cx, args| granted_workspace_path(path_arg(args), cx, true).map(|_| ()),
    call: |tools, cx, args| Box::pin(write_file(tools, cx, args)),
};

async fn write_file(
    tools: &Toolbox,
    cx: &CallContext<'_>,
    args: Value,
) -> Result<Value, ToolError> {
    let path = str_arg(&args, "path")?;
    let content = str_arg(&args, "content")?;
    if content.len() as u64 > MAX_FILE_BYTES {
        return Err(ToolError::failed(
            FailureClass::FileTooLarge,
            format!("content over {MAX_FILE_BYTES} bytes"),
        ));
    }
    let (dir, rest) = granted_workspace_path(path, cx, true)?;
    let dir = open_granted_dir(tools, &dir, true)?;
    let io = |e: std::io::Error| ToolError::failed(FailureClass::FileError, format!("{path}: {e}"));
    if let Some(parent) = rest.parent().filter(|p| !p.as_os_str().is_empty()) {
        dir.create_dir_all(parent).map_err(io)?;
    }
    // Atomic within the granted folder: temp file, then rename.
    let name = rest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = rest.with_file_name(format!(".{name}.skillhost-tmp"));
    dir.write(&tmp, content.as_bytes()).map_err(io)?;
    dir.rename(&tmp, &dir, rest).map_err(io)?;
    Ok(json!({ "written": path, "bytes": content.len() }))
}

/// The `path` argument, empty when missing: the grant check refuses it.
fn path_arg(args: &Value) -> &str {
    args.get("path").and_then(Value::as_str).unwrap_or("")
}

/// A skill that runs without a model (handler or pipeline) as a tool.
pub(super) struct SkillTool {
    name: String,
    skill: String,
    description: String,
    parameters: Value,
    invoker: Arc<dyn SkillInvoker>,
}

impl SkillTool {
    pub(super) fn new(skill: &Skill, invoker: Arc<dyn SkillInvoker>) -> Self {
        SkillTool {
            name: format!("skill_{}", skill.name),
            skill: skill.name.clone(),
            // The host's mark of the skill's source first (see
            // `skill::marked_description`), as MCP clients see it.
            description: crate::skill::marked_description(skill),
            parameters: skill_parameters(skill),
            invoker,
        }
    }
}

/// The task text plus the skill's declared context fields.
pub fn skill_parameters(skill: &Skill) -> Value {
    let mut props = Map::new();
    props.insert(
        "task".into(),
        json!({ "type": "string", "description": "What the skill should do, in words" }),
    );
    let mut required = vec![Value::from("task")];
    for (name, field) in &skill.meta.context_fields {
        // `task` is the task text itself; a context field cannot shadow it.
        if name == "task" {
            continue;
        }
        let mut p = json!({ "type": field.kind.json_type() });
        if let Some(d) = &field.description {
            p["description"] = Value::from(d.clone());
        }
        if let Some(d) = &field.default {
            p["default"] = d.clone();
        }
        if field.required && field.default.is_none() {
            required.push(Value::from(name.clone()));
        }
        props.insert(name.clone(), p);
    }
    json!({ "type": "object", "properties": props, "required": required })
}

impl Tool for SkillTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> String {
        self.description.clone()
    }
    fn parameters(&self) -> Value {
        self.parameters.clone()
    }
    fn call<'a>(
        &'a self,
        _tools: &'a Toolbox,
        cx: &'a CallContext<'a>,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async move {
            if cx.depth >= MAX_DEPTH {
                return Err(ToolError::failed(
                    FailureClass::DepthExceeded,
                    format!("skills calling skills went {MAX_DEPTH} levels deep"),
                ));
            }
            let task = str_arg(&args, "task")?.to_owned();
            let mut context = args.as_object().cloned().unwrap_or_default();
            context.remove("task");
            match self
                .invoker
                .invoke(&self.skill, &task, context, cx.depth + 1)
                .await
            {
                Ok(out) => Ok(Value::String(out.body)),
                Err(f) => Err(ToolError::Failed {
                    class: f.class,
                    message: f.message,
                }),
            }
        })
    }
}
