//! A draft written under the forged root: skipped when it is a
//! near-duplicate, the least recently used forged skill evicted past the
//! cap.

use super::similarity::{similarity, tool_sequence};
use super::{CreateOutcome, Draft, render};
use crate::forge::history::{self, Event, EventKind};
use crate::forge::writer::{Expect, ForgeLock, SKILL_FILE, SkillWriter};
use crate::forge::{CreateConfig, ForgeError, check_slug, now_secs};
use crate::skill::{Capabilities, Catalog, LimitSpec, ParsedSkill, parse_skill};

/// What the forge needs to know of the skills around a draft.
pub struct Neighbours<'a> {
    pub catalog: &'a Catalog,
    /// When a forged skill was last used (seconds since the Unix epoch):
    /// its latest recorded run.
    pub last_used: &'a dyn Fn(&str) -> Option<i64>,
}

/// Writes `draft` under the forged root, unless it is a near-duplicate of
/// a skill of the catalog or of the forged root (read from disk, so that a
/// skill another process just forged counts). Past `max_skills` the least
/// recently used forged skill is evicted first. `bound`: what the run's
/// skill had in effect, and its `allowed-tools`.
pub fn write(
    writer: &SkillWriter,
    draft: &Draft,
    bound: (&Capabilities, Option<&[String]>),
    config: &CreateConfig,
    around: &Neighbours<'_>,
) -> Result<CreateOutcome, ForgeError> {
    check_slug(&draft.name)?;
    let lock = writer.lock()?;
    let on_disk = forged_on_disk(writer);
    if let Some((of, s)) = most_similar(draft, around.catalog, &on_disk)
        && s > config.similarity
    {
        tracing::info!(
            skill = %draft.name,
            similar_to = %of,
            similarity = s,
            "forge: near-duplicate skipped"
        );
        return Ok(CreateOutcome::NearDuplicate { of, similarity: s });
    }
    let taken = |n: &str| around.catalog.get(n).is_some() || on_disk.iter().any(|(s, _)| s == n);
    let name = unique_name(&draft.name, taken);
    let present: Vec<String> = on_disk.iter().map(|(s, _)| s.clone()).collect();
    let evicted = evict_past_cap(writer, &lock, present, config.max_skills, around.last_used)?;
    let draft = renamed(draft, &name);
    let path = create(writer, &lock, &draft, bound)?;
    tracing::info!(skill = %name, path = %path.display(), "forge: new skill");
    Ok(CreateOutcome::Written {
        name,
        path,
        evicted,
    })
}

/// The skill of the catalog or the forged root most similar to `draft`,
/// with its similarity.
fn most_similar(
    draft: &Draft,
    catalog: &Catalog,
    on_disk: &[(String, ParsedSkill)],
) -> Option<(String, f64)> {
    let mut best: Option<(String, f64)> = None;
    let mut consider = |name: &str, desc: &str, tools: &[String]| {
        let s = similarity(&draft.description, &draft.uses, desc, tools);
        if best.as_ref().is_none_or(|(_, b)| s > *b) {
            best = Some((name.to_owned(), s));
        }
    };
    for s in catalog.skills() {
        consider(&s.name, &s.description, &tool_sequence(&s.meta));
    }
    for (slug, parsed) in on_disk {
        consider(slug, &parsed.description, &tool_sequence(&parsed.meta));
    }
    best
}

/// Evicts the least recently used of the `present` forged skills until
/// one more fits under `max_skills`; returns the evicted.
fn evict_past_cap(
    writer: &SkillWriter,
    lock: &ForgeLock,
    mut present: Vec<String>,
    max_skills: usize,
    last_used: &dyn Fn(&str) -> Option<i64>,
) -> Result<Vec<String>, ForgeError> {
    let mut evicted = Vec::new();
    while !present.is_empty() && present.len() >= max_skills {
        let Some(victim) = least_recently_used(writer, &present, last_used) else {
            break;
        };
        writer.remove(lock, &victim)?;
        tracing::warn!(
            skill = %victim,
            max_skills,
            "forge: evicted the least recently used forged skill"
        );
        let _ = history::append(
            lock,
            &writer.forge_dir(),
            &victim,
            &Event::new(
                EventKind::Evicted,
                format!("least recently used past max_skills = {max_skills}"),
            ),
        );
        present.retain(|p| *p != victim);
        evicted.push(victim);
    }
    Ok(evicted)
}

/// `draft` under `name`, its title line renamed too.
fn renamed(draft: &Draft, name: &str) -> Draft {
    Draft {
        name: name.to_owned(),
        instructions: draft.instructions.replacen(
            &format!("# {}\n", draft.name),
            &format!("# {name}\n"),
            1,
        ),
        ..draft.clone()
    }
}

/// Writes the rendered draft, bounded by what the run's skill had, and
/// records its creation in the history.
fn create(
    writer: &SkillWriter,
    lock: &ForgeLock,
    draft: &Draft,
    bound: (&Capabilities, Option<&[String]>),
) -> Result<std::path::PathBuf, ForgeError> {
    let text = render(draft, now_secs());
    let expect = Expect {
        name: &draft.name,
        capabilities: bound.0,
        allowed_tools: bound.1,
        handler: None,
        limits: LimitSpec::default(),
        bounded: true,
    };
    let path = writer.create(lock, &draft.name, &text, &expect)?;
    let _ = history::append(
        lock,
        &writer.forge_dir(),
        &draft.name,
        &Event::new(
            EventKind::Created,
            format!("from run(s) {:?} of skill `{}`", draft.runs, draft.origin),
        ),
    );
    Ok(path)
}

/// `base`, or `base-2`, `base-3`, ... when taken.
fn unique_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_owned();
    }
    let stem: String = base.chars().take(60).collect();
    (2..)
        .map(|n| format!("{stem}-{n}"))
        .find(|n| !taken(n))
        .unwrap_or_else(|| base.to_owned())
}

/// The forged skills on disk, parsed.
fn forged_on_disk(writer: &SkillWriter) -> Vec<(String, ParsedSkill)> {
    writer
        .forged_slugs()
        .into_iter()
        .filter_map(|slug| {
            let bytes = std::fs::read(writer.forged_root().join(&slug).join(SKILL_FILE)).ok()?;
            let parsed = parse_skill(&bytes, &slug).ok()?;
            Some((slug, parsed))
        })
        .collect()
}

/// The forged skill used longest ago: its latest run, else when its file
/// was written.
fn least_recently_used(
    writer: &SkillWriter,
    slugs: &[String],
    last_used: &dyn Fn(&str) -> Option<i64>,
) -> Option<String> {
    slugs
        .iter()
        .map(|s| {
            let written = std::fs::metadata(writer.forged_root().join(s).join(SKILL_FILE))
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as i64);
            (last_used(s).unwrap_or(written).max(written), s)
        })
        .min()
        .map(|(_, s)| s.clone())
}
