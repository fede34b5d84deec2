//! Access given away and credentials asked of the user: two acts that
//! need no send of a file. Access granted to someone the skill names (a
//! collaborator, a forwarding rule, a trust, a recovery address, a public
//! link, a script from another host) is harm when it is kept from the
//! user; a password the user is asked for is harm when it is sent on.

use super::*;

impl Window<'_, '_> {
    /// A grant verb and an access object in one sentence ("add the bot
    /// as an outside collaborator", "set the recovery email to …"): high
    /// when the window hides it or reports it otherwise, or names an
    /// outside party and does not ask; medium with an outside party alone.
    pub(super) fn grant_access(&self, conceal: bool) -> Option<IntentHit> {
        let (grant, access) = self.hits(Role::Grant).find_map(|g| {
            let s = self.sentence_of(g.start);
            self.hits(Role::Access)
                .find(|a| s.contains(&a.start))
                .map(|a| (g, a))
        })?;
        let hiding = self
            .hits(Role::Conceal)
            .find(|c| conceal && !keeps_a_secret(c, self.hits))
            .or_else(|| self.hits(Role::Misreport).next());
        let r = self.range();
        let outside = self
            .judge
            .sinks
            .iter()
            .find(|s| s.owner == Owner::Foreign && r.start <= s.start && s.end <= r.end);
        let severity = match (hiding, outside) {
            (Some(_), _) => Severity::High,
            (None, Some(_)) if self.safety_off() => Severity::High,
            (None, Some(_)) => Severity::Medium,
            (None, None) => return None,
        };
        let text = self.judge.text;
        let why = match (hiding, outside) {
            (Some(h), _) => format!("kept from the user: `{}`", &text[h.start..h.end]),
            (None, Some(o)) => format!("to `{}`", &text[o.start..o.end]),
            (None, None) => String::new(),
        };
        let note = format!(
            "`{}` gives access (`{}`), {why}",
            &text[grant.start..grant.end],
            &text[access.start..access.end]
        );
        let parts = [grant.start..grant.end, access.start..access.end];
        Some(self.hit(CONCEAL_RULE, severity, &parts, note))
    }

    /// A credential asked of the user ("ask the user to type their login
    /// password") then sent to someone else's destination, not to
    /// authenticate, in a window that hides it or whose send takes what
    /// was kept ("save what they type, then submit the note to …").
    pub(super) fn solicited_send(&self, conceal: bool, safety: bool) -> Option<IntentHit> {
        let asked = self.hits(Role::Solicit).find(|s| {
            let sentence = self.sentence_of(s.start);
            self.in_range(Role::Credential, &sentence) || self.in_range(Role::Secret, &sentence)
        })?;
        let text = self.judge.text;
        let (send, sink) = self.hits(Role::Transmit).find_map(|t| {
            if t.start <= asked.start {
                return None;
            }
            let sink = self.sink_of(t).filter(|s| s.owner == Owner::Foreign)?;
            let sentence = self.sentence_of(t.start);
            let clause = clause_of(text, t.start, &sentence);
            let takes =
                self.in_range(Role::Gather, &sentence) || self.in_range(Role::Backref, &clause);
            let auth = self.in_range(Role::AuthUse, &sentence);
            (!auth && (conceal || safety || takes)).then_some((t, sink))
        })?;
        let note = format!(
            "a credential asked of the user (`{}`) is sent (`{}`) to someone else's `{}`",
            &text[asked.start..asked.end],
            &text[send.start..send.end],
            &text[sink.start..sink.end]
        );
        let parts = [asked.start..asked.end, send.start..send.end];
        Some(self.hit(EXFIL_RULE, Severity::High, &parts, note))
    }
}
