//! The catalog: every skill of every root, later roots overriding earlier
//! ones by name, with the warnings loading produced.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::load;
use super::model::{Skill, Source};
use super::search::{Match, SearchIndex};

/// A folder skills are discovered in, and what kind of root it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Absolute (made so by `Root::new`), so skill paths are too.
    pub dir: PathBuf,
    pub source: Source,
    /// Folders below `dir` that are roots of their own (not searched here).
    pub skip: Vec<PathBuf>,
}

impl Root {
    pub fn new(dir: PathBuf, source: Source) -> Self {
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Root {
            dir,
            source,
            skip: Vec::new(),
        }
    }

    /// The same root, not searching `sub` (a root of its own).
    pub fn skipping(mut self, sub: PathBuf) -> Self {
        self.skip.push(std::path::absolute(&sub).unwrap_or(sub));
        self
    }
}

/// Bounds on what loading one root may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// How many folder levels below a root are searched.
    pub max_depth: usize,
    /// Largest SKILL.md read; bigger ones are skipped with a warning.
    pub max_file_bytes: u64,
    /// Most SKILL.md files read per root (folders visited are capped at 8x).
    pub max_files: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_depth: 8,
            max_file_bytes: 1 << 20,
            max_files: 20_000,
        }
    }
}

/// Something loading wants a human to know: a skipped skill, a spec
/// deviation, a cap that was hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub path: PathBuf,
    pub message: String,
}

