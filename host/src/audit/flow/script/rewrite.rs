//! Spellings that hide a callee, undone before the flow reads a Python or
//! JavaScript script: the names a reader would see once the constants are
//! evaluated.
//!
//! - adjacent string literals joined by `+` (or by nothing, in Python) are
//!   one literal: `"ex" + "ec"` is `"exec"`;
//! - `getattr(X, "name")` and `Reflect.get(X, "name")` are `X.name`;
//! - the builtins namespace (`__builtins__`, `builtins`, `globals()`,
//!   `globalThis`, `window`, …) indexed or dotted is the name itself:
//!   `__builtins__["exec"]` is `exec`;
//! - a bracketed callee of names joined by `or`, `||` or `??` is its first
//!   name: `(exec or eval)(src)` is `exec(src)`;
//! - a list of literals joined by an empty literal is one literal
//!   (`["exec", "Sync"].join("")`, `"".join(["ht", "tp://"])`), and a
//!   literal subscript that is called is a method call: `cp["execSync"](c)`
//!   is `cp.execSync(c)`.

use super::super::Lang;
use crate::audit::flow::tokens::{Kind, Token};

/// Names whose members are the builtins themselves.
const NAMESPACES: [&str; 9] = [
    "__builtins__",
    "builtins",
    "globals",
    "locals",
    "vars",
    "globalThis",
    "window",
    "global",
    "__dict__",
];

/// `tokens` with the spellings above undone.
pub(super) fn rewrite(lang: Lang, tokens: Vec<Token>) -> Vec<Token> {
    if !matches!(lang, Lang::Python | Lang::JavaScript) {
        return tokens;
    }
    let mut toks = join_literals(lang, join_lists(tokens));
    // Each pass can expose the next (`getattr(__builtins__, "ex" + "ec")`);
    // the count bounds the work on a hostile file.
    for _ in 0..4 {
        let before = toks.len();
        toks = attribute_lookups(toks);
        toks = namespace_members(toks);
        toks = fallback_callees(toks);
        toks = called_subscripts(toks);
        if toks.len() == before {
            break;
        }
    }
    toks
}

fn is(t: Option<&Token>, text: &str) -> bool {
    t.is_some_and(|t| t.kind == Kind::Punct && t.text == text)
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn ident(text: &str, at: usize) -> Token {
    Token {
        kind: Kind::Ident,
        at,
        text: text.to_owned(),
    }
}

/// `"a" + "b"` (and Python's `"a" "b"`) as one literal.
fn join_literals(lang: Lang, tokens: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        let last_is_str = out.last().is_some_and(|l| l.kind == Kind::Str);
        if t.kind == Kind::Str && last_is_str && lang == Lang::Python {
            if let Some(l) = out.last_mut() {
                l.text.push_str(&t.text);
            }
        } else if last_is_str
            && is(Some(t), "+")
            && tokens.get(i + 1).is_some_and(|n| n.kind == Kind::Str)
        {
            if let Some(l) = out.last_mut() {
                l.text.push_str(&tokens[i + 1].text);
            }
            i += 1;
        } else {
            out.push(t.clone());
        }
        i += 1;
    }
    out
}

/// `[L, …].join("")` and `"".join([L, …])` / `"".join((L, …))` of string
/// literals `L`: one literal.
fn join_lists(tokens: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if let Some((joined, next)) = joined_list(&tokens, i) {
            out.push(joined);
            i = next;
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    out
}

/// The literal a joined list starting at `i` makes, and the index after it.
fn joined_list(toks: &[Token], i: usize) -> Option<(Token, usize)> {
    let empty = |j: usize| {
        toks.get(j)
            .is_some_and(|t| t.kind == Kind::Str && t.text.is_empty())
    };
    // Python: "" . join ( [ … ] )
    if empty(i) && is(toks.get(i + 1), ".") && toks.get(i + 2).is_some_and(|t| t.text == "join") {
        let open = i + 3;
        let (text, after) = literal_list(toks, open + 1)?;
        return is(toks.get(after), ")").then(|| (literal(text, toks[i].at), after + 1));
    }
    // JavaScript: [ … ] . join ( "" )
    let (text, after) = literal_list(toks, i)?;
    let join = is(toks.get(after), ".")
        && toks.get(after + 1).is_some_and(|t| t.text == "join")
        && is(toks.get(after + 2), "(")
        && empty(after + 3)
        && is(toks.get(after + 4), ")");
    join.then(|| (literal(text, toks[i].at), after + 5))
}

/// The literals of `[L, L, …]` or `(L, L, …)` at `open`, joined, and the
/// index after its closing bracket.
fn literal_list(toks: &[Token], open: usize) -> Option<(String, usize)> {
    let close = match toks.get(open)?.text.as_str() {
        "[" => "]",
        "(" => ")",
        _ => return None,
    };
    let mut text = String::new();
    let mut j = open + 1;
    loop {
        let t = toks.get(j)?;
        if t.kind != Kind::Str {
            return None;
        }
        text.push_str(&t.text);
        j += 1;
        if is(toks.get(j), ",") {
            j += 1;
        }
        if is(toks.get(j), close) {
            return (j > open + 1).then_some((text, j + 1));
        }
    }
}

fn literal(text: String, at: usize) -> Token {
    Token {
        kind: Kind::Str,
        at,
        text,
    }
}

/// `X["name"](…)`: `X.name(…)`.
fn called_subscripts(toks: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let called = i > 0
            && is(toks.get(i), "[")
            && toks
                .get(i + 1)
                .is_some_and(|t| t.kind == Kind::Str && is_name(&t.text))
            && is(toks.get(i + 2), "]")
            && is(toks.get(i + 3), "(")
            && out
                .last()
                .is_some_and(|t| t.kind == Kind::Ident || is(Some(t), ")"));
        if called {
            out.push(Token {
                kind: Kind::Punct,
                at: toks[i].at,
                text: ".".into(),
            });
            out.push(ident(&toks[i + 1].text, toks[i + 1].at));
            i += 3;
        } else {
            out.push(toks[i].clone());
            i += 1;
        }
    }
    out
}

