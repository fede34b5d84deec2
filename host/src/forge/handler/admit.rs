//! Admitting a gated artifact: the handler placed in the skill's folder and
//! its SKILL.md pointed at it, the previous version saved first.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use super::HANDLER_FILE;
use crate::forge::history::{self, Event, EventKind};
use crate::forge::writer::{self, Expect, Invalid, SkillWriter};
use crate::forge::{ForgeError, check_slug};
use crate::skill::{ParsedSkill, Skill, content_version, parse_skill};

/// The skill's SKILL.md (`current`) pointing at `handler`, marked as
/// generated (`metadata.skillhost.handler_generated`), which makes `exec`
/// run it only as approved whatever the skill's source.
pub fn with_generated_handler(
    current: &[u8],
    name: &str,
    handler: &str,
) -> Result<String, Invalid> {
    let parsed = parse_skill(current, name).map_err(|e| Invalid::Parse(e.to_string()))?;
    let mut front = parsed.meta.raw.as_object().cloned().unwrap_or_default();
    let metadata = front.entry("metadata").or_insert_with(|| json!({}));
    if !metadata.is_object() {
        *metadata = json!({});
    }
    if let Some(m) = metadata.as_object_mut() {
        let sh = m.entry("skillhost").or_insert_with(|| json!({}));
        if !sh.is_object() {
            *sh = json!({});
        }
        if let Some(sh) = sh.as_object_mut() {
            sh.insert("handler".into(), json!(handler));
            sh.insert("handler_generated".into(), json!(true));
        }
    }
    Ok(crate::forge::create::compose(&front, &parsed.body))
}

/// What admitting a handler did.
#[derive(Debug, Clone, Serialize)]
pub struct Admitted {
    /// The artifact in the skill folder.
    pub handler: PathBuf,
    /// The SKILL.md as it was, saved as this version (`skills rollback`).
    pub saved_version: u32,
}

/// Puts `wasm` into the skill's folder as `handler.wasm` and points its
/// SKILL.md at it through the forge's writer, saving the previous
/// SKILL.md in its history first. Only skills the forge may edit (forged,
/// user, workspace); bundled skills are never modified. An existing
/// `handler.wasm` is not overwritten.
pub fn admit(
    writer: &SkillWriter,
    skill: &Skill,
    wasm: &[u8],
    reason: &str,
) -> Result<Admitted, ForgeError> {
    history::editable(skill)?;
    check_slug(&skill.name)?;
    let lock = writer.lock()?;
    let (current, old) = read_without_handler(skill)?;
    let text = with_generated_handler(&current, &skill.name, HANDLER_FILE)?;
    let expect = Expect {
        handler: Some(HANDLER_FILE),
        ..Expect::replacing(&old)
    };
    writer::validate(text.as_bytes(), &expect)?;
    let target = place_handler(&skill.dir, wasm)?;
    let forge_dir = writer.forge_dir();
    let written = history::save(&lock, &forge_dir, &skill.name, &current).and_then(|v| {
        writer
            .replace(&lock, &skill.path, &current, &text, &expect)
            .map(|()| v)
    });
    // Not admitted: the handler placed goes.
    let saved_version = written.inspect_err(|_| {
        let _ = fs::remove_file(&target);
    })?;
    let event = Event {
        previous: Some(content_version(&current)),
        version: Some(saved_version),
        ..Event::new(EventKind::HandlerAdded, reason)
    };
    history::append(&lock, &forge_dir, &skill.name, &event)?;
    Ok(Admitted {
        handler: target,
        saved_version,
    })
}

/// The skill's SKILL.md as it is, and parsed; refused when it already
/// names a handler.
fn read_without_handler(skill: &Skill) -> Result<(Vec<u8>, ParsedSkill), ForgeError> {
    let current = fs::read(&skill.path).map_err(ForgeError::io("read", &skill.path))?;
    let old = parse_skill(&current, &skill.name)
        .map_err(|e| Invalid::Parse(format!("the current file: {e}")))?;
    if let Some(h) = &old.meta.skillhost.handler {
        return Err(ForgeError::Invalid(Invalid::Parse(format!(
            "it already has a handler ({h})"
        ))));
    }
    Ok((current, old))
}

/// `wasm` as `dir/handler.wasm`: written beside its final name, then
/// renamed without replacing (an existing one is an error).
fn place_handler(dir: &Path, wasm: &[u8]) -> Result<PathBuf, ForgeError> {
    let target = dir.join(HANDLER_FILE);
    let tmp = dir.join(format!(".{HANDLER_FILE}.forge-{}", std::process::id()));
    fs::write(&tmp, wasm).map_err(ForgeError::io("write", &tmp))?;
    let placed = fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .and_then(|()| crate::fsutil::rename_noreplace(&tmp, &target));
    if let Err(e) = placed {
        let _ = fs::remove_file(&tmp);
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            return Err(ForgeError::Exists(target));
        }
        return Err(ForgeError::io("write", &target)(e));
    }
    Ok(target)
}

/// Notes in the skill's history that a handler was written and refused.
pub fn note_rejected(writer: &SkillWriter, skill: &str, reason: &str) -> Result<(), ForgeError> {
    let lock = writer.lock()?;
    history::append(
        &lock,
        &writer.forge_dir(),
        skill,
        &Event::new(EventKind::HandlerRejected, reason),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_handler_is_marked_in_the_front_matter() {
        let md = b"---\nname: shout\ndescription: Shouts.\nmetadata:\n  author: me\n---\n\nSay it loud.\n";
        let text = with_generated_handler(md, "shout", HANDLER_FILE).expect("composed");
        let parsed = parse_skill(text.as_bytes(), "shout").expect("parses");
        assert_eq!(parsed.meta.skillhost.handler.as_deref(), Some(HANDLER_FILE));
        assert!(parsed.meta.skillhost.handler_generated);
        assert_eq!(parsed.meta.raw["metadata"]["author"], "me");
        assert_eq!(parsed.body.trim(), "Say it loud.");
    }
}
