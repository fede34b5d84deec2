//! Reading and parsing one root's skills. Parsing is most of the work, so
//! it runs on worker threads while the walk is still listing folders;
//! results come back in walk order so that which duplicate wins is stable.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, channel};

use cap_std::fs::Dir;

use super::catalog::{LoadOptions, Root, SkillAudit, Warning, content_version};
use super::discover::{self, Candidate};
use super::model::{Skill, Source};
use super::parse::parse_skill;
use crate::audit::{self, Finding, FindingsCache};

/// Skill files handed to a worker at a time. A root with fewer than this
/// is loaded on the calling thread alone.
const BATCH: usize = 64;
/// Most worker threads, whatever the core count.
const MAX_WORKERS: usize = 8;

/// A skill, with what the text audit found in it when it was audited.
pub(crate) type Loaded = Result<(Skill, Option<SkillAudit>), Warning>;

/// Every skill file under `root`, read and parsed, in walk order. A file
/// that cannot be read or parsed is the warning that says why.
pub(crate) fn load_root(
    root: &Root,
    opts: &LoadOptions,
    cache: Option<&FindingsCache>,
    warnings: &mut Vec<Warning>,
) -> Vec<Loaded> {
    let Some(base) = discover::open_root(root, warnings) else {
        return Vec::new();
    };
    let base = &base;
    let source = root.source;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS);

    let (tx, rx) = channel::<(usize, Vec<Candidate>)>();
    let rx = Mutex::new(rx);
    let rx = &rx;
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut parts: Vec<(usize, Vec<Loaded>)> = Vec::new();
        let mut batch = Vec::with_capacity(BATCH);
        let mut batches = 0;
        discover::walk(base, root, opts, warnings, |c| {
            batch.push(c);
            if batch.len() < BATCH {
                return;
            }
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if workers > 1 && handles.is_empty() {
                for _ in 0..workers {
                    handles.push(scope.spawn(move || work(rx, base, source, opts, cache)));
                }
            }
            if handles.is_empty() {
                parts.push((batches, load_batch(&full, base, source, opts, cache)));
            } else if let Err(unsent) = tx.send((batches, full)) {
                // Every worker has gone (which only a panic can do): load
                // here rather than lose the batch.
                let (n, full) = unsent.0;
                parts.push((n, load_batch(&full, base, source, opts, cache)));
            }
            batches += 1;
        });
        drop(tx);
        parts.push((batches, load_batch(&batch, base, source, opts, cache)));
        for h in handles {
            match h.join() {
                Ok(done) => parts.extend(done),
                // The parser does not panic (see the property tests); if it
                // ever did, the load fails loudly rather than half-empty.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        parts.sort_unstable_by_key(|p| p.0);
        parts.into_iter().flat_map(|p| p.1).collect()
    })
}

/// A worker: loads batches until the walk is over.
fn work(
    rx: &Mutex<Receiver<(usize, Vec<Candidate>)>>,
    base: &Dir,
    source: Source,
    opts: &LoadOptions,
    cache: Option<&FindingsCache>,
) -> Vec<(usize, Vec<Loaded>)> {
    let mut done = Vec::new();
    loop {
        let next = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => break,
        };
        let Ok((n, batch)) = next else { break };
        done.push((n, load_batch(&batch, base, source, opts, cache)));
    }
    done
}

fn load_batch(
    batch: &[Candidate],
    base: &Dir,
    source: Source,
    opts: &LoadOptions,
    cache: Option<&FindingsCache>,
) -> Vec<Loaded> {
    batch
        .iter()
        .map(|c| load_one(base, c, source, opts, cache))
        .collect()
}

/// Reads and parses one SKILL.md.
fn load_one(
    base: &Dir,
    c: &Candidate,
    source: Source,
    opts: &LoadOptions,
    cache: Option<&FindingsCache>,
) -> Loaded {
    let bytes = discover::read(base, c, opts.max_file_bytes)
        .map_err(|m| Warning::new(&c.path, format!("skipped: {m}")))?;
    let parsed = parse_skill(&bytes, &c.folder_name)
        .map_err(|e| Warning::new(&c.path, format!("skipped: {e}")))?;
    let version = content_version(&bytes);
    let findings =
        (opts.audit && source.is_audited()).then(|| audit_skill(c, &bytes, &version, cache));
    let skill = Skill {
        name: parsed.name,
        description: parsed.description,
        body: parsed.body,
        dir: c.dir.clone(),
        path: c.path.clone(),
        version,
        source,
        warnings: parsed.warnings,
        meta: parsed.meta,
    };
    Ok((skill, findings))
}

/// The text audit of one skill at load, on the worker that parsed it: the
/// SKILL.md bytes in hand (whose content version is `version`), then the
/// folder's other files when it has any. A SKILL.md alone is looked up in
/// `cache` first: the same text gives the same findings. A folder with
/// other files is audited on every load (its files are not read to load
/// the skill, so there is nothing in hand to key them by). The pin of the
/// audited text (what `[audit] allow` names) is worked out for a flagged
/// skill only: nothing else can be allowed.
fn audit_skill(
    c: &Candidate,
    bytes: &[u8],
    version: &str,
    cache: Option<&FindingsCache>,
) -> SkillAudit {
    let name = c
        .path
        .file_name()
        .map_or_else(|| "SKILL.md".into(), |n| n.to_string_lossy());
    let text = String::from_utf8_lossy(bytes);
    let alone = |findings: Vec<Finding>| {
        let pin = audit::has_high(&findings).then(|| audit::text_pin(&name, &text));
        SkillAudit::new(findings, pin)
    };
    if !c.others {
        let audit = || audit::audit_text(&name, &text);
        return alone(match cache {
            Some(cache) => cache.get_or_audit(audit::cache_key(&name, version), audit),
            None => audit(),
        });
    }
    match audit::audit_folder_given(&c.dir, Some((&name, &text)), &audit::Limits::default()) {
        Ok(report) => SkillAudit::new(report.findings, Some(report.pin)),
        // The folder went away or cannot be listed: SKILL.md is still
        // what the catalog uses, so its audit stands.
        Err(e) => {
            tracing::debug!("audit: {e}");
            alone(audit::audit_text(&name, &text))
        }
    }
}