/// The index of the `)` closing the `(` at `open`, if any.
fn close_of(toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, t) in toks.iter().enumerate().skip(open) {
        if t.kind != Kind::Punct {
            continue;
        }
        match t.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return (t.text == ")").then_some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// `getattr(X, "name"[, default])`, `Reflect.get(X, "name")`: `X.name`,
/// or `name` alone for a namespace of builtins.
fn attribute_lookups(toks: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        if let Some((replacement, next)) = attribute_lookup(&toks, i) {
            out.extend(replacement);
            i = next;
        } else {
            out.push(toks[i].clone());
            i += 1;
        }
    }
    out
}

/// The tokens of one lookup starting at `i`, and the index after it.
fn attribute_lookup(toks: &[Token], i: usize) -> Option<(Vec<Token>, usize)> {
    let t = &toks[i];
    let open = if t.kind == Kind::Ident && t.text == "getattr" {
        i + 1
    } else if t.kind == Kind::Ident
        && t.text == "Reflect"
        && is(toks.get(i + 1), ".")
        && toks.get(i + 2).is_some_and(|g| g.text == "get")
    {
        i + 3
    } else {
        return None;
    };
    if !is(toks.get(open), "(") {
        return None;
    }
    let close = close_of(toks, open)?;
    let comma = (open + 1..close).find(|&j| is(toks.get(j), ","))?;
    let name = toks
        .get(comma + 1)
        .filter(|n| n.kind == Kind::Str && is_name(&n.text))?;
    let object = &toks[open + 1..comma];
    let mut replacement = Vec::new();
    if !is_namespace(object) {
        replacement.extend(object.iter().cloned());
        replacement.push(Token {
            kind: Kind::Punct,
            at: name.at,
            text: ".".into(),
        });
    }
    replacement.push(ident(&name.text, t.at));
    Some((replacement, close + 1))
}

/// Whether `object` is a namespace of builtins: `__builtins__`,
/// `globals()`, `builtins.__dict__`.
fn is_namespace(object: &[Token]) -> bool {
    let names: Vec<&str> = object
        .iter()
        .filter(|t| t.kind == Kind::Ident)
        .map(|t| t.text.as_str())
        .collect();
    !names.is_empty() && names.iter().all(|n| NAMESPACES.contains(n))
}

/// `__builtins__["exec"]`, `globalThis.eval`, `globals()["exec"]`: the
/// name alone.
fn namespace_members(toks: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let ns = t.kind == Kind::Ident && NAMESPACES.contains(&t.text.as_str());
        // `globals()` and `vars()` are called first.
        let after = if ns && is(toks.get(i + 1), "(") && is(toks.get(i + 2), ")") {
            i + 3
        } else {
            i + 1
        };
        let previous_dot = is(out.last(), ".");
        if ns
            && !previous_dot
            && let Some((name, next)) = member_at(&toks, after)
        {
            out.push(ident(&name, t.at));
            i = next;
            continue;
        }
        out.push(t.clone());
        i += 1;
    }
    out
}

