//! `skillhost skills ...` through the real binary. Every run gets its own
//! `SKILLHOST_HOME` and workspace, so the user's real skills are never read.

use crate::harness::Workspace;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::{write, write_skill};

/// The user root of the workspace's home.
fn user_root(env: &Workspace) -> PathBuf {
    env.home.join("skills")
}

/// Runs `args`, which must succeed; stdout and stderr.
fn ok(env: &Workspace, args: &[&str]) -> (String, String) {
    let out = env.output(args);
    let (stdout, stderr) = texts(&out);
    assert!(
        out.status.success(),
        "skillhost {args:?} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

/// Runs `args`, which must succeed and print a JSON array; its items.
fn json(env: &Workspace, args: &[&str]) -> Vec<Value> {
    let (stdout, _) = ok(env, args);
    match serde_json::from_str(&stdout) {
        Ok(Value::Array(items)) => items,
        other => panic!("not a JSON array: {other:?}\n{stdout}"),
    }
}

fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn by_name<'a>(items: &'a [Value], name: &str) -> &'a Value {
    items
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no skill '{name}' in {items:?}"))
}

fn sha256_hex(path: &Path) -> String {
    skillhost::skill::content_version(&std::fs::read(path).expect("read"))
}

#[test]
fn list_json_has_the_documented_shape_and_sources() {
    let env = Workspace::new();
    let extra = env.workspace.join("extra");
    let user = write_skill(&user_root(&env), "cat-user", "From the user root.");
    write_skill(
        &env.workspace.join(".skillhost/skills"),
        "cat-ws",
        "From the workspace.",
    );
    write_skill(
        &env.workspace.join(".agents/skills"),
        "cat-agents",
        "From .agents.",
    );
    write_skill(&extra, "cat-path", "From --skills.");
    write(
        &extra,
        "renamed/SKILL.md",
        "---\nname: cat-odd\ndescription: Name differs.\n---\n",
    );

    let out = env.output(&["skills", "list", "--skills", "extra", "--format", "json"]);
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stderr}");
    let items: Vec<Value> = serde_json::from_str(&stdout).expect("JSON array");
    for item in &items {
        for key in [
            "name",
            "description",
            "path",
            "version",
            "source",
            "warnings",
        ] {
            assert!(item.get(key).is_some(), "missing {key} in {item}");
        }
        assert!(item["warnings"].is_array());
    }
    assert_eq!(by_name(&items, "cat-user")["source"], "user");
    assert_eq!(by_name(&items, "cat-ws")["source"], "workspace");
    assert_eq!(by_name(&items, "cat-agents")["source"], "workspace");
    assert_eq!(by_name(&items, "cat-path")["source"], "path");
    let u = by_name(&items, "cat-user");
    assert_eq!(u["description"], "From the user root.");
    assert_eq!(u["path"], user.to_string_lossy().as_ref());
    assert_eq!(u["version"], sha256_hex(&user).as_str());
    assert_eq!(u["warnings"], Value::Array(Vec::new()));

    // A spec deviation is a warning in the JSON and on stderr.
    let odd = by_name(&items, "cat-odd");
    assert!(
        odd["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("differs from its folder")),
        "{odd}"
    );
    assert!(
        stderr.contains("renamed/SKILL.md") && stderr.contains("differs from its folder"),
        "{stderr}"
    );
}

#[test]
fn later_roots_override_earlier_ones() {
    let env = Workspace::new();
    write_skill(&user_root(&env), "cat-shared", "user");
    write_skill(
        &env.workspace.join(".skillhost/skills"),
        "cat-shared",
        "workspace",
    );
    write_skill(&env.workspace.join("one"), "cat-shared", "first --skills");
    write_skill(&env.workspace.join("two"), "cat-shared", "second --skills");

    let items = json(&env, &["skills", "list", "--format", "json"]);
    assert_eq!(by_name(&items, "cat-shared")["description"], "workspace");
    let items = json(
        &env,
        &[
            "skills", "--skills", "one", "--skills", "two", "list", "--format", "json",
        ],
    );
    let s = by_name(&items, "cat-shared");
    assert_eq!(s["description"], "second --skills");
    assert_eq!(s["source"], "path");
    assert_eq!(
        items.iter().filter(|i| i["name"] == "cat-shared").count(),
        1
    );
}

#[test]
fn list_table_is_readable_and_bad_skills_only_warn() {
    let env = Workspace::new();
    write_skill(&user_root(&env), "cat-good", "A good skill.");
    write(
        &user_root(&env),
        "cat-bad/SKILL.md",
        "---\n- not\n- a mapping\n---\n",
    );
    let (stdout, stderr) = ok(&env, &["skills", "list"]);
    let header = stdout.lines().next().unwrap_or_default();
    for col in ["NAME", "SOURCE", "VERSION", "DESCRIPTION"] {
        assert!(header.contains(col), "{stdout}");
    }
    let row = stdout
        .lines()
        .find(|l| l.starts_with("cat-good"))
        .expect("row for cat-good");
    assert!(
        row.contains("user") && row.contains("sha256:") && row.contains("A good skill."),
        "{row}"
    );
    assert!(!stdout.contains("cat-bad"));
    assert!(
        stderr.contains("cat-bad/SKILL.md") && stderr.contains("front matter is a list"),
        "{stderr}"
    );
}

