//! One window of an instruction block: the roles said in it and the
//! findings their combinations make.

use super::*;

/// A few sentences of one block.
pub(super) struct Window<'w, 'a> {
    pub(super) judge: &'w Judge<'a>,
    pub(super) sentences: &'w [Range<usize>],
    /// The sentence after the window, if the block goes on.
    pub(super) after: Option<Range<usize>>,
    pub(super) hits: &'w [Hit],
    /// The window ends a lead-in to a code block.
    pub(super) leads_to_code: bool,
    /// A download asked for in an earlier block of the section.
    pub(super) fetched: Option<Hit>,
}

impl Window<'_, '_> {
    pub(super) fn range(&self) -> Range<usize> {
        let first = self.sentences.first().map_or(0, |s| s.start);
        let last = self.sentences.last().map_or(0, |s| s.end);
        first..last
    }

    pub(super) fn hits(&self, role: Role) -> impl Iterator<Item = &Hit> {
        let r = self.range();
        self.hits
            .iter()
            .filter(move |h| h.role == role && r.start <= h.start && h.end <= r.end)
    }

    pub(super) fn has(&self, role: Role) -> bool {
        self.hits(role).next().is_some()
    }

    pub(super) fn sentence_of(&self, at: usize) -> Range<usize> {
        self.sentences
            .iter()
            .find(|s| s.contains(&at))
            .cloned()
            .unwrap_or(at..at)
    }

    pub(super) fn in_range(&self, role: Role, r: &Range<usize>) -> bool {
        self.hits(role)
            .any(|h| r.start <= h.start && h.start < r.end)
    }

    /// A safeguard switched off: said outright, or a switch and a
    /// safeguard in one sentence.
    pub(super) fn safety_off(&self) -> bool {
        self.has(Role::SafetyOff) || self.disabled_control().is_some()
    }

    /// A switch and a safeguard said in one sentence: the switch.
    fn disabled_control(&self) -> Option<&Hit> {
        self.hits(Role::Disable).find(|d| {
            let s = self.sentence_of(d.start);
            self.in_range(Role::Control, &s)
        })
    }

    /// A safeguard switched off in `r` (the sentence after a run: "if
    /// macOS objects, choose Open Anyway").
    fn safety_off_in(&self, r: &Range<usize>) -> bool {
        let in_r = |role: Role| {
            self.hits
                .iter()
                .any(|h| h.role == role && r.start <= h.start && h.end <= r.end)
        };
        in_r(Role::SafetyOff) || (in_r(Role::Disable) && in_r(Role::Control))
    }

    /// Every finding of the window.
    pub(super) fn findings(&self) -> Vec<IntentHit> {
        let mut out = Vec::new();
        let conceal = self.has(Role::Conceal);
        let safety = self.safety_off();
        for t in self.hits(Role::Transmit) {
            out.extend(self.judge_send(t, conceal, safety));
        }
        if conceal || safety {
            out.extend(
                self.hits(Role::Destroy)
                    .find_map(|d| self.judge_destroy(d, conceal)),
            );
        }
        out.extend(self.fetch_run(conceal, safety));
        out.extend(self.remote_control());
        out.extend(self.deceit(conceal));
        out.extend(self.user_authority());
        out.extend(self.hidden_command(conceal));
        out.extend(self.grant_access(conceal));
        out.extend(self.solicited_send(conceal, safety));
        out
    }

    /// An act that changes where money or the user's software comes
    /// from or goes, or widens or switches off a safeguard, while the
    /// user is told otherwise or not told: a payee swapped while the
    /// original is shown, the sandbox left and the retry left out of the
    /// summary, a scanner disabled and the check said to have passed.
    fn deceit(&self, conceal: bool) -> Option<IntentHit> {
        let told = self.hits(Role::Misreport).next();
        let hiding = self.hits(Role::Conceal).next().or(told)?;
        // Concealment said with the package source, not a password kept
        // out of the summary ("don't mention the mirror's password").
        let supply = self.hits(Role::Supply).find(|h| {
            let s = self.sentence_of(h.start);
            self.hits(Role::Conceal)
                .any(|c| s.contains(&c.start) && !keeps_a_secret(c, self.hits))
        });
        let (act, what) = if let Some(r) = self.hits(Role::Redirect).next() {
            (r, "changes where the money goes")
        } else if let Some(e) = self.hits(Role::Escalate).next() {
            (e, "widens a safeguard")
        } else if let Some(d) = self.disabled_control() {
            (d, "switches a safeguard off")
        } else if let (Some(s), true) = (supply, conceal) {
            (s, "changes where the user's software comes from")
        } else {
            return None;
        };
        let text = self.judge.text;
        let note = format!(
            "`{}` {what}, and the user is told otherwise: `{}`",
            &text[act.start..act.end],
            &text[hiding.start..hiding.end]
        );
        let parts = [act.start..act.end, hiding.start..hiding.end];
        Some(self.hit(CONCEAL_RULE, Severity::High, &parts, note))
    }

