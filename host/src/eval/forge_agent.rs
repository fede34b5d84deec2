//! A simulated note-brief agent: a test device for `skillhost eval forge`,
//! not a model. It answers the real model loop's turns for tasks such as
//! "turn the Q3 sales notes into a brief in out/", choosing only among the
//! tools the request offers, by their descriptions (never by a skill's
//! name), and one tool call a turn:
//!
//! 1. find the note: the tool described as finding a workspace file, with
//!    the task as the query, in `notes/`;
//! 2. read it: the tool described as reading a workspace text file;
//! 3. summarize it: the tool described as summarizing a text (the bundled
//!    `text-summarizer`), with the note as `text`;
//! 4. write the summary: the tool described as writing a workspace text
//!    file, to `out/` under the note's file name;
//! 5. answer with the path written.
//!
//! Mistakes, each at a fixed rate and recovered from: a guessed path read
//! before searching ([`GUESS_RATE`]; the read fails), the note of the
//! neighbouring quarter read first ([`WRONG_READ_RATE`]; its heading does
//! not match, so the right one is read next), and an absolute output path
//! ([`BAD_WRITE_RATE`]; refused, then written right).
//!
//! **The mechanism under test.** When a tool describes itself as running
//! exactly the agent's own plan as one pipeline (the forge's description,
//! `Runs A → B → C → D as one pipeline, for tasks like "…"`, with A..D the
//! tools the agent itself picked for steps 1-4) and its example task is the
//! same kind of task (both ask for a brief or a summary), the agent calls
//! that one tool with the task, as a real model prefers one matching tool
//! to four; among several, the example task sharing most words wins. It
//! passes it by with probability [`IGNORE_RATE`], and falls back to the
//! steps above when the call fails.
//!
//! Requests without tools (the forge asking for a skill's name) get a plain
//! refusal, so forged skills keep the forge's own description.
//!
//! Draws are keyed by (seed, task, what), so every arm sees the same luck
//! on the same task and differs only by the tools it is offered.

use std::collections::BTreeSet;

use regex::Regex;
use serde_json::{Value, json};

use super::simulated::splitmix;
use crate::llm::{ChatRequest, ChatResponse, LlmError, Message, Provider, ToolCall, ToolSpec};
use crate::types::{BoxFuture, constant_regex};

pub const GUESS_RATE: f64 = 0.30;
pub const WRONG_READ_RATE: f64 = 0.25;
pub const BAD_WRITE_RATE: f64 = 0.20;
pub const IGNORE_RATE: f64 = 0.10;

/// Words that make a task a brief or a summary.
const KIND: &[&str] = &[
    "brief",
    "briefing",
    "summary",
    "summarize",
    "summarise",
    "recap",
    "digest",
    "condense",
    "distill",
];

pub struct SimulatedBriefAgent {
    seed: u64,
    forged: Regex,
}

/// The tools the agent's plan needs, by name, as picked from the offer.
struct Plan {
    find: String,
    read: String,
    summarize: String,
    write: String,
}

/// One earlier call and what came back.
struct Done<'a> {
    name: &'a str,
    args: Value,
    content: &'a str,
    ok: bool,
}

impl SimulatedBriefAgent {
    pub fn new(seed: u64) -> Self {
        SimulatedBriefAgent {
            seed,
            // After the host's mark of the skill's source (`[forged skill:
            // ...]`), which a skill's own text cannot spell.
            forged: constant_regex(
                r#"^(?:\[[^\]]*\]\s*)?Runs (.+) as one pipeline, for tasks like "(.*)"\.?$"#,
            ),
        }
    }

