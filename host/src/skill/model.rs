//! What a loaded skill is: the parsed front matter, the body, where it came
//! from and the warnings its loading produced.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which root a skill was discovered in. Later roots override earlier ones,
/// and the source decides the default trust (see `sandbox::grants`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Shipped inside the `skillhost` binary.
    Bundled,
    /// `~/.skillhost/skills`: installed by the user, untrusted by default.
    User,
    /// `./.skillhost/skills` or `./.agents/skills` of the current workspace.
    Workspace,
    /// A `--skills DIR` given on the command line.
    Path,
    /// `./.skillhost/skills/forged`: written by the forge from this
    /// workspace's runs (see the forge module).
    Forged,
    /// `$SKILLHOST_HOME/installed`: where installing a skill puts it;
    /// untrusted by default, like user skills.
    Installed,
}

impl Source {
    /// Whether the skill was written somewhere else and brought in by
    /// `skills install`: only `installed`. Every other source is a folder
    /// a person on this machine keeps (user, workspace, `--skills`) or
    /// skillhost's own (bundled, forged). This is not grant trust (see
    /// `grants::effective`): it decides names and retrieval. An installed
    /// skill never takes the name of another source's skill, nor a
    /// look-alike of it (see `Catalog::load`), and ranks below every
    /// other source's match in a search unless the operator promotes it
    /// (see `search`), because its name and triggers are its author's
    /// choice.
    pub fn is_foreign(self) -> bool {
        matches!(self, Source::Installed)
    }

    /// Whether the catalog audits a skill of this source's text at load
    /// (see `audit`): every source but bundled. Bundled skills ship inside
    /// the binary, written and tested with it; everything else is text
    /// that came from somewhere (a registry, a repository, a model's
    /// output for forged skills) and reaches the model.
    pub fn is_audited(self) -> bool {
        !matches!(self, Source::Bundled)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Bundled => "bundled",
            Source::User => "user",
            Source::Workspace => "workspace",
            Source::Path => "path",
            Source::Forged => "forged",
            Source::Installed => "installed",
        })
    }
}

/// One skill of the catalog.
#[derive(Debug, Clone, Serialize)]
pub struct Skill {
    /// `name` from the front matter, else the folder name.
    pub name: String,
    pub description: String,
    /// The markdown after the front matter.
    #[serde(skip)]
    pub body: String,
    /// The skill's folder (absolute).
    pub dir: PathBuf,
    /// The `SKILL.md` file itself (absolute).
    pub path: PathBuf,
    /// Content version: `sha256:` + hex of the file's bytes.
    pub version: String,
    pub source: Source,
    /// Non-fatal problems found while loading (spec deviations, ignored keys).
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub meta: SkillMeta,
}

/// The front matter keys skillhost acts on. Everything else stays in `raw`.
#[derive(Debug, Clone)]
pub struct SkillMeta {
    /// `version` as written (numbers become strings: `1.0` -> "1.0").
    pub version: Option<String>,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub tags: Vec<String>,
    /// `roles` (or `agent_roles`): the agent roles a skill serves.
    pub roles: Vec<String>,
    /// `stages` (or `pipeline_stages`): the stages of a workflow it serves.
    pub stages: Vec<String>,
    /// `allowed-tools` as a list; `None` when the key is absent (no restriction).
    pub allowed_tools: Option<Vec<String>>,
    pub disable_model_invocation: bool,
    pub user_invocable: bool,
    /// `metadata.triggers`: keywords, phrases or `/regex/` patterns.
    pub triggers: Vec<String>,
    /// `metadata.context_fields`: the context a handler or template reads.
    pub context_fields: BTreeMap<String, ContextField>,
    /// `metadata.output_type`.
    pub output_type: Option<String>,
    /// `metadata.skillhost`: our own settings.
    pub skillhost: SkillhostMeta,
    /// The whole front matter as JSON (an object), unknown keys included.
    pub raw: Value,
}

impl Default for SkillMeta {
    /// What a SKILL.md without any of these keys means: invocable by both the
    /// user and the model, no restriction, no capabilities.
    fn default() -> Self {
        SkillMeta {
            version: None,
            license: None,
            compatibility: None,
            tags: Vec::new(),
            roles: Vec::new(),
            stages: Vec::new(),
            allowed_tools: None,
            disable_model_invocation: false,
            user_invocable: true,
            triggers: Vec::new(),
            context_fields: BTreeMap::new(),
            output_type: None,
            skillhost: SkillhostMeta::default(),
            raw: Value::Object(serde_json::Map::new()),
        }
    }
}

