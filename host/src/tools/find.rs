//! `find_files`: the workspace file whose name best matches the words of a
//! query, within the folders granted to the skill. It answers one path, so
//! a pipeline can read the file with `{{step[N].result}}`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use serde_json::{Value, json};

use super::builtin::{Builtin, granted_workspace_path, open_granted_dir, reads_workspace};
use super::{CallContext, Offer, ToolError, Toolbox, str_arg};
use crate::types::FailureClass;

/// Files looked at, at most, in one search.
const MAX_FILES: usize = 2000;
/// Folders deep, at most, below the searched one.
const MAX_DEPTH: usize = 8;

pub(super) const FIND_FILES: Builtin = Builtin {
    name: "find_files",
    description: "Find the workspace file whose name best matches the words of a query (within the folders granted to the skill). Returns its path relative to the folder searched.",
    parameters: || {
        json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "Words the file name should contain" },
                "in": { "type": "string", "description": "Folder to search, relative to the workspace (default: the whole workspace)" }
            },
            "required": ["query"]
        })
    },
    confined: false,
    offer: Offer::Granted(reads_workspace),
    authorize: |_, cx, args| granted_workspace_path(folder(args), cx, false).map(|_| ()),
    call: |tools, cx, args| Box::pin(find_files(tools, cx, args)),
};

async fn find_files(
    tools: &Toolbox,
    cx: &CallContext<'_>,
    args: Value,
) -> Result<Value, ToolError> {
    let query = str_arg(&args, "query")?;
    let folder = folder(&args);
    let (dir, rest) = granted_workspace_path(folder, cx, false)?;
    let root = open_granted_dir(tools, &dir, false)?;
    let io =
        |e: std::io::Error| ToolError::failed(FailureClass::FileError, format!("{folder}: {e}"));
    let base = if rest.as_os_str().is_empty() {
        root
    } else {
        root.open_dir(rest).map_err(io)?
    };
    let mut files = Vec::new();
    walk(&base, PathBuf::new(), 0, &mut files);
    let wanted = tokens(query);
    let best = files
        .iter()
        .map(|f| (score(&wanted, f), f))
        .filter(|(s, _)| *s > 0)
        // Highest score; among equals, the first name in order.
        .max_by(|(a, fa), (b, fb)| a.cmp(b).then_with(|| fb.cmp(fa)));
    match best {
        Some((_, f)) => Ok(Value::String(f.to_string_lossy().replace('\\', "/"))),
        None => Err(ToolError::failed(
            FailureClass::FileError,
            format!("no file under `{folder}` has a name matching `{query}`"),
        )),
    }
}

/// The folder argument; the whole workspace when absent.
fn folder(args: &Value) -> &str {
    match args.get("in").and_then(Value::as_str) {
        Some(f) if !f.trim().is_empty() => f,
        _ => ".",
    }
}

/// Lowercase runs of letters and digits, two characters or more.
fn tokens(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(str::to_owned)
        .collect()
}

/// How many query words the file's name (without its extension) holds.
fn score(wanted: &BTreeSet<String>, file: &Path) -> usize {
    let name = file.with_extension("");
    tokens(&name.to_string_lossy()).intersection(wanted).count()
}

/// Regular files below `dir`, sorted, hidden entries and links skipped.
fn walk(dir: &Dir, prefix: PathBuf, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = dir.entries() else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if out.len() >= MAX_FILES {
            return;
        }
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = e.file_type() else { continue };
        let path = prefix.join(&name);
        if kind.is_file() {
            out.push(path);
        } else if kind.is_dir()
            && depth < MAX_DEPTH
            && let Ok(sub) = e.open_dir()
        {
            walk(&sub, path, depth + 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_with_most_query_words_wins() {
        let q = tokens("Turn the Q3 sales notes into a brief in out/");
        assert_eq!(score(&q, Path::new("q3-sales.md")), 2);
        assert_eq!(score(&q, Path::new("q2-sales.md")), 1);
        assert_eq!(score(&q, Path::new("q2-hiring.md")), 0);
        // The extension is not a word of the name.
        assert_eq!(score(&tokens("md"), Path::new("a.md")), 0);
    }
}
