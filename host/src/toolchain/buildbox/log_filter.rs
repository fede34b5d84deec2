//! What of a build's output may leave the box: of the compiler's JSON
//! diagnostics, only those about the handler's own source.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// What a diagnostic withheld is replaced by.
pub const WITHHELD: &str = "withheld: a diagnostic that points outside the handler's source (src/)";

/// Which lines of a build's output are passed on (to `build.log`, the
/// model and the operator).
///
/// - `cargo`: the build ran `cargo build --message-format=json`. On stdout,
///   a compiler diagnostic is kept (its `rendered` text) only when all of
///   its spans, its children's and their macro expansions' lie in the
///   slot's `src/`; otherwise it becomes one line naming its level and
///   code (and where in `src/` it starts, if it does). On stderr, only
///   cargo's own lines: its status lines (`Compiling ...`), its
///   `error:`/`warning:` lines and their `Caused by:` chains (cargo reads
///   only manifests, never the handler's source), and bwrap's. Anything
///   else (a compiler's panic, a line too long) is counted and withheld.
/// - `raw` (componentize-js): every line, as it came; the box is the
///   boundary.
#[derive(Debug, Clone)]
pub struct LogFilter {
    /// The slot's `src/`, as given and canonical; None: raw.
    src: Option<Vec<PathBuf>>,
    slot: PathBuf,
    in_cause: bool,
    withheld_lines: usize,
}

/// cargo's status words (`   Compiling x v0.1.0 (/path)`).
const CARGO_STATUS: &[&str] = &[
    "Compiling",
    "Checking",
    "Finished",
    "Fresh",
    "Blocking",
    "Locking",
    "Adding",
    "Removing",
    "Updating",
    "Unpacking",
    "Packaging",
    "Running",
];

impl LogFilter {
    pub fn cargo(slot: &Path) -> LogFilter {
        let mut src = vec![normalize(&slot.join("src"))];
        if let Ok(c) = slot.canonicalize() {
            let c = c.join("src");
            if !src.contains(&c) {
                src.push(c);
            }
        }
        LogFilter {
            src: Some(src),
            slot: slot.to_path_buf(),
            in_cause: false,
            withheld_lines: 0,
        }
    }

    pub fn raw() -> LogFilter {
        LogFilter {
            src: None,
            slot: PathBuf::new(),
            in_cause: false,
            withheld_lines: 0,
        }
    }