impl Skill {
    /// Whether the model may pick this skill on its own (listed in the prompt).
    pub fn model_invocable(&self) -> bool {
        !self.meta.disable_model_invocation
    }

    /// Whether `tag` names one of its tags, roles or stages (EurekaClaw's
    /// tag strategy), ignoring case and surrounding space.
    pub fn has_tag(&self, tag: &str) -> bool {
        let tag = tag.trim();
        let m = &self.meta;
        m.tags
            .iter()
            .chain(&m.roles)
            .chain(&m.stages)
            .any(|t| same_words(t.trim(), tag))
    }

    /// The SKILL.md's file name as found (`SKILL.md`, `skill.md` or `Skill.md`).
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "SKILL.md".to_owned())
    }
}

fn same_words(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        a.eq_ignore_ascii_case(b)
    } else {
        a.to_lowercase() == b.to_lowercase()
    }
}

/// A declared context field: `{ type: bool, default: false, description: ... }`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextField {
    #[serde(rename = "type", default)]
    pub kind: FieldKind,
    #[serde(default)]
    pub default: Option<Value>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub required: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldKind {
    #[default]
    #[serde(alias = "str", alias = "text")]
    String,
    #[serde(alias = "boolean")]
    Bool,
    #[serde(alias = "float")]
    Number,
    #[serde(alias = "int")]
    Integer,
    #[serde(alias = "array")]
    List,
    #[serde(alias = "map", alias = "dict")]
    Object,
}

impl FieldKind {
    /// The JSON Schema type name, for tool schemas and type errors.
    pub fn json_type(self) -> &'static str {
        match self {
            FieldKind::String => "string",
            FieldKind::Bool => "boolean",
            FieldKind::Number => "number",
            FieldKind::Integer => "integer",
            FieldKind::List => "array",
            FieldKind::Object => "object",
        }
    }
}

/// `metadata.skillhost`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillhostMeta {
    /// Path of the handler component, relative to the skill folder.
    pub handler: Option<String>,
    /// What the skill asks for; what it gets is this ∩ the operator's grants.
    pub capabilities: Capabilities,
    /// Per-skill overrides of the sandbox limits.
    pub limits: LimitSpec,
    /// Tier 3: the answer when neither handler nor model can give one.
    /// `{{task}}` and `{{context.FIELD}}` are substituted.
    pub template: Option<String>,
    /// A tool pipeline used as the handler (see the tools module).
    pub pipeline: Option<Value>,
    /// Checks on every answer, whichever tier gave it: each is
    /// `{class, message, when: [conditions]}` (see `learn::condition`); an
    /// answer matching all conditions of one is that class of failure.
    pub validators: Vec<Value>,
    /// `forged` for a skill the forge wrote.
    pub source: Option<String>,
    /// When the forge wrote it (RFC 3339, UTC).
    pub created_at: Option<String>,
    /// The recorded runs a forged skill was made from.
    pub runs: Vec<i64>,
    /// The tools a forged skill uses, in order (near-duplicate checks).
    pub uses: Vec<String>,
    /// In-place improvements, oldest first: `{updated_at, reason, previous}`.
    pub history: Vec<Value>,
    /// The handler was written by a model (`forge handler`): it runs only
    /// as approved by the gate, whatever the skill's source.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub handler_generated: bool,
}

/// Capabilities a skill declares (and, with the same shape, what an operator grants).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Capabilities {
    pub files: FileCapabilities,
    /// Host names (exact, or `*.example.com`) outbound HTTP may reach.
    pub http: Vec<String>,
    /// Host tools the handler may call by name.
    pub tools: Vec<String>,
    /// Whether the handler may ask the configured model for completions.
    pub llm: bool,
    /// Whether the handler may use its per-skill key-value store.
    pub kv: bool,
}

/// Directories, relative to the skill folder, or `workspace:PATH` for the
/// workspace. Write implies read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileCapabilities {
    pub read: Vec<String>,
    pub write: Vec<String>,
}

/// Per-skill limit overrides; `None` keeps the host default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitSpec {
    pub memory_mb: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub output_kb: Option<u64>,
    pub tables: Option<u32>,
    pub table_elements: Option<u32>,
    pub instances: Option<u32>,
}

impl LimitSpec {
    /// No override at all.
    pub fn is_empty(&self) -> bool {
        *self == LimitSpec::default()
    }
}