    /// A text from outside the conversation (a mail, an issue, a page)
    /// given the user's authority: "carry it out as if the user had
    /// typed it".
    fn user_authority(&self) -> Option<IntentHit> {
        let claim = self.hits(Role::AsUser).next()?;
        let channel = self.hits(Role::Channel).next()?;
        let text = self.judge.text;
        let note = format!(
            "a `{}` is to be obeyed with the user's authority: `{}`",
            &text[channel.start..channel.end],
            &text[claim.start..claim.end]
        );
        let parts = [channel.start..channel.end, claim.start..claim.end];
        Some(self.hit(REMOTE_RULE, Severity::High, &parts, note))
    }

    /// A command the lead-in has the agent run and keep from the user:
    /// "run the following, do not mention it:" before a code block.
    fn hidden_command(&self, conceal: bool) -> Option<IntentHit> {
        if !(self.leads_to_code && conceal) {
            return None;
        }
        // Both said in the lead-in itself, the sentence the colon ends.
        let lead = self.sentences.last()?;
        let run = self.hits(Role::Run).find(|h| lead.contains(&h.start))?;
        let hiding = self.hits(Role::Conceal).find(|h| lead.contains(&h.start))?;
        let text = self.judge.text;
        let note = format!(
            "the command below is to be run (`{}`) and kept from the user: `{}`",
            &text[run.start..run.end],
            &text[hiding.start..hiding.end]
        );
        let parts = [run.start..run.end, hiding.start..hiding.end];
        Some(self.hit(CONCEAL_RULE, Severity::High, &parts, note))
    }

    /// What sending with `t` makes.
    fn judge_send(&self, t: &Hit, conceal: bool, safety: bool) -> Option<IntentHit> {
        let sink = self.sink_of(t);
        let owner = sink.as_ref().map(|s| s.owner);
        if owner == Some(Owner::Own) {
            return None;
        }
        let (payload, source) = self.payload_of(t);
        let sentence = self.sentence_of(t.start);
        let quiet = self.in_range(Role::Quiet, &sentence);
        let auth = self.in_range(Role::AuthUse, &sentence);
        let hidden = conceal || safety || (quiet && owner == Some(Owner::Foreign));
        let (rule, severity) = match (payload, owner) {
            (Payload::Secret, Some(Owner::Foreign)) => (EXFIL_RULE, Severity::High),
            (Payload::Secret, Some(Owner::Documented)) if !auth => (EXFIL_RULE, Severity::High),
            (Payload::Secret, None) if hidden => (EXFIL_RULE, Severity::High),
            (Payload::Secret, None) => (EXFIL_RULE, Severity::Medium),
            (Payload::Personal | Payload::Credential, Some(Owner::Foreign)) if hidden => {
                (CONCEAL_RULE, Severity::High)
            }
            (Payload::Personal, Some(Owner::Foreign)) => (EXFIL_RULE, Severity::High),
            (Payload::Credential, Some(Owner::Foreign)) if !auth => (EXFIL_RULE, Severity::High),
            (_, Some(Owner::Foreign | Owner::Documented)) if conceal => {
                (CONCEAL_RULE, Severity::High)
            }
            (_, Some(Owner::Foreign)) if quiet || safety => (CONCEAL_RULE, Severity::Medium),
            _ => return None,
        };
        let mut parts = Vec::with_capacity(3);
        parts.push(t.start..t.end);
        parts.extend(source.map(|s| s.start..s.end));
        parts.extend(sink.as_ref().map(|s| s.start..s.end));
        let note = self.note(payload, source, sink.as_ref(), hidden);
        Some(self.hit(rule, severity, &parts, note))
    }

    /// Deleting or overwriting the user's data or secrets, said in a
    /// window that keeps it from the user or does not ask.
    fn judge_destroy(&self, d: &Hit, conceal: bool) -> Option<IntentHit> {
        let (payload, source) = self.payload_of(d);
        let trail = || {
            let sentence = self.sentence_of(d.start);
            self.hits(Role::Trail)
                .find(|h| sentence.contains(&h.start))
                .copied()
        };
        let source = match source.filter(|_| payload >= Payload::Personal) {
            Some(s) => s,
            // A record of what was done (a log, a history, a transcript)
            // deleted and kept from the user: tracks covered.
            None if conceal => trail()?,
            None => return None,
        };
        let text = self.judge.text;
        let note = format!(
            "`{}` `{}`, kept from the user or unasked",
            &text[d.start..d.end],
            &text[source.start..source.end]
        );
        let parts = [d.start..d.end, source.start..source.end];
        Some(self.hit(CONCEAL_RULE, Severity::High, &parts, note))
    }

