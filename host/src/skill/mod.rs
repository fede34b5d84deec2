//! Skills: lenient parsing of every SKILL.md dialect, discovery over layered
//! roots, the catalog, retrieval and prompt rendering.

mod catalog;
mod discover;
mod files;
mod load;
mod meta;
mod model;
mod parse;
mod prompt;
mod repair;
mod search;
mod skeleton;
mod tree;
mod usage;
mod validate;
mod yaml;

pub use catalog::{
    Catalog, CatalogConfig, LoadOptions, LoadStats, Root, Shadowed, SkillAudit, Warning,
    content_version,
};
pub(crate) use discover::SKILL_FILES;
pub use files::{FileIdentity, SkillFileError};
pub use model::*;
pub(crate) use parse::is_spec_name;
pub use parse::{ParseError, ParsedSkill, parse_skill};
pub use prompt::{
    marked_description, neutralise_marker, render_available_skills, source_label, xml_escape,
};
pub use search::{Match, SearchOptions};
pub use skeleton::{same_skeleton, skeleton};
pub use tree::{
    HOST_REPORT_FILE, MAX_TREE_BYTES, MAX_TREE_ENTRIES, Reach, Scan, TreeDigest, TreeError, pin_of,
};
pub use usage::{NoUsage, Usage, UsageSource};
pub use validate::{Problem, SPEC_KEYS, Severity, validate_strict};
