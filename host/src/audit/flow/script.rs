//! Token-level flow for Python, JavaScript and PowerShell (placeholder).

use std::collections::HashMap;

use super::blocks::Unit;
use super::{Hits, Lang};

pub(crate) struct Engines<'t> {
    text: &'t str,
    states: HashMap<Lang, ()>,
}

impl<'t> Engines<'t> {
    pub fn new(text: &'t str) -> Self {
        Engines {
            text,
            states: HashMap::new(),
        }
    }

    pub fn run_unit(&mut self, lang: Lang, unit: &Unit, hits: &mut Hits) {
        let _ = (lang, unit, hits, self.text, &self.states);
    }
}
