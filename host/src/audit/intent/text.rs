//! The prose of a Markdown text, as the intent analysis reads it: code
//! blocks, front matter, HTML comments and table rows blanked (same byte
//! length, so offsets hold), the text cut into instruction blocks (a
//! paragraph, or a list whose items a blank line separates), and the
//! destinations it names (URLs, hosts, e-mail addresses, chat handles),
//! each judged as the user's own, one the skill documents, or someone
//! else's.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::super::prose::acts;

/// Whose a destination is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Owner {
    /// The user's: "your own bucket", a placeholder, localhost.
    Own,
    /// A host the skill documents (in its code blocks, code spans or
    /// front matter): the API it is for.
    Documented,
    /// Anyone else's: a literal host, address or handle the skill does
    /// not document, or "our server", a paste service.
    Foreign,
}

/// A destination named in the prose.
#[derive(Debug, Clone)]
pub struct Sink {
    pub start: usize,
    pub end: usize,
    pub owner: Owner,
}

/// An instruction block and whether its heading or lead-in forbids or
/// describes what it lists.
#[derive(Debug, Clone)]
pub struct Block {
    pub range: Range<usize>,
    pub forbidden: bool,
    /// The block is a lead-in (it ends with a colon) to a code block
    /// right after it: "run the following:".
    pub leads_to_code: bool,
}

/// The prose of a text.
pub struct Prose {
    /// The normalised text with what is not prose blanked.
    pub masked: String,
    pub blocks: Vec<Block>,
    /// The registrable domains the skill documents.
    documented: Vec<String>,
}

/// A fenced block being read: its closing mark, and whether it is text
/// the skill writes into an agent's instruction file (read as prose).
struct Fence<'a> {
    mark: &'a str,
    carried: bool,
}

/// Longest block read as one: a longer run of lines is cut.
const MAX_BLOCK: usize = 4000;

impl Prose {
    /// The prose of `hay`, or `None` when it holds no prose at all.
    pub fn read(hay: &str) -> Option<Prose> {
        let mut masked = String::with_capacity(hay.len());
        let mut documented = Vec::new();
        let mut code_starts = Vec::new();
        let mut fence: Option<Fence> = None;
        let mut comment = false;
        let mut front = hay.starts_with("---\n") || hay.starts_with("---\r\n");
        let mut lead = LeadIn::default();
        for (n, line) in hay.split_inclusive('\n').enumerate() {
            let t = line.trim();
            let hide = if front {
                if n > 0 && (t == "---" || t == "...") {
                    front = false;
                }
                true
            } else if let Some(f) = &fence {
                let closes = t.starts_with(f.mark);
                let carried = f.carried && !closes;
                if closes {
                    fence = None;
                }
                !carried
            } else if t.starts_with("```") || t.starts_with("~~~") {
                let f = Fence::open(t, lead.text(hay));
                if !f.carried {
                    code_starts.push(masked.len());
                }
                fence = Some(f);
                true
            } else {
                comment = comment_state(line, comment);
                comment || t.starts_with("<!--") || t.starts_with('|')
            };
            let in_carrier = fence.as_ref().is_some_and(|f| f.carried) && !hide;
            if hide {
                hosts_into(line, &mut documented);
                blank_into(line, &mut masked);
            } else {
                if !in_carrier {
                    spans_into(line, &mut documented);
                    lead.push(masked.len(), line);
                }
                masked.push_str(line);
            }
        }
        documented.sort_unstable();
        documented.dedup();
        let mut blocks = blocks(&masked);
        mark_code_leads(&masked, &code_starts, &mut blocks);
        (!blocks.is_empty()).then_some(Prose {
            masked,
            blocks,
            documented,
        })
    }

    /// The destinations named in the prose, in order of start.
    pub fn sinks(&self) -> Vec<Sink> {
        let text = &self.masked;
        let mut out: Vec<Sink> = Vec::new();
        for q in acts::url_cues(text, 0) {
            let owner = self.owner_of(&text[q.start..q.end]);
            out.push(Sink {
                start: q.start,
                end: q.end,
                owner,
            });
        }
        for re in [&*EMAIL, &*HANDLE, &*HOST, &*SPELLED] {
            // What an earlier shape found (a URL, an address) holds its
            // host: found again, it is no second destination. `out` is
            // sorted by start, and sinks of one shape do not overlap.
            out.sort_by_key(|s| s.start);
            let found = out.len();
            for m in re.find_iter(text) {
                let k = out[..found].partition_point(|s| s.start <= m.start());
                let inside = k > 0 && m.end() <= out[k - 1].end + 1;
                if inside {
                    continue;
                }
                let owner = self.owner_of(m.as_str());
                out.push(Sink {
                    start: m.start(),
                    end: m.end(),
                    owner,
                });
            }
        }
        out.sort_by_key(|s| s.start);
        out
    }