    fn draw(&self, task: &str, what: &str) -> f64 {
        let mut h = self.seed ^ 0x51ed_27a1_b0f3_c9d5;
        for b in task.bytes().chain([0]).chain(what.bytes()) {
            h = splitmix(h ^ u64::from(b));
        }
        (splitmix(h) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Picks each step's tool from the offer by its description.
    fn plan(tools: &[ToolSpec]) -> Option<Plan> {
        let by = |want: &dyn Fn(&str, &ToolSpec) -> bool| {
            tools
                .iter()
                .find(|t| {
                    let d = t.description.to_lowercase();
                    !d.starts_with("runs ") && want(&d, t)
                })
                .map(|t| t.name.clone())
        };
        Some(Plan {
            find: by(&|d, _| d.starts_with("find the workspace file"))?,
            read: by(&|d, _| d.starts_with("read a text file of the workspace"))?,
            summarize: by(&|d, t| {
                d.contains("summarizes a text") && t.parameters["properties"].get("text").is_some()
            })?,
            write: by(&|d, _| d.starts_with("write a text file in the workspace"))?,
        })
    }

    /// The offered tool that runs the whole plan as one pipeline for this
    /// kind of task, if any (see the module docs).
    fn matching_tool<'t>(&self, tools: &'t [ToolSpec], plan: &Plan, task: &str) -> Option<&'t str> {
        let own = [&plan.find, &plan.read, &plan.summarize, &plan.write];
        let task_words = words(task);
        tools
            .iter()
            .filter_map(|t| {
                let c = self.forged.captures(t.description.trim())?;
                let flow: Vec<&str> = c[1].split(" → ").map(str::trim).collect();
                let same_plan =
                    flow.len() == own.len() && flow.iter().zip(own).all(|(a, b)| *a == b.as_str());
                let example = words(&c[2]);
                (same_plan && is_kind(&example) && is_kind(&task_words))
                    .then(|| (example.intersection(&task_words).count(), t.name.as_str()))
            })
            // Most shared words; among equals, the first name.
            .max_by(|(a, na), (b, nb)| a.cmp(b).then_with(|| nb.cmp(na)))
            .map(|(_, name)| name)
    }

    fn next(&self, req: &ChatRequest) -> Result<Reply, LlmError> {
        if req.tools.is_empty() {
            return Ok(Reply::Answer(
                "The simulated brief agent only carries out tasks with tools.".into(),
            ));
        }
        let task = req
            .messages
            .iter()
            .find_map(|m| match m {
                Message::User(t) => Some(t.clone()),
                _ => None,
            })
            .ok_or_else(|| LlmError::Scripted("the simulated agent got no task".into()))?;
        let done = history(&req.messages);
        let Some(plan) = Self::plan(&req.tools) else {
            return Ok(Reply::Answer(
                "I cannot do this: the tools I need are not offered.".into(),
            ));
        };
        let turn = Turn {
            plan: &plan,
            task: &task,
            done: &done,
        };
        Ok(self.steps(&req.tools, &turn).unwrap_or_else(|reply| reply))
    }

    /// The next reply: each step either gives what the next one needs or
    /// is the reply itself (`Err`).
    fn steps(&self, tools: &[ToolSpec], t: &Turn) -> Result<Reply, Reply> {
        self.shortcut(tools, t)?;
        let found = self.find_step(t)?;
        let note = self.read_step(t, &found)?;
        let summary = summarize_step(t, note)?;
        Ok(self.write_step(t, &found, summary))
    }

    /// One matching tool does it all.
    fn shortcut(&self, tools: &[ToolSpec], t: &Turn) -> Result<(), Reply> {
        let plan = t.plan;
        let plan_names = [&plan.find, &plan.read, &plan.summarize, &plan.write];
        let shortcut = t
            .done
            .iter()
            .find(|d| !plan_names.iter().any(|p| p.as_str() == d.name));
        match shortcut {
            Some(d) if d.ok => Err(Reply::Answer(format!("Done: {}", d.content))),
            None if t.done.is_empty() => match self.matching_tool(tools, plan, t.task) {
                Some(name) if self.draw(t.task, "ignore-forged") >= IGNORE_RATE => {
                    Err(call(name, json!({ "task": t.task })))
                }
                _ => Ok(()),
            },
            // A failed one: do the steps instead.
            _ => Ok(()),
        }
    }

