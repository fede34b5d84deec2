//! The MCP `ServerHandler`: tools, resources and prompts over one
//! [`Runner`]. The tool set is one tool per skill, known only at start, so
//! the list/call methods are written by hand instead of with rmcp's static
//! tool router.

use std::sync::{Arc, Mutex};

use rmcp::model::ErrorCode;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, Prompt, PromptArgument,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use super::names::{self, ToolTable};
use super::resources;
use crate::exec::{Progress, ProgressSink, RunOutcome, RunRequest, Runner, Via, with_progress};
use crate::mcp_admission::{CallGate, RETRY_AFTER_SECS};
use crate::skill::{Catalog, Skill, SkillFileError, marked_description};
use crate::types::{Chain, FailureClass};

/// The JSON-RPC error code of a busy answer: every place to run a call and
/// every place in the queue taken (implementation-defined server error).
pub const BUSY_CODE: ErrorCode = ErrorCode(-32000);

/// A call refused for want of a place: the JSON-RPC equivalent of HTTP 503
/// with `Retry-After`, for a call already inside a stream.
pub fn busy_error(message: String) -> ErrorData {
    ErrorData::new(
        BUSY_CODE,
        message,
        Some(json!({ "class": "Busy", "retryAfterSeconds": RETRY_AFTER_SECS })),
    )
}

/// Name of the tool that lists every skill.
pub const LIST_SKILLS: &str = "list_skills";
/// Name of the tool that reads a skill's files.
pub const READ_SKILL: &str = "read_skill";

/// Biggest skill file `read_skill` and `resources/read` return.
pub const MAX_READ_BYTES: u64 = 1 << 20;
/// Most files listed as resources per skill, and in all.
const MAX_FILES_PER_SKILL: usize = 200;
const MAX_RESOURCES: usize = 5000;
/// Tools, resources and prompts per list response; a client with thousands
/// of skills gets them in pages, with the cursors MCP defines.
pub const PAGE_SIZE: usize = 500;

/// Serves one catalog over MCP. Cheap to clone (the runner and the tool
/// table are shared), as rmcp's HTTP transport wants one per session.
#[derive(Clone)]
pub struct SkillServer {
    runner: Runner,
    /// Places to run skill calls and their queue (`--http`'s backpressure).
    calls: Arc<CallGate>,
    /// The tool table and the catalog generation it was made from.
    tools: Arc<Mutex<(u64, Arc<ToolTable>)>>,
}

impl SkillServer {
    pub fn new(runner: Runner) -> Self {
        let generation = runner.catalog_cell().generation();
        let table = Arc::new(ToolTable::new(&runner.catalog()));
        SkillServer {
            runner,
            calls: Arc::new(CallGate::unlimited()),
            tools: Arc::new(Mutex::new((generation, table))),
        }
    }

    /// This server with skill calls admitted through `calls`.
    pub fn with_call_gate(mut self, calls: Arc<CallGate>) -> Self {
        self.calls = calls;
        self
    }

    pub fn call_gate(&self) -> &Arc<CallGate> {
        &self.calls
    }

    /// The catalog and its tool table, the table made again after the
    /// catalog was swapped (the forge added or changed a skill).
    fn snapshot(&self) -> (Arc<Catalog>, Arc<ToolTable>) {
        let cell = self.runner.catalog_cell();
        // Generation first: a swap in between only makes the next call
        // build the table again.
        let generation = cell.generation();
        let catalog = cell.get();
        let mut tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        if tools.0 != generation {
            *tools = (generation, Arc::new(ToolTable::new(&catalog)));
        }
        (catalog, tools.1.clone())
    }

    pub fn runner(&self) -> &Runner {
        &self.runner
    }

    /// Every tool: the two fixed ones, then one per runnable skill.
    pub fn tools(&self) -> Vec<Tool> {
        let mut out = vec![
            Tool::new(
                LIST_SKILLS,
                "List every skill this host knows: name, description, version, source, and whether it runs as a tool here.",
                object_schema(json!({ "type": "object", "properties": {} })),
            ),
            Tool::new(
                READ_SKILL,
                "Read a skill's instructions (its SKILL.md) or another file of its folder, by path relative to the skill folder.",
                object_schema(json!({
                    "type": "object",
                    "properties": {
                        "name": { "type": "string", "description": "Skill name, as list_skills gives it" },
                        "path": { "type": "string", "description": "File inside the skill folder; default SKILL.md" }
                    },
                    "required": ["name"]
                })),
            ),
        ];
        let (catalog, table) = self.snapshot();
        for (tool, skill) in table.iter() {
            let Some(skill) = catalog.get(skill) else {
                continue;
            };
            out.push(Tool::new(
                tool.to_owned(),
                tool_description(skill),
                names::input_schema(skill),
            ));
        }
        out
    }

