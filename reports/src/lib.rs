//! Report tables from the store: per machine and across machines, one row per kernel,
//! dataset and campaign — the original's time, each reference and peer point, the best
//! variant found with its speedup, the winning point in words, the evaluations and wall
//! time spent, and how soon the search came within 5% of its final best — as Markdown,
//! CSV or one self-contained HTML file with SVG plots.
//!
//! Data path: `store::Store::report_rows` → [`model::collect`] → [`text`] tables →
//! [`markdown`], [`csv`] or [`html`] (+ [`plots`]). The store is read only through its API.

pub mod csv;
pub mod html;
pub mod markdown;
pub mod model;
pub mod plots;
pub mod text;

pub use model::{collect, Labeler, Report};

/// The formats `polytune report` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Csv,
    Html,
}

impl Format {
    pub fn render(self, report: &Report) -> String {
        match self {
            Format::Markdown => markdown::render(report),
            Format::Csv => csv::render(report),
            Format::Html => html::render(report),
        }
    }
}