    /// A line of the build's stdout: what to pass on, if anything.
    pub fn stdout(&mut self, line: &str) -> Option<String> {
        if self.src.is_none() {
            return Some(line.to_owned());
        }
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            if !line.trim().is_empty() {
                self.withheld_lines += 1;
            }
            return None;
        };
        if msg["reason"] != "compiler-message" {
            // compiler-artifact, build-script-executed, build-finished.
            return None;
        }
        Some(self.diagnostic(&msg["message"]))
    }

    /// The headline of a compiler message on cargo's stdout (never its
    /// rendered source lines, which quote what the source says).
    pub fn headline(line: &str) -> Option<String> {
        let msg = serde_json::from_str::<Value>(line).ok()?;
        if msg["reason"] != "compiler-message" {
            return None;
        }
        msg["message"]["message"].as_str().map(str::to_owned)
    }

    /// A compiler diagnostic's text, or the line that stands for it.
    pub fn diagnostic(&self, d: &Value) -> String {
        let rendered = d["rendered"].as_str();
        if let Some(rendered) = rendered
            && self.inside(d)
        {
            return rendered.trim_end().to_owned();
        }
        let level = match d["level"].as_str() {
            Some(l @ ("error" | "warning" | "note" | "help" | "failure-note")) => l,
            Some("error: internal compiler error") => "error",
            _ => "diagnostic",
        };
        let code = d["code"]["code"]
            .as_str()
            .filter(|c| {
                !c.is_empty()
                    && c.len() <= 64
                    && c.chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':')
            })
            .map(|c| format!("[{c}]"))
            .unwrap_or_default();
        let at = d["spans"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["is_primary"] == true)
            .filter(|s| self.span_file_inside(s))
            .and_then(|s| {
                Some(format!(
                    " at src/{}:{}:{}",
                    self.relative_to_src(s["file_name"].as_str()?)?,
                    s["line_start"].as_u64()?,
                    s["column_start"].as_u64()?
                ))
            })
            .unwrap_or_default();
        format!("{level}{code}{at}: {WITHHELD}")
    }

    /// A line of the build's stderr: what to pass on, if anything.
    pub fn stderr(&mut self, line: &str) -> Option<String> {
        if self.src.is_none() {
            return Some(line.to_owned());
        }
        let trimmed = line.trim_start();
        let word = trimmed.split_whitespace().next().unwrap_or("");
        if line.trim().is_empty() {
            return Some(String::new());
        }
        if line.starts_with("bwrap: ") {
            self.in_cause = false;
            return Some(line.to_owned());
        }
        if (line.starts_with("error: ") || line.starts_with("warning: "))
            && !line.contains("internal compiler error")
        {
            self.in_cause = false;
            return Some(line.to_owned());
        }
        if line == "Caused by:" {
            self.in_cause = true;
            return Some(line.to_owned());
        }
        if self.in_cause && line.starts_with("  ") {
            return Some(line.to_owned());
        }
        self.in_cause = false;
        if line.starts_with(' ') && CARGO_STATUS.contains(&word) {
            return Some(line.to_owned());
        }
        self.withheld_lines += 1;
        None
    }

    /// A line longer than the reader keeps.
    pub fn too_long(&mut self) -> Option<String> {
        if self.src.is_none() {
            return Some("… (a line too long to keep)".to_owned());
        }
        self.withheld_lines += 1;
        None
    }

    /// The closing line, when anything was withheld that no line stands for.
    pub fn finish(&self) -> Option<String> {
        (self.withheld_lines > 0).then(|| {
            format!(
                "({} other line(s) of the build's output withheld: they are not cargo's own)",
                self.withheld_lines
            )
        })
    }

    /// Whether every span of `d`, of its children and of their macro
    /// expansions is in the slot's `src/`.
    fn inside(&self, d: &Value) -> bool {
        let spans_inside = d["spans"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|s| self.span_inside(s));
        spans_inside
            && d["children"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|c| self.inside(c))
    }

    fn span_inside(&self, s: &Value) -> bool {
        if !self.span_file_inside(s) {
            return false;
        }
        let e = &s["expansion"];
        if e.is_null() {
            return true;
        }
        [&e["span"], &e["def_site_span"]]
            .into_iter()
            .all(|x| x.is_null() || self.span_inside(x))
    }

    fn span_file_inside(&self, s: &Value) -> bool {
        s["file_name"]
            .as_str()
            .is_some_and(|f| self.relative_to_src(f).is_some())
    }

    /// `file` (as the compiler names it: relative to the slot, or
    /// absolute) relative to the slot's `src/`, if it is in it.
    fn relative_to_src(&self, file: &str) -> Option<String> {
        let src = self.src.as_ref()?;
        if file.is_empty() || file.starts_with('<') {
            return None;
        }
        let path = normalize(&self.slot.join(file));
        src.iter().find_map(|s| {
            path.strip_prefix(s)
                .ok()
                .filter(|r| r.components().next().is_some())
                .map(|r| r.to_string_lossy().into_owned())
        })
    }
}

