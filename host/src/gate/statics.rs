//! The checks made from the bytes and their types alone, before anything
//! is compiled or instantiated: what the artifact is (1), that it exports
//! `handle` (2, whose type linking checks later), what it imports (3) and
//! what its skill declares (4).

use crate::gate_policy::{Check, FindingClass, GateConfig, Provenance, Status, Verdict};
use crate::grants::{self, Permitter};
use crate::sandbox::inspect::{Bodies, InspectError, Inspection, inspect_with};
use crate::skill::Capabilities;

/// What the static checks look at.
pub(super) struct Input<'a> {
    pub skill: &'a str,
    pub declared: &'a Capabilities,
    /// The skill the handler was written for, and what it declares.
    pub parent: Option<(&'a str, &'a Capabilities)>,
    pub provenance: Provenance,
    pub config: &'a GateConfig,
    /// The size cap: the gate's and the sandbox's, whichever is lower.
    pub max_bytes: usize,
    /// The sandbox's cap on one function body.
    pub max_function_bytes: usize,
}

pub(super) fn pass(check: Check, explanation: impl Into<String>) -> Verdict {
    Verdict {
        check,
        status: Status::Pass,
        class: None,
        explanation: explanation.into(),
        details: Vec::new(),
    }
}

pub(super) fn fail(check: Check, class: FindingClass, explanation: impl Into<String>) -> Verdict {
    Verdict {
        check,
        status: Status::Fail,
        class: Some(class),
        explanation: explanation.into(),
        details: Vec::new(),
    }
}

pub(super) fn skipped(check: Check, explanation: impl Into<String>) -> Verdict {
    Verdict {
        check,
        status: Status::Skipped,
        class: None,
        explanation: explanation.into(),
        details: Vec::new(),
    }
}

/// Check 1: a component (not a core module, not garbage) within the caps.
pub(super) fn artifact(bytes: &[u8], input: &Input<'_>) -> (Verdict, Option<Inspection>) {
    if bytes.len() > input.max_bytes {
        return (
            fail(
                Check::Artifact,
                FindingClass::TooLarge,
                format!(
                    "it is {} bytes, over the cap of {} bytes ([gate] max_artifact_kb, [sandbox] max_component_mb)",
                    bytes.len(),
                    input.max_bytes
                ),
            ),
            None,
        );
    }
    // Function bodies are validated by the compile that follows a pass.
    let inspection = match inspect_with(bytes, Bodies::LeaveToCompiler) {
        Ok(i) => i,
        Err(e) => {
            let class = match &e {
                InspectError::NotComponent(m) if m.contains("core wasm module") => {
                    FindingClass::CoreModule
                }
                _ => FindingClass::Malformed,
            };
            let explanation = match &e {
                InspectError::Invalid(cause) => format!("{e}: {cause}"),
                _ => e.to_string(),
            };
            return (fail(Check::Artifact, class, explanation), None);
        }
    };
    if inspection.largest_function > input.max_function_bytes {
        return (
            fail(
                Check::Artifact,
                FindingClass::TooLarge,
                format!(
                    "one of its functions is {} bytes, over the cap of {} bytes ([sandbox] max_function_kb)",
                    inspection.largest_function, input.max_function_bytes
                ),
            ),
            None,
        );
    }
    let language = inspection
        .language
        .as_deref()
        .map(|l| format!(", built from {l}"))
        .unwrap_or_default();
    (
        pass(
            Check::Artifact,
            format!(
                "a WebAssembly component of {} bytes (cap {} bytes){language}",
                bytes.len(),
                input.max_bytes
            ),
        ),
        Some(inspection),
    )
}

/// Check 2, from the types: it exports the function `handle`. Linking
/// checks the function's type against the handler world later.
pub(super) fn world(inspection: &Inspection) -> Result<(), Verdict> {
    if inspection.exports.iter().any(|e| e == "handle (func)") {
        return Ok(());
    }
    let exports = if inspection.exports.is_empty() {
        "nothing".to_owned()
    } else {
        inspection.exports.join(", ")
    };
    Err(fail(
        Check::World,
        FindingClass::WrongWorld,
        format!(
            "it does not export the function `handle` of the skillhost:skill handler world; it exports {exports}"
        ),
    ))
}