    /// Runs a tool call to completion. Every failure, including a handler
    /// that traps or hits a limit, becomes an error *result*; only an
    /// unknown tool name is a protocol error, as the MCP spec asks.
    pub async fn call(
        &self,
        name: &str,
        args: Map<String, Value>,
    ) -> Result<CallToolResult, ErrorData> {
        match name {
            LIST_SKILLS => Ok(self.list_skills()),
            READ_SKILL => Ok(self.read_skill(&args)),
            _ => {
                let mut table = self.snapshot().1;
                if table.skill(name).is_none() {
                    // Perhaps a skill another host just shared.
                    self.runner.catch_up();
                    table = self.snapshot().1;
                }
                let skill = table.skill(name).ok_or_else(|| {
                    ErrorData::invalid_params(format!("unknown tool `{name}`"), None)
                })?;
                // Held until the run ends, recording included.
                let _place = self
                    .calls
                    .enter()
                    .await
                    .map_err(|b| busy_error(b.to_string()))?;
                Ok(self.run_skill_tool(skill, args).await)
            }
        }
    }

    /// The same path as `skillhost run --skill NAME`: selection, grants,
    /// limits, tool policy and recording all live in [`Runner::run_via`].
    async fn run_skill_tool(
        &self,
        skill_name: &str,
        mut args: Map<String, Value>,
    ) -> CallToolResult {
        let task = match args.remove("task") {
            Some(Value::String(t)) => t,
            Some(other) => {
                return failure_result(
                    FailureClass::InvalidArguments,
                    &format!("`task` must be a string, got {other}"),
                );
            }
            None => return failure_result(FailureClass::InvalidArguments, "`task` is required"),
        };
        let request = RunRequest {
            task,
            skill: Some(skill_name.to_owned()),
            context: args,
        };
        match self.runner.run_via(&request, Via::Mcp).await {
            Ok(outcome) => outcome_result(&outcome),
            Err(e) => failure_result(e.class(), &Chain(&e).to_string()),
        }
    }

    fn list_skills(&self) -> CallToolResult {
        let (catalog, table) = self.snapshot();
        // What a client's model reads: a skill the audit holds back is
        // not offered (see `Catalog::held_back`).
        let skills: Vec<Value> = catalog
            .offered()
            .map(|s| {
                json!({
                    "name": s.name,
                    "description": s.description,
                    "version": s.meta.version,
                    "content_version": s.version,
                    "source": s.source.to_string(),
                    "tool": table.tool(&s.name),
                    "runnable": names::runs_without_model(s),
                    "has_handler": s.meta.skillhost.handler.is_some(),
                    "model_invocable": s.model_invocable(),
                    "user_invocable": s.meta.user_invocable,
                    "resource": resources::uri(&s.name, &s.file_name()),
                })
            })
            .collect();
        CallToolResult::structured(json!({ "skills": skills }))
    }