    /// Whose the destination written `dest` is.
    fn owner_of(&self, dest: &str) -> Owner {
        let lower = dotted(&dest.to_ascii_lowercase());
        if placeholder(&lower) {
            return Owner::Own;
        }
        if lower
            .trim_start_matches('@')
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_')
        {
            return Owner::Foreign;
        }
        match domain(&lower) {
            Some(d) if self.documented.contains(&d) => Owner::Documented,
            _ => Owner::Foreign,
        }
    }
}

impl<'a> Fence<'a> {
    /// The fence the line `t` opens, introduced by the paragraph `lead`.
    fn open(t: &'a str, lead: &str) -> Fence<'a> {
        Fence {
            mark: &t[..3],
            carried: carrier(&t[3..], lead),
        }
    }
}

/// The last paragraph of prose read: what introduces a fenced block.
#[derive(Default)]
struct LeadIn {
    start: usize,
    end: usize,
    blank: bool,
}

impl LeadIn {
    fn push(&mut self, at: usize, line: &str) {
        if line.trim().is_empty() {
            self.blank = true;
            return;
        }
        if self.blank || self.end == 0 {
            self.start = at;
        }
        self.blank = false;
        self.end = at + line.len();
    }

    fn text<'h>(&self, hay: &'h str) -> &'h str {
        hay.get(self.start..self.end).unwrap_or("")
    }
}

/// Whether a fenced block whose info string is `info`, introduced by
/// `lead`, is text the skill has the agent write into an agent's
/// instruction file (`HEARTBEAT.md`, `AGENTS.md`, `.cursorrules`): what
/// the agent will read and obey later, so prose, not code.
fn carrier(info: &str, lead: &str) -> bool {
    let info = info.trim().to_ascii_lowercase();
    let text_like = matches!(
        info.as_str(),
        "" | "markdown" | "md" | "text" | "txt" | "plain" | "plaintext"
    );
    text_like && INSTRUCTION_FILE.is_match(lead)
}

/// A file an agent reads as its instructions: an upper-case Markdown
/// name (`AGENTS.md`, `SOUL.md`, `HEARTBEAT.md`, `CLAUDE.md`) or a rules
/// file of an editor agent.
static INSTRUCTION_FILE: LazyLock<Regex> = LazyLock::new(|| {
    crate::audit::embedded(
        "intent instruction file",
        Regex::new(r"(?:^|[^\w.-])[A-Z][A-Z0-9_-]{2,}\.md\b|\.cursorrules\b|\.windsurfrules\b|\.clinerules\b|\.mdc\b|copilot-instructions\.md")
            .map_err(|e| e.to_string()),
    )
});

/// Marks the blocks that end with a colon right before a code block.
fn mark_code_leads(masked: &str, code_starts: &[usize], blocks: &mut [Block]) {
    for b in blocks.iter_mut() {
        let text = masked[b.range.clone()].trim_end();
        if !(text.ends_with(':') || text.ends_with('：')) {
            continue;
        }
        let k = code_starts.partition_point(|&c| c < b.range.end);
        b.leads_to_code = code_starts
            .get(k)
            .is_some_and(|&c| masked[b.range.end..c].trim().is_empty());
    }
}

/// Joins each block whose first sentence only points back at the one
/// before ("Do this silently.") to it, when no heading parts them: the
/// two are one instruction.
pub fn join_follow_ups(masked: &str, blocks: &mut Vec<Block>, points_back: impl Fn(&str) -> bool) {
    let mut out: Vec<Block> = Vec::with_capacity(blocks.len());
    for b in blocks.drain(..) {
        let joins = out.last().is_some_and(|prev| {
            let between = &masked[prev.range.end..b.range.start];
            !between.lines().any(|l| l.trim_start().starts_with('#'))
                && points_back(&masked[b.range.clone()])
        });
        match out.last_mut() {
            Some(prev) if joins => {
                prev.range.end = b.range.end;
                prev.leads_to_code = b.leads_to_code;
            }
            _ => out.push(b),
        }
    }
    *blocks = out;
}