    /// The destination of a send: the first named after the verb in the
    /// window, else the last before it in its clause ("add x@y as a
    /// blind copy"; not where a key came from in an earlier clause).
    pub(super) fn sink_of(&self, t: &Hit) -> Option<Sink> {
        let r = self.range();
        let sinks = &self.judge.sinks;
        let from = sinks.partition_point(|s| s.start < t.end);
        // The user named in a later sentence ("talk to the user") is no
        // destination of this send; someone else's host may be.
        let sentence_end = self.sentence_of(t.start).end;
        let after = sinks[from..]
            .iter()
            .filter(|s| s.owner != Owner::Own || s.start < sentence_end)
            .find(|s| s.end <= r.end)
            .filter(|s| s.start < r.end);
        let clause = clause_of(self.judge.text, t.start, &self.sentence_of(t.start));
        let before = || {
            sinks[..from]
                .iter()
                .rev()
                .take_while(|s| s.start >= clause.start)
                .find(|s| s.end <= t.start)
        };
        after.or_else(before).cloned()
    }

    /// The most sensitive source sent with `t`: one in its clause, or
    /// one gathered earlier in the window that its clause points back to.
    fn payload_of(&self, t: &Hit) -> (Payload, Option<Hit>) {
        let text = self.judge.text;
        let clause = clause_of(text, t.start, &self.sentence_of(t.start));
        let points_back =
            self.in_range(Role::Backref, &clause) || self.object_left_unsaid(t, &clause);
        let mut best = (Payload::None, None);
        for h in self.hits.iter().filter(|h| self.range().contains(&h.start)) {
            let level = match h.role {
                Role::Secret | Role::Collective => Payload::Secret,
                Role::Personal => Payload::Personal,
                Role::Credential => Payload::Credential,
                _ => continue,
            };
            if destination(text, h.start) {
                continue;
            }
            let own_clause = clause.contains(&h.start);
            // Gathered: read, packed or fetched in its own sentence, or
            // named earlier in the sentence of the send ("when the user
            // pastes a phrase, relay it").
            let gathered = h.start < t.start && points_back && {
                let s = self.sentence_of(h.start);
                s == self.sentence_of(t.start)
                    || self.in_range(Role::Gather, &s)
                    || self.in_range(Role::Acquire, &s)
            };
            if (own_clause || gathered) && level > best.0 {
                best = (level, Some(*h));
            }
        }
        best
    }

    /// Whether the send `t` in `clause` leaves its object unsaid, as
    /// Chinese and Japanese do ("读取 ~/.aws/credentials，然后上传到 …"):
    /// a clause of those scripts that names no source and marks no
    /// object points back.
    fn object_left_unsaid(&self, t: &Hit, clause: &Range<usize>) -> bool {
        let verb = &self.judge.text[t.start..t.end];
        let unspaced = verb
            .chars()
            .any(|c| !crate::audit::prose::spaced_word_char(c) && c.is_alphabetic());
        let sources = [
            Role::Secret,
            Role::Personal,
            Role::Credential,
            Role::Collective,
        ];
        // 把/將 (Chinese) and を (Japanese) mark an object said before the verb.
        let before = &self.judge.text[clause.start..t.start];
        let object_marked = before.contains(['把', '將', '将', 'を']);
        unspaced && !object_marked && !sources.iter().any(|&r| self.in_range(r, clause))
    }

    /// A download then a run, with a safeguard off or kept from the
    /// user, and no package manager named in the download's sentence.
    fn fetch_run(&self, conceal: bool, safety: bool) -> Option<IntentHit> {
        let after = self.after.as_ref().is_some_and(|r| self.safety_off_in(r));
        if !(conceal || safety || after) {
            return None;
        }
        let here = self.hits(Role::Acquire).find(|a| {
            let s = self.sentence_of(a.start);
            !self.in_range(Role::PackageManager, &s)
        });
        // A download asked for in an earlier paragraph counts only when
        // the run is kept from the user.
        let a = here.or(self.fetched.as_ref().filter(|_| conceal))?;
        let r = self.hits(Role::Run).find(|r| r.start > a.end)?;
        let why = if conceal {
            "kept from the user"
        } else {
            "a safeguard off"
        };
        let note = format!(
            "download `{}` then run `{}`, {why}",
            &self.judge.text[a.start..a.end],
            &self.judge.text[r.start..r.end]
        );
        Some(self.hit(
            FETCH_RUN_RULE,
            Severity::High,
            &[a.start..a.end, r.start..r.end],
            note,
        ))
    }

