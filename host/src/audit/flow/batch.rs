//! A Windows batch file (`.bat`, `.cmd`, a `bat` block) read as the shell
//! it amounts to: `set` definitions kept and expanded where they are used
//! (`%name%`, the substrings `%name:~start,length%` and replacements
//! `%name:old=new%` that obfuscated scripts spell commands with), `call`
//! and `start` as running their program, `^` escapes undone, paths with
//! `/`. One line out per line in, each as long as the line it reads
//! when its shell is not longer, so positions keep their places.

use std::collections::HashMap;

/// The shell code a batch text amounts to.
pub(crate) fn to_shell(text: &str) -> String {
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut out = String::with_capacity(text.len());
    for original in text.split('\n') {
        let expanded = expand_delayed(&expand(original.trim(), &vars), &vars);
        let line = expanded.trim_start_matches('@');
        let mut shell = String::new();
        if let Some((name, value)) = definition(line) {
            let value_as_shell = value.replace('\\', "/").replace('"', "\\\"");
            shell = format!("{name}=\"{value_as_shell}\"");
            vars.insert(name.to_ascii_lowercase(), value.to_owned());
        } else if !is_comment(line) {
            shell = command(line);
        }
        // As long as the line was when it can be, so that the positions
        // of the lines after it stay where they are in the file.
        let pad = original.len().saturating_sub(shell.len());
        out.push_str(&shell);
        out.extend(std::iter::repeat_n(' ', pad));
        out.push('\n');
    }
    out.pop();
    out
}

fn is_comment(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.starts_with("rem ")
        || lower == "rem"
        || line.starts_with("::")
        || matches!(lower.as_str(), "echo off" | "setlocal" | "endlocal")
        || lower.starts_with("setlocal ")
}

/// `set name=value`, `set "name=value"`: the name and the value.
fn definition(line: &str) -> Option<(&str, &str)> {
    let rest = line.get(..4).filter(|s| s.eq_ignore_ascii_case("set "))?;
    let body = line[rest.len()..].trim();
    if body.starts_with('/') {
        return None;
    }
    let body = body
        .strip_prefix('"')
        .map_or(body, |b| b.strip_suffix('"').unwrap_or(b));
    let (name, value) = body.split_once('=')?;
    let plain = !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    plain.then_some((name, value))
}

/// A command line as shell: `call X`/`start "" X` run X, `^` escapes
/// undone, `\` as `/`.
fn command(line: &str) -> String {
    let mut words = line;
    for lead in ["call ", "start \"\" ", "start /b ", "start "] {
        if words.len() >= lead.len() && words[..lead.len()].eq_ignore_ascii_case(lead) {
            words = words[lead.len()..].trim_start();
            break;
        }
    }
    let mut out = String::with_capacity(words.len());
    let mut chars = words.chars();
    while let Some(c) = chars.next() {
        match c {
            '^' => out.extend(chars.next()),
            '\\' => out.push('/'),
            _ => out.push(c),
        }
    }
    out
}

/// `line` with each `%name%` (and its `:~a,b` or `:old=new` forms)
/// replaced by the value `set` gave it; an unknown one as `$name`.
fn expand(line: &str, vars: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        // `%~dp0`: the script's own folder; `%1`: an argument.
        if let Some(tail) = after.strip_prefix("~dp0") {
            out.push_str("./");
            rest = tail;
            continue;
        }
        let Some(end) = after.find('%') else {
            out.push_str(&rest[i..]);
            return out;
        };
        let reference = &after[..end];
        match reference_value(reference, vars) {
            Some(v) => out.push_str(&v),
            None if reference.is_empty() => out.push('%'),
            None => {
                out.push('$');
                out.push_str(reference.split(':').next().unwrap_or(reference));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `line` with each `!name!` (delayed expansion, and its `:~a,b` and
/// `:old=new` forms) of a variable `set` gave replaced by its value; a
/// `!` that starts no such reference is kept.
fn expand_delayed(line: &str, vars: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find('!') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let value = after
            .find('!')
            .and_then(|end| Some((end, reference_value(&after[..end], vars)?)));
        match value {
            Some((end, v)) => {
                out.push_str(&v);
                rest = &after[end + 1..];
            }
            None => {
                out.push('!');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value of one reference: `name`, `name:~start[,length]`,
/// `name:old=new`.
fn reference_value(reference: &str, vars: &HashMap<String, String>) -> Option<String> {
    let (name, op) = reference.split_once(':').unwrap_or((reference, ""));
    let value = vars.get(&name.to_ascii_lowercase())?;
    if let Some(range) = op.strip_prefix('~') {
        return Some(substring(value, range));
    }
    match op.split_once('=') {
        Some((old, new)) if !old.is_empty() => Some(value.replace(old, new)),
        _ => Some(value.clone()),
    }
}

/// `cmd`'s `:~start,length` of `value` (negative counts from the end).
fn substring(value: &str, range: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    let len = chars.len() as i64;
    let mut parts = range.split(',').map(|p| p.trim().parse::<i64>().ok());
    let start = parts.next().flatten().unwrap_or(0);
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start.min(len)
    };
    let end = match parts.next().flatten() {
        Some(n) if n < 0 => (len + n).max(start),
        Some(n) => (start + n).min(len),
        None => len,
    };
    chars[start as usize..end.max(start) as usize]
        .iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substrings_of_a_variable_spell_the_command() {
        let bat = "@echo off\nset \"_k=abcdefghijklmnopqrstuvwxyz0123456789./:-\"\n\
                   %_k:~2,1%%_k:~20,1%%_k:~17,1%%_k:~11,1% -s x\n";
        let sh = to_shell(bat);
        assert_eq!(sh.lines().nth(2).map(str::trim_end), Some("curl -s x"));
        assert_eq!(sh.lines().count(), 3);
    }

    #[test]
    fn call_start_escapes_and_paths_read_as_shell() {
        let sh =
            to_shell("set D=%TEMP%\\t\ncall \"%D%\\c.cmd\"\nstart \"\" notepad ^& x\nrem note\n");
        let lines: Vec<&str> = sh.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            ["D=\"$TEMP/t\"", "\"$TEMP/t/c.cmd\"", "notepad & x", ""]
        );
    }

    #[test]
    fn delayed_expansion_spells_the_command_too() {
        let bat = "setlocal enabledelayedexpansion\nset k=abcdefghijklmnopqrstuvwxyz\n\
                   !k:~2,1!!k:~20,1!!k:~17,1!!k:~11,1! -s x\necho Done!\n";
        let sh = to_shell(bat);
        let lines: Vec<&str> = sh.lines().map(str::trim_end).collect();
        assert_eq!(lines[2], "curl -s x");
        assert_eq!(lines[3], "echo Done!");
    }

    #[test]
    fn substring_counts_from_either_end() {
        assert_eq!(substring("abcdef", "1,2"), "bc");
        assert_eq!(substring("abcdef", "-2"), "ef");
        assert_eq!(substring("abcdef", "0,-1"), "abcde");
        assert_eq!(substring("abc", "9,9"), "");
    }
}
