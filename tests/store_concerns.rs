//! The store is used by concern (`host/src/store/`): the gate keeps its
//! reports and approvals through `GateRecords`, learning reads the runs
//! through `RunLog`, and the kv capability reaches its data through its own
//! host service, which the runner backs with a `KvStore`. None of them
//! names `RunStore`, the whole store, so none can reach another concern's
//! data. A holder of the whole store passes the narrow concern on at the
//! call (`&dyn RunStore` upcasts to `&dyn GateRecords`).
//!
//! This reads their source and fails on a line that names `RunStore`
//! (comments aside), with the `file:line`.

use std::path::{Path, PathBuf};

/// The users of one concern each, under `host/src`: folders and files.
const CONCERN_USERS: &[&str] = &["gate", "gate_policy", "learn", "grants/kv.rs"];

/// The whole store, which those users must not name.
const WHOLE_STORE: &str = "RunStore";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `.rs` files at `path`: the file itself, or every one under the folder.
fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    for entry in std::fs::read_dir(path).expect("a readable source folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` with its comments blanked (`//` to the end of the line, `/* */`
/// anywhere), keeping every line where it was.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let line = rest.find("//");
        let block = rest.find("/*");
        let Some(start) = [line, block].into_iter().flatten().min() else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..start]);
        let end = if Some(start) == block {
            rest[start..]
                .find("*/")
                .map_or(rest.len(), |e| start + e + 2)
        } else {
            rest[start..].find('\n').map_or(rest.len(), |e| start + e)
        };
        out.extend(rest[start..end].chars().filter(|c| *c == '\n'));
        rest = &rest[end..];
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The 1-based lines where code in `text` names the identifier `word`.
fn lines_naming(text: &str, word: &str) -> Vec<usize> {
    let code = without_comments(text);
    code.lines()
        .enumerate()
        .filter(|(_, line)| {
            line.match_indices(word).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = line[at + word.len()..].chars().next();
                !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn the_gate_learning_and_kv_name_their_concern_not_the_whole_store() {
    let src = src();
    let mut named = Vec::new();
    for user in CONCERN_USERS {
        let mut files = Vec::new();
        rust_files(&src.join(user), &mut files);
        assert!(
            !files.is_empty(),
            "`{user}` holds no source: update the list"
        );
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            let rel = file
                .strip_prefix(&src)
                .unwrap_or(&file)
                .display()
                .to_string();
            named.extend(
                lines_naming(&text, WHOLE_STORE)
                    .into_iter()
                    .map(|n| format!("{rel}:{n}")),
            );
        }
    }
    assert!(
        named.is_empty(),
        "these name `{WHOLE_STORE}`; take the concern trait the code uses \
         (`GateRecords`, `RunLog`, `KvStore`) instead:\n{}",
        named.join("\n")
    );
}

#[test]
fn the_scan_sees_the_store_named_in_code_but_not_in_comments() {
    let text = "use crate::store::{RunLog, RunStore};\n\
        /// Takes a [`RunStore`].\n\
        fn f(s: &dyn crate::store::RunStore) {} // RunStore\n\
        /* a RunStore\n in a block */ struct RunStoreish;\n\
        let s: Arc<dyn RunStore>;\n";
    assert_eq!(lines_naming(text, WHOLE_STORE), [1, 3, 6]);
}