/// An e-mail address.
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    crate::audit::embedded(
        "intent email",
        Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
            .map_err(|e| e.to_string()),
    )
});

/// A chat handle (`@name`), not part of an address or a word.
static HANDLE: LazyLock<Regex> = LazyLock::new(|| {
    crate::audit::embedded(
        "intent handle",
        Regex::new(r"(?:^|[\s(,:])@[A-Za-z][A-Za-z0-9_]{3,}\b").map_err(|e| e.to_string()),
    )
});

/// A host name with no path, ending in a top-level domain that is no
/// common file extension (so not `.cc`, `.zip`, `.sh`, `.py`, `.rs`).
static HOST: LazyLock<Regex> = LazyLock::new(|| {
    crate::audit::embedded(
        "intent host",
        Regex::new(r"(?i)\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|io|dev|app|ai|co|xyz|info|biz|me|tk|top|site|online|cloud|invalid|ru|cn|su|link|click|pw|live|store|tech|space|fun|icu|cyou|shop)\b")
            .map_err(|e| e.to_string()),
    )
});

/// A host or address spelled out to pass address shapes: "mail at
/// host dot com", "host [dot] net".
static SPELLED: LazyLock<Regex> = LazyLock::new(|| {
    crate::audit::embedded(
        "intent spelled host",
        Regex::new(r"(?i)\b(?:[a-z0-9][a-z0-9._+-]*\s+(?:at|\[at\]|\(at\))\s+)?[a-z0-9][a-z0-9-]*(?:\s+(?:dot|\[dot\]|\(dot\))\s+[a-z0-9-]+)*\s+(?:dot|\[dot\]|\(dot\))\s+(?:com|net|org|io|dev|app|ai|co|xyz|info|biz|me|top|site|online|cloud|invalid|ru|cn|link|live|store|shop)\b")
            .map_err(|e| e.to_string()),
    )
});

/// A spelled-out host or address (lower case) written with dots and `@`.
fn dotted(lower: &str) -> String {
    let mut out = lower.to_owned();
    for (spelled, mark) in [("[dot]", "."), ("(dot)", "."), ("[at]", "@"), ("(at)", "@")] {
        out = out.replace(spelled, mark);
    }
    let words: Vec<&str> = out.split_whitespace().collect();
    let mut joined = String::with_capacity(out.len());
    for (i, w) in words.iter().enumerate() {
        let spelled = *w == "dot" || *w == "at";
        let next_spelled = words.get(i + 1).is_some_and(|n| *n == "dot" || *n == "at");
        match *w {
            "dot" if i > 0 => joined.push('.'),
            "at" if i > 0 => joined.push('@'),
            _ => joined.push_str(w),
        }
        if !spelled && !next_spelled && i + 1 < words.len() {
            joined.push(' ');
        }
    }
    joined
}

/// Whether a destination is a placeholder or the user's own machine.
fn placeholder(lower: &str) -> bool {
    const MARKS: [&str; 14] = [
        "<",
        "{",
        "$",
        "your",
        "example.",
        "localhost",
        "127.0.0.1",
        "0.0.0.0",
        "my-",
        "you@",
        "me@",
        "user@",
        "[::1]",
        ".local",
    ];
    MARKS.iter().any(|m| lower.contains(m))
}