    /// 1. Find the note.
    fn find_step(&self, t: &Turn) -> Result<String, Reply> {
        let (plan, done, task) = (t.plan, t.done, t.task);
        let found = done
            .iter()
            .rev()
            .find(|d| d.name == plan.find && d.ok)
            .map(|d| d.content.trim().to_owned());
        if let Some(found) = found {
            return Ok(found);
        }
        if done.iter().any(|d| d.name == plan.find) {
            return Err(Reply::Answer("I could not find the notes.".into()));
        }
        if done.is_empty() && self.draw(task, "guess") < GUESS_RATE {
            let guess = words(task)
                .into_iter()
                .max_by_key(|w| w.len())
                .unwrap_or_else(|| "notes".into());
            return Err(call(
                &plan.read,
                json!({ "path": format!("notes/{guess}.md") }),
            ));
        }
        Err(call(&plan.find, json!({ "in": "notes/", "query": task })))
    }

    /// 2. Read it (perhaps the neighbouring quarter's first).
    fn read_step<'d>(&self, t: &'d Turn, found: &str) -> Result<&'d Done<'d>, Reply> {
        let (plan, done) = (t.plan, t.done);
        let source = format!("notes/{found}");
        if let Some(note) = done
            .iter()
            .find(|d| d.name == plan.read && d.ok && d.args["path"] == source.as_str())
        {
            return Ok(note);
        }
        let read_since_find = done
            .iter()
            .skip_while(|d| d.name != plan.find)
            .any(|d| d.name == plan.read);
        if !read_since_find
            && let Some(other) = neighbour(found)
            && self.draw(t.task, "wrong-read") < WRONG_READ_RATE
        {
            return Err(call(
                &plan.read,
                json!({ "path": format!("notes/{other}") }),
            ));
        }
        Err(call(&plan.read, json!({ "path": source })))
    }

    /// 4. Write it.
    fn write_step(&self, t: &Turn, found: &str, summary: &Done) -> Reply {
        let (plan, done) = (t.plan, t.done);
        let target = format!("out/{found}");
        if done.iter().any(|d| d.name == plan.write && d.ok) {
            return Reply::Answer(format!("Wrote {target}."));
        }
        let tried = done.iter().any(|d| d.name == plan.write);
        let path = if !tried && self.draw(t.task, "bad-write") < BAD_WRITE_RATE {
            format!("/{target}")
        } else if done.iter().filter(|d| d.name == plan.write).count() >= 2 {
            return Reply::Answer("I could not write the brief.".into());
        } else {
            target
        };
        call(
            &plan.write,
            json!({ "path": path, "content": summary.content }),
        )
    }
}

/// What one turn of the simulated agent decides from.
struct Turn<'a> {
    plan: &'a Plan,
    task: &'a str,
    done: &'a [Done<'a>],
}

/// 3. Summarize.
fn summarize_step<'d>(t: &'d Turn, note: &Done) -> Result<&'d Done<'d>, Reply> {
    let (plan, done) = (t.plan, t.done);
    if let Some(summary) = done.iter().find(|d| d.name == plan.summarize && d.ok) {
        return Ok(summary);
    }
    if done.iter().any(|d| d.name == plan.summarize) {
        return Err(Reply::Answer("The summarizer failed.".into()));
    }
    Err(call(
        &plan.summarize,
        json!({
            "task": "Summarize these notes into a brief",
            "text": note.content,
            "sentences": 3
        }),
    ))
}

enum Reply {
    Answer(String),
    Call(ToolCall),
}

fn call(name: &str, args: Value) -> Reply {
    Reply::Call(ToolCall {
        id: String::new(),
        name: name.to_owned(),
        arguments: args.to_string(),
    })
}

/// Every call so far with its result, in order.
fn history(messages: &[Message]) -> Vec<Done<'_>> {
    let mut calls: Vec<(&ToolCall, Value)> = Vec::new();
    let mut out = Vec::new();
    for m in messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                calls = tool_calls
                    .iter()
                    .map(|c| (c, serde_json::from_str(&c.arguments).unwrap_or(Value::Null)))
                    .collect();
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                if let Some(i) = calls.iter().position(|(c, _)| c.id == *call_id) {
                    let (c, args) = calls.remove(i);
                    out.push(Done {
                        name: &c.name,
                        args,
                        content,
                        ok: !is_error,
                    });
                }
            }
            Message::User(_) => {}
        }
    }
    out
}