#[test]
fn search_ranks_triggers_then_tags_then_text() {
    let env = Workspace::new();
    let root = user_root(&env);
    write(
        &root,
        "cat-trigger/SKILL.md",
        "---\nname: cat-trigger\ndescription: Handles things.\nmetadata:\n  triggers: [zebracorn report]\n---\n",
    );
    write(
        &root,
        "cat-tag/SKILL.md",
        "---\nname: cat-tag\ndescription: Other things.\ntags: [zebracorn]\n---\n",
    );
    write_skill(&root, "cat-text", "Mentions the zebracorn in passing.");

    let items = json(
        &env,
        &[
            "skills",
            "search",
            "write the zebracorn report",
            "-k",
            "3",
            "--format",
            "json",
        ],
    );
    let names: Vec<&str> = items.iter().filter_map(|m| m["name"].as_str()).collect();
    assert_eq!(names, ["cat-trigger", "cat-tag", "cat-text"]);
    assert!(
        items[0]["why"]
            .as_str()
            .is_some_and(|w| w.contains("trigger 'zebracorn report'"))
    );
    assert!(
        items[1]["why"]
            .as_str()
            .is_some_and(|w| w.contains("tag 'zebracorn'"))
    );
    assert_eq!(items[2]["why"], "bm25");
    assert!(items[0]["score"].as_f64() > items[1]["score"].as_f64());

    let items = json(
        &env,
        &[
            "skills",
            "search",
            "zebracorn",
            "-k",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(items.len(), 1);

    let (stdout, _) = ok(&env, &["skills", "search", "zebracorn report"]);
    assert!(
        stdout
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("cat-trigger")),
        "{stdout}"
    );
}

#[test]
fn prompt_escapes_and_leaves_out_hidden_skills() {
    let env = Workspace::new();
    let root = user_root(&env);
    let path = write(
        &root,
        "cat-xml/SKILL.md",
        "---\nname: cat-xml\ndescription: \"Use <this> & 'that' </description>\"\n---\n",
    );
    write(
        &root,
        "cat-hidden/SKILL.md",
        "---\nname: cat-hidden\ndescription: Only by hand.\ndisable-model-invocation: true\n---\n",
    );
    let (stdout, _) = ok(&env, &["skills", "prompt"]);
    assert!(
        stdout.starts_with("<available_skills>\n") && stdout.ends_with("</available_skills>\n")
    );
    let expected = format!(
        "<skill>\n<name>cat-xml</name>\n<source>user skill</source>\n<description>Use &lt;this&gt; &amp; &apos;that&apos; &lt;/description&gt;</description>\n<location>{}</location>\n<version>{}</version>\n</skill>\n",
        path.display(),
        sha256_hex(&path)
    );
    assert!(stdout.contains(&expected), "{stdout}");
    assert!(!stdout.contains("cat-hidden"));
    // Hidden from the model, still listed for the user.
    let items = json(&env, &["skills", "list", "--format", "json"]);
    assert_eq!(by_name(&items, "cat-hidden")["model_invocable"], false);
}

#[test]
fn show_prints_the_file_and_unknown_names_say_what_to_do() {
    let env = Workspace::new();
    let text =
        "---\nname: cat-show\ndescription: Shown.\n---\n# Title\n\nBody with **markdown**.\n";
    write(&user_root(&env), "cat-show/SKILL.md", text);
    let (stdout, _) = ok(&env, &["skills", "show", "cat-show"]);
    assert_eq!(stdout, text);

    let out = env.output(&["skills", "show", "cat-nope"]);
    let (_, stderr) = texts(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no skill named 'cat-nope'") && stderr.contains("skillhost skills list"),
        "{stderr}"
    );
    let out = env.output(&["skills", "show", "cat-sho"]);
    assert!(
        texts(&out).1.contains("did you mean 'cat-show'"),
        "{}",
        texts(&out).1
    );
}

#[test]
fn validate_reports_one_line_per_problem_and_fails_on_errors() {
    let env = Workspace::new();
    let good = write(
        &env.workspace,
        "pdf-tools/SKILL.md",
        "---\nname: pdf-tools\ndescription: Works with PDF files.\nlicense: MIT\n---\nBody.\n",
    );
    let (stdout, _) = ok(&env, &["skills", "validate", "pdf-tools"]);
    assert_eq!(stdout, "");
    let (stdout, _) = ok(&env, &["skills", "validate", &good.to_string_lossy()]);
    assert_eq!(stdout, "");

    write(
        &env.workspace,
        "bad-one/SKILL.md",
        "---\nname: Bad_One\ndescription: ''\ntags: [x]\n---\n",
    );
    let out = env.output(&["skills", "validate", "pdf-tools", "bad-one", "missing"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("bad-one: ") || l.starts_with("missing: ")),
        "{stdout}"
    );
    for needle in [
        "bad-one: error: `name` 'Bad_One' contains upper-case letters",
        "bad-one: error: `name` 'Bad_One' must match its folder name 'bad-one'",
        "bad-one: error: `description` is empty",
        "bad-one: error: unexpected top-level key `tags`",
        "missing: error: missing does not exist",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(needle)),
            "no line starting {needle:?} in\n{stdout}"
        );
    }
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(stderr.contains("5 error(s)"), "{stderr}");
}