/// `p` with `.` and `..` resolved by name (no file system access).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn span(file: &str, line: u64) -> Value {
        json!({"file_name": file, "line_start": line, "line_end": line, "column_start": 5,
               "column_end": 9, "is_primary": true, "expansion": null, "text": []})
    }

    fn diag(spans: Vec<Value>, children: Vec<Value>) -> Value {
        json!({"$message_type": "diagnostic", "message": "m", "code": {"code": "E0308", "explanation": null},
               "level": "error", "spans": spans, "children": children,
               "rendered": "error[E0308]: the compiler's own words\n --> src/lib.rs:3:5\n"})
    }

    fn line(d: Value) -> String {
        json!({"reason": "compiler-message", "package_id": "x", "target": {}, "message": d})
            .to_string()
    }

    #[test]
    fn a_diagnostic_in_the_handlers_source_is_kept_and_one_outside_is_withheld() {
        let slot = Path::new("/q/slot");
        let mut f = LogFilter::cargo(slot);
        let kept = f.stdout(&line(diag(vec![span("src/lib.rs", 3)], vec![])));
        assert_eq!(
            kept.as_deref(),
            Some("error[E0308]: the compiler's own words\n --> src/lib.rs:3:5")
        );
        // The same path written absolute, or through `..` back into src/.
        for inside in ["/q/slot/src/lib.rs", "src/../src/lib.rs", "src/x/../lib.rs"] {
            assert!(
                f.stdout(&line(diag(vec![span(inside, 3)], vec![])))
                    .is_some_and(|l| l.contains("own words")),
                "{inside}"
            );
        }
        for outside in [
            "/etc/passwd",
            "/proc/self/environ",
            "/work/guest-sdk/src/lib.rs",
            "/root/.cargo/registry/src/index.crates.io-1/serde-1.0.0/src/lib.rs",
            "/rustc/0123/library/alloc/src/string.rs",
            "src/../Cargo.toml",
            "src/../../../etc/passwd",
            "/q/slot/srcx/lib.rs",
            "/q/slot/src",
            "<anon>",
            "",
        ] {
            let got = f
                .stdout(&line(diag(vec![span(outside, 1)], vec![])))
                .expect("a line");
            assert_eq!(got, format!("error[E0308]: {WITHHELD}"), "{outside}");
        }
    }

    #[test]
    fn a_child_or_a_macro_expansion_outside_withholds_the_whole_diagnostic() {
        let mut f = LogFilter::cargo(Path::new("/q/slot"));
        let child = json!({"message": "the trait is implemented here", "code": null, "level": "note",
                           "spans": [span("/work/guest-sdk/src/lib.rs", 40)], "children": [], "rendered": null});
        let got = f
            .stdout(&line(diag(vec![span("src/lib.rs", 7)], vec![child])))
            .expect("a line");
        assert_eq!(got, format!("error[E0308] at src/lib.rs:7:5: {WITHHELD}"));
        // `#[$a = $f] mod $n;`: the call site is the handler's, the file
        // it read is not.
        let mut read = span("src/lib.rs", 2);
        read["expansion"] = json!({"span": span("src/lib.rs", 2), "macro_decl_name": "m!",
                                   "def_site_span": span("/etc/passwd", 1)});
        let got = f.stdout(&line(diag(vec![read], vec![]))).expect("a line");
        assert!(got.ends_with(WITHHELD), "{got}");
        // A nested expansion, all in src/: kept.
        let mut ok = span("src/lib.rs", 2);
        let mut inner = span("src/lib.rs", 1);
        inner["expansion"] = json!({"span": span("src/lib.rs", 9), "def_site_span": null});
        ok["expansion"] = json!({"span": inner, "def_site_span": span("src/lib.rs", 1)});
        assert!(
            f.stdout(&line(diag(vec![ok], vec![])))
                .is_some_and(|l| l.contains("own words"))
        );
    }

    #[test]
    fn the_withheld_line_carries_no_text_of_the_diagnostic() {
        let f = LogFilter::cargo(Path::new("/q/slot"));
        let mut d = diag(vec![span("/secret/file", 1)], vec![]);
        d["message"] = json!("expected item, found `TOPSECRET`");
        d["code"] = json!({"code": "TOPSECRET is here", "explanation": "TOPSECRET"});
        d["level"] = json!("TOPSECRET");
        let got = f.diagnostic(&d);
        assert!(!got.contains("TOPSECRET"), "{got}");
        assert_eq!(got, format!("diagnostic: {WITHHELD}"));
    }

    #[test]
    fn only_cargos_own_lines_pass_from_stderr() {
        let mut f = LogFilter::cargo(Path::new("/q/slot"));
        let kept = [
            "   Compiling generated-handler v0.1.0 (/q/slot)",
            "error: could not compile `generated-handler` (lib) due to 1 previous error",
            "warning: build failed, waiting for other jobs to finish...",
            "error: failed to load source for dependency `skillhost-guest`",
            "",
            "Caused by:",
            "  unable to update /x/guest-sdk",
            "bwrap: Can't find source path /x: No such file or directory",
        ];
        for l in kept {
            assert_eq!(f.stderr(l).as_deref(), Some(l), "{l:?}");
        }
        for l in [
            "thread 'rustc' panicked at compiler/rustc_x/src/lib.rs:1:1:",
            "error: internal compiler error: TOPSECRET",
            "root:x:0:0:root:/root:/bin/bash",
            "  --> /etc/passwd:1:5",
            "1 | TOPSECRET",
            "note: we would appreciate a bug report",
        ] {
            assert_eq!(f.stderr(l), None, "{l:?}");
        }
        // Non-JSON on stdout is not passed on either.
        assert_eq!(f.stdout("TOPSECRET"), None);
        assert!(f.too_long().is_none());
        assert_eq!(
            f.finish().as_deref(),
            Some("(8 other line(s) of the build's output withheld: they are not cargo's own)")
        );
        // Artifacts and the end of the build are not diagnostics.
        assert_eq!(
            f.stdout(&json!({"reason": "build-finished", "success": true}).to_string()),
            None
        );
        let mut raw = LogFilter::raw();
        assert_eq!(raw.stderr("anything").as_deref(), Some("anything"));
        assert_eq!(raw.finish(), None);
    }
}