/// The same topic's note of the neighbouring quarter (q1↔q2, q3↔q4).
fn neighbour(file: &str) -> Option<String> {
    let rest = file.strip_prefix('q')?;
    let (q, tail) = rest.split_at(rest.char_indices().nth(1)?.0);
    let other = match q {
        "1" => "2",
        "2" => "1",
        "3" => "4",
        "4" => "3",
        _ => return None,
    };
    Some(format!("q{other}{tail}"))
}

fn words(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_owned)
        .collect()
}

fn is_kind(words: &BTreeSet<String>) -> bool {
    KIND.iter().any(|k| words.contains(*k))
}

impl Provider for SimulatedBriefAgent {
    fn name(&self) -> String {
        format!("simulated-brief:{}", self.seed)
    }

    fn chat<'a>(&'a self, req: &'a ChatRequest) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let (text, tool_calls) = match self.next(req)? {
                Reply::Answer(t) => (Some(t), Vec::new()),
                Reply::Call(mut c) => {
                    // Ids only need to be unique within the conversation.
                    c.id = format!("call-{}", req.messages.len());
                    (None, vec![c])
                }
            };
            Ok(ChatResponse {
                text,
                tool_calls,
                ..ChatResponse::default()
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: json!({ "type": "object", "properties": { "text": {}, "task": {} } }),
        }
    }

    fn offer() -> Vec<ToolSpec> {
        vec![
            spec(
                "finder",
                "Find the workspace file whose name best matches a query.",
            ),
            spec("reader", "Read a text file of the workspace."),
            spec(
                "sum",
                "Summarizes a text into its most informative sentences.",
            ),
            spec("writer", "Write a text file in the workspace."),
        ]
    }

    fn ask(agent: &SimulatedBriefAgent, tools: Vec<ToolSpec>, task: &str) -> Reply {
        let req = ChatRequest {
            system: None,
            messages: vec![Message::User(task.to_owned())],
            tools,
            max_tokens: None,
        };
        agent.next(&req).expect("reply")
    }

    #[test]
    fn calls_only_offered_tools_and_declines_without_them() {
        for seed in 0..50 {
            let agent = SimulatedBriefAgent::new(seed);
            let task = "Turn the Q3 sales notes into a brief in out/";
            match ask(&agent, offer(), task) {
                Reply::Call(c) => assert!(offer().iter().any(|t| t.name == c.name), "{}", c.name),
                Reply::Answer(a) => panic!("the first turn calls a tool: {a}"),
            }
            let mut missing = offer();
            missing.retain(|t| t.name != "writer");
            assert!(matches!(ask(&agent, missing, task), Reply::Answer(_)));
        }
    }

    #[test]
    fn a_tool_running_the_whole_plan_is_chosen_by_its_description() {
        let forged = |name: &str, flow: &str, example: &str| {
            spec(
                name,
                &format!("Runs {flow} as one pipeline, for tasks like \"{example}\"."),
            )
        };
        let plan = "finder → reader → sum → writer";
        let mut tools = offer();
        tools.push(forged(
            "zz-other-flow",
            "finder → reader → writer",
            "a brief of Q1 sales",
        ));
        tools.push(forged("zz-other-kind", plan, "count the Q1 sales notes"));
        tools.push(forged(
            "aa-match",
            plan,
            "Make a brief of the Q1 hiring notes",
        ));
        let mut chose = 0;
        for seed in 0..100 {
            let agent = SimulatedBriefAgent::new(seed);
            if let Reply::Call(c) = ask(&agent, tools.clone(), "Q4 hiring notes: a brief in out/") {
                assert!(!c.name.starts_with("zz"), "{}", c.name);
                chose += usize::from(c.name == "aa-match");
            }
        }
        assert!((80..100).contains(&chose), "{chose}");
    }
}