    fn read_skill(&self, args: &Map<String, Value>) -> CallToolResult {
        let Some(name) = args.get("name").and_then(Value::as_str) else {
            return failure_result(
                FailureClass::InvalidArguments,
                "`name` (a string) is required",
            );
        };
        let catalog = self.runner.catalog();
        let Some(skill) = catalog.get(name).filter(|_| !catalog.held_back(name)) else {
            return failure_result(
                FailureClass::UnknownSkill,
                &format!("no skill named `{name}`"),
            );
        };
        let path = match args.get("path") {
            None | Some(Value::Null) => skill.file_name(),
            Some(Value::String(p)) => p.clone(),
            Some(other) => {
                return failure_result(
                    FailureClass::InvalidArguments,
                    &format!("`path` must be a string, got {other}"),
                );
            }
        };
        match skill.read_content(&path, MAX_READ_BYTES) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                Err(_) => failure_result(
                    FailureClass::BinaryFile,
                    &format!(
                        "`{path}` of skill `{name}` is not text; read it as the resource {}",
                        resources::uri(name, &path)
                    ),
                ),
            },
            Err(e) => failure_result(e.class(), &format!("skill `{name}`: {e}")),
        }
    }

    /// Every file of every skill, as `skill://NAME/PATH` resources.
    pub fn resources(&self) -> Vec<Resource> {
        let mut out = Vec::new();
        'skills: for skill in self.runner.catalog().offered() {
            let files = match skill.list_files(MAX_FILES_PER_SKILL) {
                Ok(f) => f,
                Err(e) => {
                    tracing::warn!("cannot list the files of skill `{}`: {e}", skill.name);
                    continue;
                }
            };
            let skill_md = skill.file_name();
            for path in files {
                if out.len() >= MAX_RESOURCES {
                    tracing::warn!(
                        "more than {MAX_RESOURCES} skill files; the rest are not listed as resources"
                    );
                    break 'skills;
                }
                let mut r = Resource::new(
                    resources::uri(&skill.name, &path),
                    format!("{}/{path}", skill.name),
                )
                .with_mime_type(resources::mime_type(&path));
                if path == skill_md {
                    r = r.with_description(marked_description(skill));
                }
                out.push(r);
            }
        }
        out
    }

    /// Reads a `skill://` resource through [`Skill::read_content`]: the
    /// skill's own content, size-capped. Errors name the resource, never
    /// where the skill lives on this machine.
    pub fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let (name, path) = resources::parse_uri(uri).ok_or_else(|| {
            ErrorData::invalid_params(
                format!("`{uri}` is not a skill resource (skill://NAME/PATH)"),
                None,
            )
        })?;
        let catalog = self.runner.catalog();
        let skill = catalog
            .get(&name)
            .filter(|_| !catalog.held_back(&name))
            .ok_or_else(|| {
                ErrorData::resource_not_found(format!("no skill named `{name}`"), None)
            })?;
        let bytes = skill.read_content(&path, MAX_READ_BYTES).map_err(|e| {
            let message = format!("resource {uri}: {e}");
            match e {
                SkillFileError::NotFound { .. } => ErrorData::resource_not_found(message, None),
                _ => ErrorData::invalid_params(message, None),
            }
        })?;
        let mime = resources::mime_type(&path);
        let contents = match String::from_utf8(bytes) {
            Ok(text) => ResourceContents::text(text, uri).with_mime_type(mime),
            Err(e) => {
                ResourceContents::blob(resources::base64(e.as_bytes()), uri).with_mime_type(mime)
            }
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    /// One prompt per user-invocable skill: its task plus its context fields.
    pub fn prompts(&self) -> Vec<Prompt> {
        let catalog = self.runner.catalog();
        catalog
            .offered()
            .filter(|s| s.meta.user_invocable)
            .map(|s| {
                let mut args = vec![
                    PromptArgument::new("task")
                        .with_description("What the skill should do, in words")
                        .with_required(true),
                ];
                for (name, field) in &s.meta.context_fields {
                    if name == "task" {
                        continue;
                    }
                    let mut a = PromptArgument::new(name.clone())
                        .with_required(field.required && field.default.is_none());
                    if let Some(d) = &field.description {
                        a = a.with_description(d.clone());
                    }
                    args.push(a);
                }
                Prompt::new(s.name.clone(), Some(marked_description(s)), Some(args))
            })
            .collect()
    }

    /// The user message that hands a skill's instructions and the task to
    /// the client's model.
    pub fn prompt(
        &self,
        name: &str,
        args: &Map<String, Value>,
    ) -> Result<GetPromptResult, ErrorData> {
        let (catalog, table) = self.snapshot();
        let skill = catalog
            .get(name)
            .filter(|s| s.meta.user_invocable && !catalog.held_back(name))
            .ok_or_else(|| ErrorData::invalid_params(format!("no prompt named `{name}`"), None))?;
        let task = match args.get("task") {
            Some(Value::String(t)) if !t.trim().is_empty() => t.clone(),
            _ => {
                return Err(ErrorData::invalid_params(
                    "argument `task` is required",
                    None,
                ));
            }
        };
        let mut text = format!(
            "Use the skill `{}` for this task.\n\nTask: {task}\n",
            skill.name
        );
        let context: Vec<String> = args
            .iter()
            .filter(|(k, _)| k.as_str() != "task")
            .map(|(k, v)| match v {
                Value::String(s) => format!("- {k}: {s}"),
                other => format!("- {k}: {other}"),
            })
            .collect();
        if !context.is_empty() {
            text.push_str("\nContext:\n");
            text.push_str(&context.join("\n"));
            text.push('\n');
        }
        if let Some(tool) = table.tool(&skill.name) {
            text.push_str(&format!(
                "\nThe tool `{tool}` runs this skill's own code; prefer it when it fits.\n"
            ));
        }
        text.push_str(&format!(
            "\nThe skill's instructions ({}):\n\n{}\n",
            resources::uri(&skill.name, &skill.file_name()),
            skill.body.trim()
        ));
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(marked_description(skill)),
        )
    }
}

