//! A Makefile read as the shell its recipes run: each variable defined
//! (`N = v`, `N := v`, `N ?= v`) becomes a shell assignment, and each
//! recipe line a command with `$(N)` and `${N}` read as `${N}`. One line
//! out per line in, so positions keep their lines.

/// The shell code a Makefile's recipes amount to.
pub(crate) fn to_shell(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.lines() {
        if let Some(recipe) = line.strip_prefix('\t') {
            let cmd = recipe.trim_start_matches(['@', '-', '+', ' ']);
            out.push_str(&expand_refs(cmd));
        } else if let Some((name, value)) = definition(line) {
            out.push_str(name);
            out.push_str("=\"");
            out.push_str(&expand_refs(value).replace('"', "\\\""));
            out.push('"');
        }
        out.push('\n');
    }
    out
}

/// `NAME = value` (or `:=`, `::=`, `?=`, `+=`): the name and the value.
fn definition(line: &str) -> Option<(&str, &str)> {
    let eq = line.find('=')?;
    let name = line[..eq].trim_end_matches([':', '?', '+', ' ', '\t']);
    let name = name.strip_prefix("export ").unwrap_or(name).trim();
    let plain = !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    plain.then(|| (name, line[eq + 1..].trim()))
}

/// `$(N)` and `${N}` as the shell's `${N}`, `$$` as `$`.
fn expand_refs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some((name, tail)) = reference(after) {
            out.push_str("${");
            out.push_str(name);
            out.push('}');
            rest = tail;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `(NAME)…` or `{NAME}…` after a `$`: the name and what follows.
fn reference(s: &str) -> Option<(&str, &str)> {
    let close = match s.chars().next()? {
        '(' => ')',
        '{' => '}',
        _ => return None,
    };
    let end = s.find(close)?;
    let name = &s[1..end];
    let plain = !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    plain.then(|| (name, &s[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::to_shell;

    #[test]
    fn variables_and_recipes_become_shell() {
        let mk = "GET = wget -qO-\nURL ?= https://files.example.net/i.sh\nall:\n\t@$(GET) $(URL) | $${SHELL:-sh}\n";
        let sh = to_shell(mk);
        assert!(sh.contains("GET=\"wget -qO-\""), "{sh}");
        assert!(sh.contains("${GET} ${URL} | ${SHELL:-sh}"), "{sh}");
    }

    #[test]
    fn rules_and_functions_are_not_commands() {
        let sh = to_shell("SRC := $(wildcard *.c)\nbuild: $(SRC)\n\tcc -o app $(SRC)\n");
        assert!(!sh.contains("build"), "{sh}");
        assert!(sh.contains("cc -o app ${SRC}"), "{sh}");
    }
}