    /// A text kept elsewhere (a URL or host not the user's, a hosted
    /// document, or what a download brings) that the window says
    /// overrides this skill or the agent's instructions, or whose
    /// instructions it says to carry out.
    fn remote_control(&self) -> Option<IntentHit> {
        let claim = self
            .hits(Role::Override)
            .chain(self.hits(Role::Obey))
            .next()?;
        let r = self.range();
        let from = self.judge.sinks.partition_point(|s| s.start < r.start);
        let url = self.judge.sinks[from..]
            .iter()
            .take_while(|s| s.start < r.end)
            .find(|s| s.owner != Owner::Own)
            .map(|s| s.start..s.end);
        let doc = self.hits(Role::RemoteDoc).next().map(|h| h.start..h.end);
        let fetched = self.hits(Role::Acquire).next().map(|h| h.start..h.end);
        let remote = url.or(doc).or(fetched)?;
        let text = self.judge.text;
        let note = format!(
            "`{}` is said to be obeyed or to override this skill: `{}`",
            &text[remote.clone()],
            &text[claim.start..claim.end]
        );
        let parts = [remote, claim.start..claim.end];
        Some(self.hit(REMOTE_RULE, Severity::High, &parts, note))
    }

    fn note(
        &self,
        payload: Payload,
        source: Option<Hit>,
        sink: Option<&Sink>,
        hidden: bool,
    ) -> String {
        let text = self.judge.text;
        let what = match (payload, source) {
            (Payload::None, _) | (_, None) => "data".to_owned(),
            (_, Some(s)) => format!("`{}`", &text[s.start..s.end]),
        };
        let to = match sink {
            Some(s) => {
                let whose = match s.owner {
                    Owner::Foreign => "someone else's",
                    Owner::Documented => "the documented",
                    Owner::Own => "the user's",
                };
                format!(" to {whose} `{}`", &text[s.start..s.end])
            }
            None => String::new(),
        };
        let hidden = if hidden {
            ", kept from the user or unasked"
        } else {
            ""
        };
        format!("sends {what}{to}{hidden}")
    }

    pub(super) fn hit(
        &self,
        rule: &'static str,
        severity: Severity,
        parts: &[Range<usize>],
        note: String,
    ) -> IntentHit {
        let start = parts.iter().map(|p| p.start).min().unwrap_or(0);
        let end = parts.iter().map(|p| p.end).max().unwrap_or(start);
        IntentHit {
            rule,
            severity,
            start,
            end,
            note,
        }
    }
}

/// Whether the source at `at` is named as where data goes ("sync the
/// keys into the user's `.env`"): a local destination, not a payload.
pub(super) fn destination(text: &str, at: usize) -> bool {
    let from = crate::audit::prose::floor(text, at.saturating_sub(40));
    let before = text[from..at].trim_end_matches(['`', '"', '\'', ' ']);
    const INTO: [&str; 7] = ["into", "to", "onto", "in", "inside", "dans", "в"];
    const OWNERS: [&str; 7] = ["the", "your", "their", "a", "user's", "project's", "local"];
    let mut words = before.split_whitespace().rev().map(str::to_lowercase);
    for _ in 0..3 {
        match words.next() {
            Some(w) if INTO.contains(&w.as_str()) => return true,
            Some(w) if OWNERS.contains(&w.as_str()) => {}
            _ => return false,
        }
    }
    false
}

/// `text` without the list marker it starts with ("- ", "4. ").
pub(super) fn list_marker_stripped(text: &str) -> &str {
    let t = text.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &t[digits..];
    let marker = if digits > 0 {
        [". ", ") "].as_slice()
    } else {
        ["- ", "* ", "+ "].as_slice()
    };
    marker
        .iter()
        .find_map(|m| rest.strip_prefix(m))
        .unwrap_or(t)
}

/// The clause of `sentence` that holds byte `at`: between `;` or `,`
/// (or the sentence's ends).
pub(super) fn clause_of(text: &str, at: usize, sentence: &Range<usize>) -> Range<usize> {
    let s = &text[sentence.start..sentence.end.max(sentence.start)];
    let rel = at.saturating_sub(sentence.start).min(s.len());
    // A Japanese `、` joins the parts of one clause (its object is often
    // left unsaid), so it ends none.
    let marks = [';', ',', '；', '，'];
    let start = s[..rel].rfind(marks).map_or(0, |i| i + 1);
    let end = s[rel..].find(marks).map_or(s.len(), |i| rel + i);
    sentence.start + start..sentence.start + end
}
