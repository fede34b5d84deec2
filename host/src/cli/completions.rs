//! `skillhost completions bash|zsh|fish`: a completion script for the shell,
//! made from the same clap definition the binary parses with.

use std::process::ExitCode;

use clap::{Args, CommandFactory, ValueEnum};
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: CompletionShell,
}

/// The shells a script is made for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

impl From<CompletionShell> for Shell {
    fn from(s: CompletionShell) -> Shell {
        match s {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
        }
    }
}

/// The completion script for `shell`.
pub fn script(shell: CompletionShell) -> Vec<u8> {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(Shell::from(shell), &mut cmd, "skillhost", &mut out);
    out
}

pub fn run(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    super::print::out_own_bytes(&script(args.shell))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shell_gets_a_script_naming_the_subcommands() {
        for shell in [
            CompletionShell::Bash,
            CompletionShell::Zsh,
            CompletionShell::Fish,
        ] {
            let text = String::from_utf8(script(shell)).expect("utf-8");
            for sub in ["run", "skills", "grant", "runs", "mcp", "completions"] {
                assert!(text.contains(sub), "{shell:?} script lacks `{sub}`");
            }
            assert!(text.contains("max-steps"), "{shell:?} lacks options");
        }
    }
}
