//! A command kept in pieces in a data file: a JSON, YAML or TOML object
//! whose values, each a word on its own, name a downloader, a URL and an
//! interpreter (`"transport": "curl"`, `"source": "http://…"`,
//! `"interpreter": "bash"`) is a fetch-and-run a script of the skill puts
//! together at run time (`"$t" "$s" | "$i"`), which no line rule sees. A
//! whole command in one value is read by the rules already.

use serde_json::Value;

/// The rule id of a command assembled from a data file.
pub const ASSEMBLED_RULE: &str = "assembled-command";

/// Programs that fetch a URL.
const FETCHERS: &[&str] = &[
    "curl",
    "wget",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
    "aria2c",
    "fetch",
];
/// Programs that run the code they read.
const RUNNERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "python",
    "python3",
    "node",
    "perl",
    "ruby",
    "iex",
    "invoke-expression",
    "powershell",
    "pwsh",
];

/// The byte offset of the first URL of an object of `text` (a data file
/// named `file`) that spells a fetch-and-run in pieces.
pub fn assembled(file: &str, text: &str) -> Option<usize> {
    let lower = file.to_ascii_lowercase();
    let value: Value = if lower.ends_with(".json") {
        serde_json::from_str(text).ok()?
    } else if lower.ends_with(".yaml") || lower.ends_with(".yml") {
        serde_norway::from_str(text).ok()?
    } else if lower.ends_with(".toml") {
        toml::from_str(text).ok()?
    } else {
        return None;
    };
    let url = found(&value, 0)?;
    text.find(&url)
}

/// The URL of the first object under `v` whose own values hold a
/// fetcher, a URL and a runner (objects 32 deep at most).
fn found(v: &Value, depth: usize) -> Option<String> {
    if depth > 32 {
        return None;
    }
    match v {
        Value::Object(map) => {
            let words: Vec<&str> = map.values().flat_map(strings).collect();
            pieces(&words).or_else(|| map.values().find_map(|c| found(c, depth + 1)))
        }
        Value::Array(items) => items.iter().find_map(|c| found(c, depth + 1)),
        _ => None,
    }
}

/// The strings of a value: itself, or an array's string items.
fn strings(v: &Value) -> Vec<&str> {
    match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The URL when `words` hold a fetcher, a URL and a runner, each a value
/// of its own.
fn pieces(words: &[&str]) -> Option<String> {
    let is = |list: &[&str], w: &str| {
        let name = w.trim().rsplit(['/', '\\']).next().unwrap_or(w);
        let name = name.strip_suffix(".exe").unwrap_or(name);
        list.contains(&name.to_ascii_lowercase().as_str())
    };
    let fetcher = words.iter().any(|w| is(FETCHERS, w));
    let runner = words.iter().any(|w| is(RUNNERS, w));
    let url = words.iter().find(|w| {
        let w = w.trim().to_ascii_lowercase();
        w.starts_with("http://") || w.starts_with("https://")
    })?;
    (fetcher && runner).then(|| url.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::assembled;

    #[test]
    fn a_fetcher_a_url_and_a_shell_as_values_of_one_object_are_a_command() {
        let json = r#"{"setup": {"get": "wget", "args": ["-qO-"], "from": "https://cdn.example.net/s", "run": "/bin/sh"}}"#;
        assert!(assembled("conf/setup.json", json).is_some());
        let yaml = "bootstrap:\n  tool: curl\n  url: https://cdn.example.net/b\n  shell: bash\n";
        assert!(assembled("conf/b.yaml", yaml).is_some());
    }

    #[test]
    fn honest_configs_are_not_commands() {
        // A shell setting and an API URL, with no downloader.
        let json = r#"{"shell": "bash", "api": "https://api.example.com/v1", "timeout": 30}"#;
        assert!(assembled("settings.json", json).is_none());
        // The pieces in different objects are no one command.
        let json = r#"{"http": {"client": "curl", "base": "https://api.example.com"}, "tasks": {"shell": "bash"}}"#;
        assert!(assembled("settings.json", json).is_none());
        // A whole command in one value is the line rules' to read.
        let json = r#"{"install": "curl -fsSL https://example.com/i.sh -o i.sh"}"#;
        assert!(assembled("package.json", json).is_none());
        assert!(assembled("notes.md", "curl\nhttps://x\nbash").is_none());
    }
}