/// `["name"]` or `.name` at `j`: the name and the index after it.
fn member_at(toks: &[Token], j: usize) -> Option<(String, usize)> {
    if is(toks.get(j), "[")
        && is(toks.get(j + 2), "]")
        && let Some(s) = toks
            .get(j + 1)
            .filter(|s| s.kind == Kind::Str && is_name(&s.text))
    {
        return Some((s.text.clone(), j + 3));
    }
    if is(toks.get(j), ".")
        && let Some(n) = toks.get(j + 1).filter(|n| n.kind == Kind::Ident)
    {
        return Some((n.text.clone(), j + 2));
    }
    None
}

/// `(a or b)(…)`, `(a || b)(…)`, `(a)(…)`: `a(…)`.
fn fallback_callees(toks: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        // A group, not a call's arguments (`f(a)(b)`, `new Function(s)()`).
        let after_callee = out
            .last()
            .is_some_and(|p: &Token| p.kind == Kind::Ident || is(Some(p), ")") || is(Some(p), "]"));
        if !after_callee
            && is(toks.get(i), "(")
            && let Some(close) = close_of(&toks, i)
            && is(toks.get(close + 1), "(")
            && let Some(first) = fallback_names(&toks[i + 1..close])
        {
            out.push(first);
            i = close + 1;
            continue;
        }
        out.push(toks[i].clone());
        i += 1;
    }
    out
}

/// The first name of `name (or|'||'|?? name)*`, else `None`.
fn fallback_names(inner: &[Token]) -> Option<Token> {
    let first = inner.first().filter(|t| t.kind == Kind::Ident)?;
    let mut rest = &inner[1..];
    while !rest.is_empty() {
        let (op_len, name_at) = match rest {
            [op, ..] if op.kind == Kind::Ident && op.text == "or" => (1, 1),
            [a, b, ..] if is(Some(a), "|") && is(Some(b), "|") => (2, 2),
            [a, b, ..] if is(Some(a), "?") && is(Some(b), "?") => (2, 2),
            _ => return None,
        };
        rest.get(name_at).filter(|t| t.kind == Kind::Ident)?;
        rest = &rest[op_len + 1..];
    }
    Some(first.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::flow::tokens::tokenize;

    fn words(lang: Lang, code: &str) -> String {
        rewrite(lang, tokenize(lang, code))
            .iter()
            .map(|t| match t.kind {
                Kind::Str => format!("{:?}", t.text),
                _ => t.text.clone(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_callee_spelled_through_lookups_and_joins_is_its_name() {
        let py =
            "(getattr(__builtins__, \"ex\" + \"ec\", None) or __builtins__[\"ex\" \"ec\"])(src, g)";
        assert_eq!(words(Lang::Python, py), "exec ( src , g )");
        assert_eq!(
            words(Lang::Python, "getattr(mod, 'url' + 'open')(u).read()"),
            "mod . urlopen ( u ) . read ( )"
        );
        assert_eq!(
            words(Lang::JavaScript, "globalThis['ev' + 'al'](code)"),
            "eval ( code )"
        );
        assert_eq!(
            words(Lang::JavaScript, "Reflect.get(cp, 'exec')(cmd)"),
            "cp . exec ( cmd )"
        );
    }

    #[test]
    fn joined_lists_and_called_subscripts_are_names() {
        assert_eq!(
            words(Lang::JavaScript, r#"cp[["exec", "Sync"].join("")](c)"#),
            "cp . execSync ( c )"
        );
        assert_eq!(
            words(Lang::Python, r#"u = "".join(["ht", "tp://", "h"])"#),
            r#"u = "http://h""#
        );
        // A list of names, a separator, or a subscript not called stays.
        assert_eq!(
            words(Lang::JavaScript, r#"xs.join("")"#),
            r#"xs . join ( "" )"#
        );
        assert_eq!(
            words(Lang::Python, r#"", ".join(["a", "b"])"#),
            r#"", " . join ( [ "a" , "b" ] )"#
        );
        assert_eq!(
            words(Lang::JavaScript, r#"x = cfg["exec"]"#),
            r#"x = cfg [ "exec" ]"#
        );
    }

    #[test]
    fn ordinary_lookups_and_sums_stay_as_written() {
        // A dict's key, a computed attribute, arithmetic, a grouped call.
        assert_eq!(words(Lang::Python, "cfg[\"exec\"]"), "cfg [ \"exec\" ]");
        assert_eq!(
            words(Lang::Python, "getattr(obj, name)(x)"),
            "getattr ( obj , name ) ( x )"
        );
        assert_eq!(words(Lang::Python, "n = a + b"), "n = a + b");
        assert_eq!(words(Lang::Python, "(a + b)(x)"), "( a + b ) ( x )");
        assert_eq!(
            words(Lang::JavaScript, "new Function(s)()"),
            "new Function ( s ) ( )"
        );
    }
}
