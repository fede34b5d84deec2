//! Diagnostics on stderr through `tracing`: `-q`, `-v`, `RUST_LOG` and
//! `--log-format json`, with stdout left to the command's output.

use crate::harness;

use harness::Workspace;

/// A workspace with a template skill, `log-probe`, and a skill whose name
/// differs from its folder, which the catalog warns about on every load.
fn workspace() -> Workspace {
    let ws = Workspace::new();
    ws.add_skill("log-probe", "", None);
    let odd = ws.skills.join("renamed");
    std::fs::create_dir_all(&odd).expect("mkdir");
    std::fs::write(
        odd.join("SKILL.md"),
        "---\nname: log-odd\ndescription: Name differs.\n---\n\nOdd.\n",
    )
    .expect("write SKILL.md");
    ws
}

fn skills_arg(ws: &Workspace) -> String {
    ws.skills.to_string_lossy().into_owned()
}

const WARNING: &str = "differs from its folder";

#[test]
fn quiet_silences_a_warning_that_shows_by_default() {
    let ws = workspace();
    let skills = skills_arg(&ws);

    let loud = ws.run_cli(&["--skills", &skills, "skills", "list"]);
    assert_eq!(loud.code, 0, "{}", loud.stderr);
    assert!(
        loud.stderr
            .lines()
            .any(|l| l.starts_with("warning: ") && l.contains(WARNING)),
        "{}",
        loud.stderr
    );
    assert!(!loud.stdout.contains(WARNING), "{}", loud.stdout);

    let quiet = ws.run_cli(&["--skills", &skills, "-q", "skills", "list"]);
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert_eq!(quiet.stderr, "", "-q leaves only errors");
    // The output itself is the same.
    assert_eq!(quiet.stdout, loud.stdout);
    assert!(quiet.stdout.contains("log-probe"), "{}", quiet.stdout);

    // An error still gets through -q.
    let failed = ws.run_cli(&["--skills", &skills, "-q", "skills", "show", "nope"]);
    assert_eq!(failed.code, 1);
    assert!(
        failed.stderr.starts_with("error: no skill named 'nope'"),
        "{}",
        failed.stderr
    );
    assert!(!failed.stderr.contains(WARNING), "{}", failed.stderr);
}

/// Every line of `stderr`, as a JSON object with a `level`.
fn json_lines(stderr: &str) -> Vec<serde_json::Value> {
    assert!(!stderr.trim().is_empty(), "expected log lines on stderr");
    stderr
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}\n{stderr}"));
            assert!(v.is_object(), "{l}");
            assert!(v["level"].is_string(), "no level: {l}");
            v
        })
        .collect()
}

fn message(v: &serde_json::Value) -> &str {
    v["fields"]["message"].as_str().unwrap_or_default()
}

#[test]
fn log_format_json_writes_one_object_per_stderr_line() {
    let ws = workspace();
    let skills = skills_arg(&ws);

    let r = ws.run_cli(&[
        "--skills",
        &skills,
        "--log-format",
        "json",
        "skills",
        "list",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = json_lines(&r.stderr);
    assert!(
        lines
            .iter()
            .any(|v| v["level"] == "WARN" && message(v).contains(WARNING)),
        "{}",
        r.stderr
    );
    // Stdout is still the table, untouched by the log format.
    assert!(r.stdout.starts_with("NAME"), "{}", r.stdout);

    // With -v, the run's span closes with its fields and timings, in JSON too.
    let run = ws.run_cli(&[
        "--skills",
        &skills,
        "--log-format",
        "json",
        "-v",
        "run",
        "probe the logs",
        "--skill",
        "log-probe",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stderr);
    let close = lines
        .iter()
        .find(|v| message(v) == "close" && v["span"]["name"] == "run")
        .unwrap_or_else(|| panic!("no close of the run span:\n{}", run.stderr));
    assert_eq!(close["span"]["skill"], "log-probe", "{close}");
    assert_eq!(close["span"]["tier"], "template", "{close}");
    assert!(close["span"]["duration_us"].is_u64(), "{close}");
    assert!(close["fields"]["time.busy"].is_string(), "{close}");
}

/// The lines of `stderr` about the `run` span of `skill`.
fn run_span_lines<'a>(stderr: &'a str, skill: &str) -> Vec<&'a str> {
    let needle = format!("skill={skill}");
    stderr
        .lines()
        .filter(|l| l.contains("run{") && l.contains(&needle))
        .collect()
}

#[test]
fn rust_log_and_vv_show_the_run_span_with_its_timing() {
    let ws = workspace();
    let skills = skills_arg(&ws);
    let args = [
        "--skills",
        &skills,
        "run",
        "probe the logs",
        "--skill",
        "log-probe",
    ];

    // By default the run leaves no trace on stderr beyond the warning.
    let plain = ws.run_cli(&args);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(
        run_span_lines(&plain.stderr, "log-probe").is_empty(),
        "{}",
        plain.stderr
    );

    let env = ws
        .cli()
        .env("RUST_LOG", "skillhost=debug")
        .args(args)
        .output()
        .expect("run skillhost");
    let env = harness::CliResult::from(env);
    let mut vv_args = vec!["-vv"];
    vv_args.extend(args);
    let vv = ws.run_cli(&vv_args);
    for r in [&env, &vv] {
        assert_eq!(r.code, 0, "{}", r.stderr);
        // The answer is on stdout either way.
        assert_eq!(r.stdout, plain.stdout);
        let lines = run_span_lines(&r.stderr, "log-probe");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("close") && l.contains("time.busy")),
            "no timed close of the run span:\n{}",
            r.stderr
        );
        // The tier runs inside the run.
        assert!(
            r.stderr
                .lines()
                .any(|l| l.contains("run{") && l.contains("tier{tier=\"template\"")),
            "{}",
            r.stderr
        );
    }
}