impl ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("skillhost", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Agent skills. Call list_skills to see them and read_skill to read one's instructions; \
             skills with their own code are tools named skill_<name>. Every skill description \
             starts with [its source] as this host knows it: an installed skill is third-party \
             and not vetted; brackets in a skill's own text are shown as parentheses.",
        )
    }

    /// From now on, the client hears `notifications/tools/list_changed`
    /// whenever the catalog is swapped (the forge added or changed a
    /// skill), until it goes away.
    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        let mut changes = self.runner.catalog_cell().subscribe();
        let peer = context.peer;
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                if peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
        });
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // A skill another host forged is listed as soon as it is shared.
        self.runner.catch_up();
        let (tools, next) = page(self.tools(), request)?;
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Held until the run ends (see `held_place`).
        let _place = super::held_place(&context.extensions);
        let args = request.arguments.unwrap_or_default();
        let call = self.call(&request.name, args);
        // A client that sent a progress token hears when a first call
        // waits for its handler to compile.
        let Some(token) = context.meta.get_progress_token() else {
            return call.await.map(Into::into);
        };
        let peer = context.peer.clone();
        let runtime = tokio::runtime::Handle::current();
        let sink: ProgressSink = Arc::new(move |p| {
            let Progress::Compiling { skill, bytes, tier } = p;
            let param = ProgressNotificationParam::new(token.clone(), 0.0).with_message(format!(
                "compiling the handler of `{skill}` ({:.1} MB, {tier:?} code) for its first call",
                bytes as f64 / 1e6
            ));
            let peer = peer.clone();
            // The sink runs on the compiling thread: never block it.
            runtime.spawn(async move {
                let _ = peer.notify_progress(param).await;
            });
        });
        with_progress(sink, call).await.map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (resources, next) = page(self.resources(), request)?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read(&request.uri).map(Into::into)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (prompts, next) = page(self.prompts(), request)?;
        let mut result = ListPromptsResult::with_all_items(prompts);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        self.prompt(&request.name, &args).map(Into::into)
    }
}

/// The page of `items` that starts at the request's cursor (an offset this
/// server handed out), and the cursor of the next page when there is one.
pub fn page<T>(
    mut items: Vec<T>,
    request: Option<PaginatedRequestParams>,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match request.and_then(|r| r.cursor) {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&n| n <= items.len())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("invalid cursor `{cursor}`: list again from the start, without one"),
                    None,
                )
            })?,
    };
    let end = start.saturating_add(PAGE_SIZE).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items.drain(start..end).collect(), next))
}

/// A skill's tool description, marked with its source (see
/// [`marked_description`]); skills that ask not to be picked by a model on
/// their own say so, since an MCP client's model does the picking.
fn tool_description(skill: &Skill) -> String {
    let marked = marked_description(skill);
    if skill.model_invocable() {
        marked
    } else {
        format!("{marked} (Use only when the user asks for this skill by name.)")
    }
}

fn object_schema(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The tool result of a finished run: the output as text, or the failure
/// as `CLASS: message` with `{class, message}` as structured content.
pub fn outcome_result(outcome: &RunOutcome) -> CallToolResult {
    if let Some(f) = &outcome.failure {
        return failure_result(f.class.clone(), &f.message);
    }
    let mut content = vec![ContentBlock::text(
        outcome
            .output
            .as_ref()
            .map(|o| o.body.clone())
            .unwrap_or_default(),
    )];
    for n in &outcome.notices {
        content.push(ContentBlock::text(format!("note: {n}")));
    }
    CallToolResult::success(content)
}

/// An error tool result that names the failure's class, so the client (and
/// its model) can tell a limit from a bad input.
pub fn failure_result(class: FailureClass, message: &str) -> CallToolResult {
    let mut r = CallToolResult::structured_error(json!({ "class": class, "message": message }));
    r.content = vec![ContentBlock::text(format!("{class}: {message}"))];
    r
}