/// `package:name/interface` of an import name, without its version.
fn interface_of(name: &str) -> &str {
    name.split('@').next().unwrap_or(name)
}

/// Interfaces skillhost's linker provides (some only with a grant).
fn provided(interface: &str) -> bool {
    interface.starts_with("wasi:") || interface.starts_with("skillhost:skill/")
}

/// Whether an `[gate.allow_imports]` entry covers `function` of
/// `interface`: a package (`wasi:sockets`), an interface
/// (`wasi:sockets/tcp`) or one function (`skillhost:skill/host#complete`).
fn exemption_covers(entry: &str, interface: &str, function: Option<&str>) -> bool {
    let entry = entry.trim();
    if let Some((iface, f)) = entry.split_once('#') {
        return iface == interface && function == Some(f);
    }
    let entry = entry.trim_end_matches('/');
    interface == entry
        || interface
            .strip_prefix(entry)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Check 3: every import is permitted by pure computation or by a
/// capability the skill declares and its ceiling allows; or the operator
/// let it through for this skill (`[gate.allow_imports]`), which the
/// verdict lists.
pub(super) fn imports(inspection: &Inspection, input: &Input<'_>) -> Verdict {
    let ceiling = input.config.ceiling(input.provenance);
    let declared = grants::used(input.declared);
    let review = review_imports(inspection, input, &declared, &ceiling);
    if review.refused.is_empty() {
        imports_passed(review)
    } else {
        imports_failed(review, input, &declared, &ceiling)
    }
}

/// What check 3 found among a component's imports.
struct ImportReview {
    /// The imports looked at (type imports only name types: not counted).
    count: usize,
    refused: Vec<(FindingClass, String)>,
    /// Refused, but let through by `[gate.allow_imports]`: why, and by what.
    let_through: Vec<String>,
}

/// Each import, and each function of it the component asks for, judged
/// against what the skill may use and what the operator let through.
fn review_imports(
    inspection: &Inspection,
    input: &Input<'_>,
    declared: &[&str],
    ceiling: &[&str],
) -> ImportReview {
    let exempt = input
        .config
        .allow_imports
        .get(input.skill)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut review = ImportReview {
        count: 0,
        refused: Vec::new(),
        let_through: Vec::new(),
    };
    for import in &inspection.imports {
        // `NAME (KIND)`; type imports only name types of the instances.
        let (name, kind) = import.rsplit_once(" (").unwrap_or((import, ""));
        if kind == "type)" {
            continue;
        }
        review.count += 1;
        let interface = interface_of(name);
        if kind != "instance)" {
            review.refused.push((
                FindingClass::UnknownImport,
                format!(
                    "`{name}`: a {} import, which skillhost does not provide",
                    kind.trim_end_matches(')')
                ),
            ));
            continue;
        }
        let functions = inspection
            .import_functions
            .get(name)
            .filter(|f| !f.is_empty());
        let asked: Vec<Option<&str>> = match functions {
            Some(f) => f.iter().map(|f| Some(f.as_str())).collect(),
            None => vec![None],
        };
        for function in asked {
            let Some((class, why)) = import_problem(interface, function, input, declared, ceiling)
            else {
                continue;
            };
            // Only what the sandbox provides (and refuses without a
            // grant) can be let through; anything else would not link.
            let exempted = match class {
                FindingClass::UndeclaredImport => exempt
                    .iter()
                    .find(|e| exemption_covers(e, interface, function)),
                _ => None,
            };
            match exempted {
                Some(entry) => review.let_through.push(format!(
                    "let through by [gate.allow_imports] {} = \"{entry}\": {why}; the sandbox refuses its calls unless the skill is granted them",
                    input.skill
                )),
                None => review.refused.push((class, why)),
            }
        }
    }
    review
}

/// Why `function` of `interface` (the whole interface when `None`) is
/// beyond what the skill may use; `None` when something permits it.
fn import_problem(
    interface: &str,
    function: Option<&str>,
    input: &Input<'_>,
    declared: &[&str],
    ceiling: &[&str],
) -> Option<(FindingClass, String)> {
    let what = match function {
        Some(f) => format!("`{interface}#{f}`"),
        None => format!("`{interface}`"),
    };
    match grants::permitter(interface, function) {
        Permitter::Computation => None,
        Permitter::Capability(key) if declared.contains(&key) && ceiling.contains(&key) => None,
        Permitter::Capability(key) if declared.contains(&key) => Some((
            FindingClass::UndeclaredImport,
            format!(
                "{what} needs the `{key}` capability, which the [gate] {} ceiling does not allow",
                input.provenance
            ),
        )),
        Permitter::Capability(key) => Some((
            FindingClass::UndeclaredImport,
            format!(
                "{what} needs the `{key}` capability, which skill `{}` does not declare",
                input.skill
            ),
        )),
        Permitter::Nothing if provided(interface) => Some((
            FindingClass::UndeclaredImport,
            format!("{what}: no capability permits it"),
        )),
        Permitter::Nothing => Some((
            FindingClass::UnknownImport,
            format!("{what}: skillhost does not provide it"),
        )),
    }
}

/// Check 3 passed: what was let through is listed.
fn imports_passed(review: ImportReview) -> Verdict {
    let count = review.count;
    let mut v = pass(
        Check::Imports,
        match review.let_through.len() {
            0 => format!("{count} imports, each permitted by what the skill may use"),
            n => format!(
                "{count} imports: permitted by what the skill may use, {n} only by the operator's [gate.allow_imports] setting"
            ),
        },
    );
    v.details = review.let_through;
    v
}

/// Check 3 failed: every refused import, then what was let through.
fn imports_failed(
    review: ImportReview,
    input: &Input<'_>,
    declared: &[&str],
    ceiling: &[&str],
) -> Verdict {
    // An import nothing provides is the graver finding.
    let class = if review
        .refused
        .iter()
        .any(|(c, _)| *c == FindingClass::UnknownImport)
    {
        FindingClass::UnknownImport
    } else {
        FindingClass::UndeclaredImport
    };
    let may_use = if declared.is_empty() {
        "nothing beyond computation".to_owned()
    } else {
        declared.join(", ")
    };
    let mut v = fail(
        Check::Imports,
        class,
        format!(
            "{} of its imports are beyond what skill `{}` may use ({may_use}; [gate] {} ceiling: {})",
            review.refused.len(),
            input.skill,
            input.provenance,
            if ceiling.is_empty() {
                "nothing beyond computation".to_owned()
            } else {
                ceiling.join(", ")
            }
        ),
    );
    v.details = review.refused.into_iter().map(|(_, why)| why).collect();
    v.details.extend(review.let_through);
    v
}

/// Check 4: the skill declares no more than the skill the handler was
/// written for, and nothing beyond the ceiling for its provenance.
pub(super) fn capabilities(input: &Input<'_>) -> Verdict {
    let ceiling = input.config.ceiling(input.provenance);
    let mut details = Vec::new();
    let mut class = None;
    if let Some((parent, parent_caps)) = input.parent {
        for beyond in grants::exceeding(input.declared, parent_caps) {
            details.push(format!(
                "declares {beyond}, beyond what `{parent}` (the skill it was written for) declares"
            ));
            class = Some(FindingClass::ExceedsParent);
        }
    }
    for key in grants::used(input.declared) {
        if !ceiling.contains(&key) {
            let what = grants::capability(key)
                .map(|c| c.describe(input.declared).join("; "))
                .unwrap_or_else(|| key.to_owned());
            details.push(format!(
                "declares {what}; the [gate] {} ceiling does not allow `{key}`",
                input.provenance
            ));
            class.get_or_insert(FindingClass::ExceedsCeiling);
        }
    }
    let declared = grants::describe(input.declared);
    match class {
        None => pass(
            Check::Capabilities,
            match input.parent {
                Some((parent, _)) => {
                    format!("declares {declared}: within `{parent}` and the ceiling")
                }
                None => format!("declares {declared}: within the ceiling"),
            },
        ),
        Some(class) => {
            let mut v = fail(
                Check::Capabilities,
                class,
                format!("skill `{}` asks for more than it may have", input.skill),
            );
            v.details = details;
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HANDLE: &str = r#"(core module $m (func (export "f")))
        (core instance $i (instantiate $m))
        (func (export "handle") (canon lift (core func $i "f")))"#;

    /// A component importing `imports` (instance imports by full name,
    /// each with the functions listed) and exporting a `handle`.
    fn component(imports: &[(&str, &[&str])]) -> Vec<u8> {
        let mut text = String::from("(component\n");
        for (name, functions) in imports {
            let funcs: String = functions
                .iter()
                .map(|f| format!("(export \"{f}\" (func))"))
                .collect();
            text.push_str(&format!("(import \"{name}\" (instance {funcs}))\n"));
        }
        text.push_str(HANDLE);
        text.push(')');
        wat::parse_str(text).expect("wat")
    }

    fn input<'a>(declared: &'a Capabilities, config: &'a GateConfig) -> Input<'a> {
        Input {
            skill: "s",
            declared,
            parent: None,
            provenance: Provenance::Installed,
            config,
            max_bytes: 1 << 20,
            max_function_bytes: 1 << 20,
        }
    }

    fn check(bytes: &[u8], input: &Input<'_>) -> Verdict {
        let (v, inspection) = artifact(bytes, input);
        assert_eq!(v.status, Status::Pass, "{v:?}");
        imports(&inspection.expect("inspected"), input)
    }

    #[test]
    fn imports_are_checked_down_to_host_functions() {
        let none = Capabilities::default();
        let config = GateConfig::default();
        let computation = component(&[
            ("wasi:clocks/wall-clock@0.2.6", &["now"]),
            ("wasi:random/random@0.2.6", &["get-random-u64"]),
            ("skillhost:skill/host@0.1.0", &["log"]),
        ]);
        let v = check(&computation, &input(&none, &config));
        assert_eq!(v.status, Status::Pass, "{v:?}");

        let model = component(&[("skillhost:skill/host@0.1.0", &["log", "complete"])]);
        let v = check(&model, &input(&none, &config));
        assert_eq!(v.class, Some(FindingClass::UndeclaredImport), "{v:?}");
        assert_eq!(
            v.details,
            [
                "`skillhost:skill/host#complete` needs the `llm` capability, which skill `s` does not declare"
            ]
        );
        let llm = Capabilities {
            llm: true,
            ..Capabilities::default()
        };
        assert_eq!(check(&model, &input(&llm, &config)).status, Status::Pass);
        // Declared, but over the generated ceiling.
        let generated = Input {
            provenance: Provenance::Generated,
            ..input(&llm, &config)
        };
        let v = check(&model, &generated);
        assert!(v.details[0].contains("[gate] generated ceiling"), "{v:?}");

        let unknown = component(&[("evil:thing/x@1.0.0", &["f"])]);
        let v = check(&unknown, &input(&none, &config));
        assert_eq!(v.class, Some(FindingClass::UnknownImport), "{v:?}");
    }

    #[test]
    fn the_operator_can_let_named_imports_through_and_the_verdict_lists_them() {
        let none = Capabilities::default();
        let sockets = component(&[
            ("wasi:sockets/tcp@0.2.6", &[]),
            ("wasi:sockets/network@0.2.6", &[]),
            ("wasi:filesystem/types@0.2.6", &[]),
        ]);
        let mut config = GateConfig::default();
        let v = check(&sockets, &input(&none, &config));
        assert_eq!(v.class, Some(FindingClass::UndeclaredImport));
        assert_eq!(v.details.len(), 3, "{v:?}");
        // Only the package named: filesystem is still refused.
        config
            .allow_imports
            .insert("s".into(), vec!["wasi:sockets".into()]);
        let v = check(&sockets, &input(&none, &config));
        assert_eq!(v.status, Status::Fail);
        assert_eq!(v.details.len(), 3, "{v:?}");
        assert!(v.details[0].contains("wasi:filesystem/types"), "{v:?}");
        assert!(v.details[1].starts_with("let through"), "{v:?}");
        // A prefix that is not a whole package name lets nothing through.
        config.allow_imports.insert(
            "s".into(),
            vec!["wasi:sock".into(), "wasi:filesystem/types".into()],
        );
        assert_eq!(check(&sockets, &input(&none, &config)).details.len(), 3);
        config.allow_imports.insert(
            "s".into(),
            vec!["wasi:sockets".into(), "wasi:filesystem/types".into()],
        );
        let v = check(&sockets, &input(&none, &config));
        assert_eq!(v.status, Status::Pass, "{v:?}");
        assert!(v.explanation.contains("[gate.allow_imports]"), "{v:?}");
        assert_eq!(v.details.len(), 3);
        // Down to one host function.
        let host = component(&[("skillhost:skill/host@0.1.0", &["log", "complete", "kv-get"])]);
        config
            .allow_imports
            .insert("s".into(), vec!["skillhost:skill/host#complete".into()]);
        let v = check(&host, &input(&none, &config));
        assert_eq!(v.details.len(), 2, "{v:?}");
        assert!(v.details[0].contains("host#kv-get"), "{v:?}");
        config
            .allow_imports
            .insert("s".into(), vec!["skillhost:skill/host".into()]);
        assert_eq!(check(&host, &input(&none, &config)).status, Status::Pass);
        config.allow_imports.insert(
            "s".into(),
            vec!["wasi:sockets".into(), "wasi:filesystem/types".into()],
        );
        // Another skill's setting does not apply.
        let other = Input {
            skill: "t",
            ..input(&none, &config)
        };
        assert_eq!(check(&sockets, &other).status, Status::Fail);
    }

    #[test]
    fn artifacts_are_told_apart() {
        let none = Capabilities::default();
        let config = GateConfig::default();
        let i = input(&none, &config);
        let class = |bytes: &[u8]| artifact(bytes, &i).0.class;
        assert_eq!(class(b"\0asm\x01\0\0\0"), Some(FindingClass::CoreModule));
        assert_eq!(class(b"garbage bytes"), Some(FindingClass::Malformed));
        assert_eq!(
            class(b"\0asm\x0d\0\x01\0garbage"),
            Some(FindingClass::Malformed)
        );
        let small = Input {
            max_bytes: 10,
            ..input(&none, &config)
        };
        assert_eq!(
            artifact(&component(&[]), &small).0.class,
            Some(FindingClass::TooLarge)
        );
        let (v, inspection) = artifact(&component(&[]), &i);
        assert_eq!(v.status, Status::Pass);
        assert!(world(&inspection.expect("inspected")).is_ok());
        let no_handle = wat::parse_str("(component)").expect("wat");
        let (_, inspection) = artifact(&no_handle, &i);
        let v = world(&inspection.expect("inspected")).expect_err("no handle");
        assert_eq!(v.class, Some(FindingClass::WrongWorld));
    }

    #[test]
    fn no_escalation_over_the_parent_or_the_ceiling() {
        let config = GateConfig::default();
        let parent = Capabilities {
            kv: true,
            ..Capabilities::default()
        };
        let declared = Capabilities {
            kv: true,
            llm: true,
            ..Capabilities::default()
        };
        let with_parent = Input {
            parent: Some(("p", &parent)),
            ..input(&declared, &config)
        };
        let v = capabilities(&with_parent);
        assert_eq!(v.class, Some(FindingClass::ExceedsParent), "{v:?}");
        assert_eq!(
            v.details,
            ["declares llm, beyond what `p` (the skill it was written for) declares"]
        );
        let within = Input {
            parent: Some(("p", &declared)),
            ..input(&declared, &config)
        };
        assert_eq!(capabilities(&within).status, Status::Pass);
        // A generated handler's skill: nothing beyond computation by default.
        let generated = Input {
            provenance: Provenance::Generated,
            ..input(&declared, &config)
        };
        let v = capabilities(&generated);
        assert_eq!(v.class, Some(FindingClass::ExceedsCeiling), "{v:?}");
        assert_eq!(v.details.len(), 2, "{v:?}");
    }
}