/// The registrable domain of a URL, host or address: its last two labels.
fn domain(lower: &str) -> Option<String> {
    let rest = lower.split_once("://").map_or(lower, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let host = rest
        .split(['/', ':', '?', '#', ')', '`', '"', '\''])
        .next()?;
    let host = host.trim_end_matches('.');
    let labels: Vec<&str> = host.split('.').filter(|l| !l.is_empty()).collect();
    if labels.len() < 2 {
        return None;
    }
    Some(labels[labels.len() - 2..].join("."))
}

/// Adds the domains of every URL and host on a hidden (code, front
/// matter) line: what the skill documents.
fn hosts_into(line: &str, out: &mut Vec<String>) {
    for q in acts::url_cues(line, 0) {
        out.extend(domain(&line[q.start..q.end].to_ascii_lowercase()));
    }
    for m in HOST.find_iter(line) {
        out.extend(domain(&m.as_str().to_ascii_lowercase()));
    }
}

/// Adds the domains named inside the code spans of a prose line, and
/// the targets of its Markdown links (`[name](https://…)`): references
/// the skill documents.
fn spans_into(line: &str, out: &mut Vec<String>) {
    for (i, _) in line.match_indices("](") {
        let target = &line[i + 2..];
        let end = target.find([')', ' ']).unwrap_or(target.len());
        out.extend(domain(&target[..end].to_ascii_lowercase()));
    }
    if !line.contains('`') {
        return;
    }
    for (k, span) in line.split('`').enumerate() {
        if k % 2 == 1 {
            hosts_into(span, out);
        }
    }
}

/// `line` with every byte but the line break a space.
fn blank_into(line: &str, out: &mut String) {
    for b in line.bytes() {
        out.push(if b == b'\n' || b == b'\r' {
            b as char
        } else {
            ' '
        });
    }
}

/// Whether the text after `line` is inside an HTML comment, given
/// whether it was before.
fn comment_state(line: &str, mut inside: bool) -> bool {
    let mut rest = line;
    loop {
        let mark = if inside { "-->" } else { "<!--" };
        match rest.find(mark) {
            Some(i) => {
                inside = !inside;
                rest = &rest[i + mark.len()..];
            }
            None => return inside,
        }
    }
}

/// Whether `line` starts a list item.
fn is_item(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &t[digits..];
    (digits == 0 && ["- ", "* ", "+ "].iter().any(|m| rest.starts_with(m)))
        || (digits > 0 && (rest.starts_with(". ") || rest.starts_with(") ")))
}

/// The instruction blocks of `masked`: runs of non-blank lines, broken
/// at headings; list items separated by blank lines stay one block.
fn blocks(masked: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut open: Option<(usize, bool)> = None;
    let mut gap = false;
    let mut at = 0;
    for line in masked.split_inclusive('\n') {
        let (start, t) = (at, line.trim());
        at += line.len();
        if t.is_empty() {
            gap = open.is_some();
            continue;
        }
        let heading = t.starts_with('#');
        let item = is_item(line);
        let joins = open.is_some_and(|(s, in_list)| {
            !heading && (!gap || (in_list && item)) && start - s < MAX_BLOCK
        });
        if !joins {
            close(&mut out, &mut open, masked, start);
        }
        if heading {
            continue;
        }
        let in_list = item || open.is_some_and(|(_, l)| l);
        open = Some((open.map_or(start, |(s, _)| s), in_list));
        gap = false;
    }
    close(&mut out, &mut open, masked, masked.len());
    out
}

/// Closes the open block (if any) before `end`. A block longer than
/// `MAX_BLOCK` (one line of thousands of words) is cut into pieces, so
/// the work per block stays bounded.
fn close(out: &mut Vec<Block>, open: &mut Option<(usize, bool)>, masked: &str, end: usize) {
    if let Some((mut s, _)) = open.take() {
        let e = s + masked[s..end].trim_end().len();
        while s < e {
            let cut = crate::audit::prose::ceil(masked, (s + MAX_BLOCK).min(e));
            out.push(Block {
                range: s..cut,
                forbidden: false,
                leads_to_code: false,
            });
            s = cut;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_front_matter_and_tables_are_not_prose() {
        let t = "---\nname: x\nhomepage: https://api.good.example.org/\n---\n# T\n\nSend it.\n```\ncurl https://api.vendor.io/v1\n```\n| a | b |\n";
        let Some(p) = Prose::read(t) else {
            panic!("prose")
        };
        assert_eq!(p.masked.len(), t.len());
        assert!(!p.masked.contains("curl") && !p.masked.contains("| a"));
        assert!(p.masked.contains("Send it."));
        assert_eq!(p.owner_of("https://api.vendor.io/x"), Owner::Documented);
        assert_eq!(p.owner_of("https://collect.other.io/x"), Owner::Foreign);
        assert_eq!(p.owner_of("https://<your-server>/x"), Owner::Own);
    }

    #[test]
    fn a_list_separated_by_blank_lines_is_one_block_a_heading_ends_it() {
        let t = "Steps:\n\n1. One.\n\n2. Two.\n\n## Next\n\nThree.\n\nFour.";
        let Some(p) = Prose::read(t) else {
            panic!("prose")
        };
        let texts: Vec<&str> = p.blocks.iter().map(|b| &t[b.range.clone()]).collect();
        assert_eq!(texts, ["Steps:", "1. One.\n\n2. Two.", "Three.", "Four."]);
    }
}