impl Warning {
    pub fn new(path: impl AsRef<Path>, message: impl Into<String>) -> Self {
        Warning {
            path: path.as_ref().to_path_buf(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// Counts from one load, for summaries and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    /// SKILL.md files found (within the caps).
    pub files: usize,
    /// Files that became a skill.
    pub parsed: usize,
    /// Files that could not be read or were refused by the parser.
    pub dropped: usize,
    /// Skills ignored because an earlier one in the same root had the name.
    pub duplicates: usize,
    /// Skills replaced by a same-named skill from a later root.
    pub overridden: usize,
}

/// Every loaded skill, sorted by name, plus a search index over them.
#[derive(Debug, Clone)]
pub struct Catalog {
    skills: Vec<Skill>,
    by_name: HashMap<String, usize>,
    warnings: Vec<Warning>,
    stats: LoadStats,
    index: SearchIndex,
}

impl Catalog {
    /// Loads every root, lowest priority first. Never fails: a root or a
    /// skill that cannot be read becomes a warning.
    pub fn load(roots: &[Root], opts: &LoadOptions) -> Catalog {
        let mut warnings = Vec::new();
        let mut stats = LoadStats::default();
        // Skills live in `slots`; `chosen` maps a name to (root, slot), so a
        // skill is moved once into the sorted catalog, not once per sort step.
        let mut slots: Vec<Option<Skill>> = Vec::new();
        let mut chosen: HashMap<String, (usize, usize)> = HashMap::new();
        for (ri, root) in roots.iter().enumerate() {
            let loaded = load::load_root(root, opts, &mut warnings);
            stats.files += loaded.len();
            for result in loaded {
                let skill = match result {
                    Ok(s) => s,
                    Err(w) => {
                        stats.dropped += 1;
                        warnings.push(w);
                        continue;
                    }
                };
                stats.parsed += 1;
                match chosen.entry(skill.name.clone()) {
                    Entry::Occupied(o) if o.get().0 == ri => {
                        stats.duplicates += 1;
                        let first = slots[o.get().1]
                            .as_ref()
                            .map(|s| s.path.display().to_string());
                        warnings.push(Warning::new(
                            &skill.path,
                            format!(
                                "skipped: skill '{}' is already defined by {} in the same root",
                                skill.name,
                                first.unwrap_or_default()
                            ),
                        ));
                    }
                    Entry::Occupied(mut o) => {
                        stats.overridden += 1;
                        o.get_mut().0 = ri;
                        slots[o.get().1] = Some(skill);
                    }
                    Entry::Vacant(v) => {
                        v.insert((ri, slots.len()));
                        slots.push(Some(skill));
                    }
                }
            }
        }
        let skills = sorted_by_name(slots);
        // Only the warnings of skills that made it into the catalog: an
        // overridden skill's problems are not the user's concern.
        for s in &skills {
            warnings.extend(s.warnings.iter().map(|w| Warning::new(&s.path, w.clone())));
        }
        Catalog::build(skills, warnings, stats)
    }

    /// A catalog of ready-made skills (tests, generated skills). A later
    /// skill replaces an earlier one of the same name.
    pub fn from_skills(skills: Vec<Skill>) -> Catalog {
        let mut slots: Vec<Option<Skill>> = Vec::with_capacity(skills.len());
        let mut chosen: HashMap<String, usize> = HashMap::new();
        for s in skills {
            match chosen.entry(s.name.clone()) {
                Entry::Occupied(o) => slots[*o.get()] = Some(s),
                Entry::Vacant(v) => {
                    v.insert(slots.len());
                    slots.push(Some(s));
                }
            }
        }
        Catalog::build(sorted_by_name(slots), Vec::new(), LoadStats::default())
    }

    fn build(skills: Vec<Skill>, mut warnings: Vec<Warning>, stats: LoadStats) -> Catalog {
        let (index, index_warnings) = SearchIndex::build(&skills);
        warnings.extend(index_warnings);
        let by_name = skills
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        Catalog {
            skills,
            by_name,
            warnings,
            stats,
            index,
        }
    }

    /// All skills, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.by_name.get(name).map(|&i| &self.skills[i])
    }

    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    pub fn stats(&self) -> LoadStats {
        self.stats
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The `k` skills that best fit `query`: triggers first, then tags, then
    /// BM25 over name and description. Skills scoring zero are left out.
    pub fn search(&self, query: &str, k: usize) -> Vec<Match<'_>> {
        self.index.search(&self.skills, query, k)
    }
}

/// The skills of `slots`, sorted by name (names are unique here).
fn sorted_by_name(mut slots: Vec<Option<Skill>>) -> Vec<Skill> {
    let mut order: Vec<usize> = (0..slots.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        let name = |i: usize| slots[i].as_ref().map(|s| s.name.as_str());
        name(a).cmp(&name(b))
    });
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// `sha256:` + lowercase hex of the file's bytes.
pub fn content_version(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_version_is_sha256_hex() {
        assert_eq!(
            content_version(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("has parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    #[test]
    fn later_roots_override_and_same_root_duplicates_warn() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        write(&a, "x/SKILL.md", "---\nname: x\ndescription: from a\n---\n");
        write(
            &a,
            "y/SKILL.md",
            "---\nname: y\ndescription: y from a\n---\n",
        );
        write(&a, "z/SKILL.md", "---\nname: y\ndescription: dup\n---\n");
        write(&b, "x/SKILL.md", "---\nname: x\ndescription: from b\n---\n");
        let cat = Catalog::load(
            &[Root::new(a, Source::User), Root::new(b, Source::Path)],
            &LoadOptions::default(),
        );
        let x = cat.get("x").expect("x");
        assert_eq!(x.description, "from b");
        assert_eq!(x.source, Source::Path);
        assert_eq!(cat.get("y").expect("y").description, "y from a");
        assert_eq!(cat.stats().overridden, 1);
        assert_eq!(cat.stats().duplicates, 1);
        assert!(
            cat.warnings()
                .iter()
                .any(|w| w.message.contains("same root"))
        );
        assert_eq!(
            cat.skills()
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>(),
            ["x", "y"]
        );
    }

    #[test]
    fn missing_root_is_silently_empty() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let cat = Catalog::load(
            &[Root::new(tmp.path().join("nope"), Source::User)],
            &LoadOptions::default(),
        );
        assert!(cat.is_empty());
        assert!(cat.warnings().is_empty());
    }

    #[test]
    fn root_that_is_itself_a_skill_and_hidden_folders() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("solo");
        write(
            &root,
            "SKILL.md",
            "---\nname: solo\ndescription: root skill\n---\n",
        );
        write(
            &root,
            ".curated/inner/skill.md",
            "---\nname: inner\ndescription: hidden ok\n---\n",
        );
        write(
            &root,
            ".git/g/SKILL.md",
            "---\nname: g\ndescription: never\n---\n",
        );
        write(
            &root,
            "node_modules/n/SKILL.md",
            "---\nname: n\ndescription: never\n---\n",
        );
        let cat = Catalog::load(&[Root::new(root, Source::Path)], &LoadOptions::default());
        let names: Vec<_> = cat.skills().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["inner", "solo"]);
        assert!(
            cat.get("inner")
                .expect("inner")
                .path
                .ends_with(".curated/inner/skill.md")
        );
    }

    #[test]
    fn caps_on_files_and_depth_warn() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for i in 0..5 {
            write(
                tmp.path(),
                &format!("s{i}/SKILL.md"),
                &format!("---\nname: s{i}\ndescription: d\n---\n"),
            );
        }
        write(
            tmp.path(),
            "a/b/c/deep/SKILL.md",
            "---\nname: deep\ndescription: d\n---\n",
        );
        let opts = LoadOptions {
            max_files: 3,
            ..LoadOptions::default()
        };
        let cat = Catalog::load(&[Root::new(tmp.path().to_path_buf(), Source::Path)], &opts);
        assert_eq!(cat.len(), 3);
        assert!(
            cat.warnings()
                .iter()
                .any(|w| w.message.contains("skill files (the cap)"))
        );

        let opts = LoadOptions {
            max_depth: 2,
            ..LoadOptions::default()
        };
        let cat = Catalog::load(&[Root::new(tmp.path().to_path_buf(), Source::Path)], &opts);
        assert!(cat.get("deep").is_none());
        assert_eq!(cat.len(), 5);
        assert!(
            cat.warnings()
                .iter()
                .any(|w| w.message.contains("levels below the root"))
        );
    }
}
