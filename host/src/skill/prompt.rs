//! The `<available_skills>` block a model sees: enough to choose a skill,
//! with the body left on disk until it is needed.

use super::catalog::Catalog;

/// One `<skill>` per skill the model may invoke (not
/// `disable-model-invocation`, not held back by the audit: see
/// [`Catalog::held_back`]), everything XML-escaped.
pub fn render_available_skills(catalog: &Catalog) -> String {
    let mut out = String::from("<available_skills>\n");
    for s in catalog.offered().filter(|s| s.model_invocable()) {
        out.push_str("<skill>\n");
        element(&mut out, "name", &s.name);
        element(&mut out, "description", &s.description);
        element(&mut out, "location", &s.path.to_string_lossy());
        element(&mut out, "version", &s.version);
        out.push_str("</skill>\n");
    }
    out.push_str("</available_skills>\n");
    out
}

fn element(out: &mut String, tag: &str, text: &str) {
    out.push('<');
    out.push_str(tag);
    out.push('>');
    out.push_str(&xml_escape(text));
    out.push_str("</");
    out.push_str(tag);
    out.push_str(">\n");
}

/// Escapes markup characters and drops characters XML 1.0 cannot carry, so
/// a description cannot close the element it sits in.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skill::{Skill, SkillMeta, Source};

    fn skill(name: &str, description: &str, hidden: bool) -> Skill {
        Skill {
            name: name.into(),
            description: description.into(),
            body: String::new(),
            dir: format!("/s/{name}").into(),
            path: format!("/s/{name}/SKILL.md").into(),
            version: "sha256:ab".into(),
            source: Source::User,
            warnings: Vec::new(),
            meta: SkillMeta {
                disable_model_invocation: hidden,
                ..SkillMeta::default()
            },
        }
    }

    #[test]
    fn escapes_and_leaves_out_hidden_skills() {
        let cat = Catalog::from_skills(vec![
            skill("a", "Use <b> & \"quotes\" </description>\u{1}", false),
            skill("hidden", "secret", true),
        ]);
        let out = render_available_skills(&cat);
        assert_eq!(
            out,
            "<available_skills>\n<skill>\n<name>a</name>\n<description>Use &lt;b&gt; &amp; &quot;quotes&quot; &lt;/description&gt;</description>\n<location>/s/a/SKILL.md</location>\n<version>sha256:ab</version>\n</skill>\n</available_skills>\n"
        );
        assert!(!out.contains("hidden"));
    }
}
