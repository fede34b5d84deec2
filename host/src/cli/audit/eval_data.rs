//! The sets `eval audit` reads, audited: the malicious folder with its
//! categories, manifests of corpus paths, and roots of skill folders.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};

use crate::audit::{self, Finding, Severity};

/// The category of a malicious skill the categories file does not name.
pub(super) const UNCATEGORISED: &str = "uncategorised";

/// One audited skill.
#[derive(Serialize)]
pub(super) struct Sample {
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub category: String,
    pub findings: Vec<Finding>,
    /// The skill folder, or the SKILL.md file audited alone.
    #[serde(skip)]
    pub path: PathBuf,
}

impl Sample {
    /// The same skill with its high findings only.
    pub fn high_only(&self) -> Sample {
        Sample {
            name: self.name.clone(),
            category: self.category.clone(),
            path: self.path.clone(),
            findings: self
                .findings
                .iter()
                .filter(|f| f.severity == Severity::High)
                .cloned()
                .collect(),
        }
    }
}

/// The categories file: one `[[sample]]` a malicious skill.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Categories {
    #[serde(default)]
    sample: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// A file or folder name in the malicious folder.
    file: String,
    category: String,
    /// The public report the sample is reconstructed from.
    #[allow(dead_code)]
    #[serde(default)]
    source: String,
}

/// The `.md` files and folders of `dir`, by name, in name order.
fn skill_entries(dir: &Path) -> anyhow::Result<Vec<String>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir() || e.file_name().to_string_lossy().ends_with(".md"))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

/// Audits each skill of the malicious folder with its category: from the
/// categories file when there is one (every skill listed, every listed
/// file there), else all "uncategorised".
pub(super) fn audit_malicious(dir: &Path, categories: &Path) -> anyhow::Result<Vec<Sample>> {
    let names = skill_entries(dir)?;
    let listed: Vec<(String, String)> = if categories.is_file() {
        read_categories(categories, dir, &names)?
    } else {
        let uncategorised = |n: &String| (n.clone(), UNCATEGORISED.to_owned());
        names.iter().map(uncategorised).collect()
    };
    let mut out = Vec::with_capacity(listed.len());
    for (name, category) in listed {
        let path = dir.join(&name);
        let findings = audit_sample(&path, &name)?;
        out.push(Sample {
            name,
            category,
            findings,
            path,
        });
    }
    Ok(out)
}

/// The (file, category) pairs of a categories file, checked against the
/// skills of `dir`: a listed file missing, or a skill left unlisted, is an
/// error naming it.
fn read_categories(
    path: &Path,
    dir: &Path,
    names: &[String],
) -> anyhow::Result<Vec<(String, String)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let parsed: Categories =
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
    let mut seen = BTreeSet::new();
    for e in &parsed.sample {
        let plain = !e.file.is_empty() && !e.file.contains(['/', '\\']) && e.file != "..";
        if !plain || !dir.join(&e.file).exists() {
            bail!(
                "{} lists {:?}, which is not a skill in {}",
                path.display(),
                e.file,
                dir.display()
            );
        }
        if !seen.insert(e.file.as_str()) {
            bail!("{} lists {:?} twice", path.display(), e.file);
        }
    }
    if let Some(missing) = names.iter().find(|n| !seen.contains(n.as_str())) {
        bail!(
            "{} is in {} but not in {}: give it a category there",
            missing,
            dir.display(),
            path.display()
        );
    }
    Ok(parsed
        .sample
        .into_iter()
        .map(|e| (e.file, e.category))
        .collect())
}

/// The findings of one malicious sample: a skill folder, or a SKILL.md
/// text saved as `name.md`.
fn audit_sample(path: &Path, name: &str) -> anyhow::Result<Vec<Finding>> {
    if path.is_dir() {
        return Ok(audit::audit_folder(path)?.findings);
    }
    if !name.ends_with(".md") {
        bail!(
            "{} is neither a skill folder nor a .md file",
            path.display()
        );
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(audit::audit_text(name, &text))
}

/// Audits each skill folder and `.md` file of `dir` (none when `dir` is
/// absent), in name order.
pub(super) fn audit_entries(dir: &Path) -> anyhow::Result<Vec<Sample>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for name in skill_entries(dir)? {
        let path = dir.join(&name);
        out.push(Sample {
            findings: audit_sample(&path, &name)?,
            name,
            category: String::new(),
            path,
        });
    }
    Ok(out)
}

/// A manifest's entries: one a line, `#` starts a comment.
fn manifest_entries(list: &str) -> impl Iterator<Item = &str> {
    list.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
}

/// Audits every file a manifest lists (one path relative to `corpus` a
/// line; `#` starts a comment).
pub(super) fn audit_listed(manifest: &Path, corpus: &Path) -> anyhow::Result<Vec<Sample>> {
    let list = std::fs::read_to_string(manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    let mut out = Vec::new();
    for rel in manifest_entries(&list) {
        let path = corpus.join(rel);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!("{} lists {rel}, which is not readable", manifest.display())
        })?;
        out.push(Sample {
            name: rel.to_owned(),
            category: String::new(),
            findings: audit::audit_text(rel, &text),
            path,
        });
    }
    Ok(out)
}

/// `samples` split into those `manifest` lists by name (one a line, `#`
/// comments) and the rest; every listed name must be a sample. No
/// manifest: nothing listed.
pub(super) fn split_listed(
    samples: Vec<Sample>,
    manifest: &Path,
) -> anyhow::Result<(Vec<Sample>, Vec<Sample>)> {
    if !manifest.is_file() {
        return Ok((Vec::new(), samples));
    }
    let list = std::fs::read_to_string(manifest)
        .with_context(|| format!("cannot read {}", manifest.display()))?;
    let names: Vec<&str> = manifest_entries(&list).collect();
    if let Some(missing) = names
        .iter()
        .find(|n| !samples.iter().any(|s| s.name == **n))
    {
        anyhow::bail!(
            "{} lists {missing}, which is not a skill of the set",
            manifest.display()
        );
    }
    Ok(samples
        .into_iter()
        .partition(|s| names.contains(&s.name.as_str())))
}

/// Audits each skill folder below `root` as `skills audit ROOT` does
/// (`audit::audit_root`); none when `root` is absent. Names are relative
/// to root's parent, e.g. `benign-extra/owner-repo/skill`.
pub(super) fn audit_tree(root: &Path) -> anyhow::Result<Vec<Sample>> {
    if !root.is_dir() {
        return Ok(Vec::new());
    }
    let base = root.parent().map_or_else(PathBuf::new, Path::to_path_buf);
    let reports = audit::audit_root(root, &audit::Limits::default())?;
    Ok(reports
        .into_iter()
        .map(|(dir, report)| Sample {
            name: dir
                .strip_prefix(&base)
                .unwrap_or(&dir)
                .display()
                .to_string(),
            category: String::new(),
            findings: report.findings,
            path: dir,
        })
        .collect())
}
